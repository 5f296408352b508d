#pragma once
// Which boot of a machine a health report was taken in: Linux's random boot id, the same
// `_BOOT_ID` journald writes (without dashes there), so snapshots, events and reboots line up.
#include <string>

namespace faultline {

inline constexpr const char* kBootIdPath = "/proc/sys/kernel/random/boot_id";

// The boot id in `path` (its first line, at most 64 bytes, lower case, dashes removed as journald
// writes it); "" when it cannot be read or is not one.
std::string readBootId(const std::string& path = kBootIdPath);

}  // namespace faultline
