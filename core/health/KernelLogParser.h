#pragma once
// Xid and SXid events from kernel logs: dmesg (with "[ 1234.567]" stamps, -T human times or none),
// journalctl -k (text, with "-- Boot ... --" separators, or -o json with MESSAGE as a string or a
// byte array), syslog files and nvidia-bug-report logs (plain or gzip). Also the identity lines the
// driver prints before a GPU's first Xid ("NVRM: GPU at PCI:...: GPU-<uuid>", "NVRM: GPU Board
// Serial Number: ..."), attached to that GPU's events.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../Result.h"
#include "HealthReport.h"

namespace faultline {

struct KernelLogContents {
    std::vector<XidEvent> events;                   // in log order, not yet decorated from the catalogue
    std::map<std::string, GpuIdentity> identities;  // by normalised bus id: uuid and serial from the log
    std::vector<std::string> warnings;              // each problem once, with a count
    uint64_t lines = 0;
    bool journalJson = false;
};

class KernelLogParser {
public:
    explicit KernelLogParser(std::string source);

    // One line (without its line ending); `cut` says the reader kept only its head. An Xid or SXid
    // line that cannot be read is an error "FILE:LINE: problem".
    Status addLine(std::string_view line, uint64_t lineNumber, bool cut);
    KernelLogContents finish();

private:
    struct Meta {
        std::string time;
        std::optional<double> uptime;
        std::string bootId;
    };
    Status addJournalJson(std::string_view line, uint64_t lineNumber, bool cut);
    Status addMessage(std::string_view text, std::string_view rawLine, const Meta& meta, uint64_t lineNumber);
    Status parseXid(std::string_view at, std::string_view rawLine, const Meta& meta, uint64_t lineNumber);
    Status parseSxid(std::string_view line, size_t at, std::string_view rawLine, const Meta& meta,
                     uint64_t lineNumber);
    void noteBoot(const Meta& meta);
    Status checkBudget(uint64_t lineNumber) const;
    XidEvent& newEvent(std::string_view rawLine, const Meta& meta, uint64_t lineNumber);
    Error lineError(uint64_t lineNumber, const std::string& problem) const;

    std::string m_source;
    KernelLogContents m_out;
    enum class Mode { Unknown, Text, Json } m_mode = Mode::Unknown;
    int m_boot = 0;
    bool m_sawStamp = false;
    double m_lastUptime = 0;
    std::string m_lastBootId;
    bool m_bootMarkerPending = false;
    bool m_sawContent = false;
    std::string m_lastGpuAtBus;  // the bus id of the last "GPU at" line (the serial line follows it)
    size_t m_storedBytes = 0;
    uint64_t m_cutLines = 0, m_badJsonLines = 0, m_nonMessageLines = 0;
};

// Reads a whole log file (plain or gzip) within the limits of HealthReport.h.
Result<KernelLogContents> readKernelLog(const std::string& path);
// The same from memory (tests, fuzzing); `name` names it in errors.
Result<KernelLogContents> parseKernelLog(std::string bytes, const std::string& name);

// "Tue Dec  1 10:00:00 2026" (dmesg -T) as "2026-12-01T10:00:00"; "" when it is not one.
std::string ctimeToIso(std::string_view text);
// Microseconds since the epoch as "2026-12-01T10:00:00.123456Z".
std::string epochMicrosToIso(uint64_t micros);

}  // namespace faultline
