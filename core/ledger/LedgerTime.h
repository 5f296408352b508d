#pragma once
// Times in the ledger: UTC ISO 8601 text, which sorts as time does.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace faultline {

// `t` as "2026-12-01T10:00:00Z".
std::string isoUtc(std::chrono::system_clock::time_point t);
std::string isoUtcNow();

// A source's time as the ledger stores it in `at`: ISO 8601 kept as it is ("2026-12-01T10:00:00Z",
// or local "2026-12-01T10:00:00" from dmesg -T), ctime text ("Tue Dec  1 10:00:00 2026", as
// nvidia-smi writes its timestamp) as ISO 8601; nullopt for text without a full date (syslog's
// "Dec 01 10:00:07").
std::optional<std::string> ledgerTime(std::string_view text);

// Whether `text` starts with a date "YYYY-MM-DD" (what --since/--until take).
bool isIsoDate(std::string_view text);

// Days from `a` to `b` (both ISO 8601 with at least a date; the rest up to seconds is read,
// a zone is ignored); nullopt when either is not one.
std::optional<double> daysBetween(std::string_view a, std::string_view b);

}  // namespace faultline
