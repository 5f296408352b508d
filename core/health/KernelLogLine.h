#pragma once
// One line of a text kernel log taken apart: its time stamps, who wrote it and the message. What
// counts as the kernel's (docs/formats.md, "Device health"):
//   dmesg           "[ 1234.567890] msg", "[Tue Dec  1 10:00:00 2026] msg" or a bare "msg": dmesg
//                   reads only the kernel's ring buffer, so these are the kernel's; with -x
//                   ("kern  :err   : [ 1234.5] msg") only facility "kern" is
//   syslog,         "Dec  1 10:00:00 host kernel: msg", "2026-12-01T10:00:00+00:00 host kernel: msg",
//   journalctl      "[ 1234.567890] host kernel: msg" (-o short-monotonic): only the tag "kernel:"
//                   is; "host python3[12]: msg", "host user: msg" (logger) are not
// The message is what follows, without an inner "[ 1234.5]" stamp. A driver line is read only
// where the message starts with it ("NVRM: Xid (", "nvidia-nvswitchN: SXid (", "NVRM: GPU at "),
// so text that merely quotes one, inside any message, is not an event.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline {

struct KernelLogLine {
    std::string time;              // ISO 8601 (dmesg -T, RFC 3339 stamps) or syslog text; "" none
    std::optional<double> uptime;  // the kernel's "[ 1234.567]" stamp
    bool fromKernel = true;        // by the rules above
    std::string_view message;      // a view into the line given to splitKernelLogLine
};

KernelLogLine splitKernelLogLine(std::string_view line);

// A journal entry's MESSAGE without a leading "[ 1234.5]" stamp (the journal's own are kept).
std::string_view stripKernelStamp(std::string_view message);

// "Tue Dec  1 10:00:00 2026" (dmesg -T) as "2026-12-01T10:00:00"; "" when it is not one.
std::string ctimeToIso(std::string_view text);
// Microseconds since the epoch as "2026-12-01T10:00:00.123456Z".
std::string epochMicrosToIso(uint64_t micros);

}  // namespace faultline
