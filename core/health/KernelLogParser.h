#pragma once
// Xid and SXid events from kernel logs: dmesg (with "[ 1234.567]" stamps, -T human times or none),
// journalctl -k (text, with "-- Boot ... --" separators, or -o json with MESSAGE as a string or a
// byte array), syslog files and nvidia-bug-report logs (plain or gzip). Also the identity lines the
// driver prints before a GPU's first Xid ("NVRM: GPU at PCI:...: GPU-<uuid>", "NVRM: GPU Board
// Serial Number: ..."), attached to that GPU's events; GPU resets the driver reports
// (KernelLogReset); and reboots: a boot starts where the kernel's stamps go back, the journal's
// boot id changes, journalctl's "-- Boot ... --" separator, or the kernel's banner ("Linux
// version ...", or "Command line: ..." without one before it) after other lines.
//
// Only the kernel's lines count (KernelLogLine.h; journal entries with _TRANSPORT=kernel): a line
// another process wrote that mentions "NVRM: Xid" is counted in a warning, never an event. A driver
// line that cannot be read (cut short, an Xid out of range, no PCI field) is a warning naming
// FILE:LINE, and reading goes on.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "../Result.h"
#include "HealthReport.h"
#include "KernelLogLine.h"

namespace faultline {

struct KernelLogContents {
    std::vector<XidEvent> events;  // kept, in log order, not yet decorated from the catalogue
    std::map<std::string, GpuIdentity> identities;  // by normalised bus id: uuid and serial from the log
    std::vector<std::string> warnings;              // each problem once, with a count
    std::vector<EventTally> notKept;                // events beyond the caps, counted
    std::vector<KernelLogBoot> boots;               // in log order (kMaxKeptBoots)
    std::vector<KernelLogReset> resets;             // in log order (kMaxKeptResets)
    uint64_t eventsNotKept = 0;
    uint64_t lines = 0;
    bool journalJson = false;
};

// The caps of HealthReport.h shared by every log of one report: log text read, events and their
// text kept, GPUs named by identity lines.
struct KernelLogBudget {
    uint64_t logBytes = 0;
    size_t keptEvents = 0, keptBytes = 0, representatives = 0;
    std::set<std::tuple<std::string, int, int>> keptKinds;  // (bus id, kind, code) with a kept event
    std::set<std::string> identityGpus;
};

class KernelLogParser {
public:
    // `budget` is shared with the other logs of the same report; null: this log's own.
    explicit KernelLogParser(std::string source, KernelLogBudget* budget = nullptr);

    // One line (without its line ending); `cut` says the reader kept only its head. Only a journal
    // line that is not JSON is an error "FILE:LINE: problem".
    Status addLine(std::string_view line, uint64_t lineNumber, bool cut);
    KernelLogContents finish();

private:
    struct Meta {
        std::string time;
        std::optional<double> uptime;
        std::string bootId;
    };
    Status addJournalJson(std::string_view line, uint64_t lineNumber, bool cut);
    void addMessage(std::string_view message, bool fromKernel, std::string_view rawLine, const Meta& meta,
                    uint64_t lineNumber);
    void parseXid(std::string_view at, std::string_view rawLine, const Meta& meta, uint64_t lineNumber);
    void parseSxid(std::string_view device, std::string_view at, std::string_view rawLine, const Meta& meta,
                   uint64_t lineNumber);
    void noteIdentity(std::string_view message, const Meta& meta);
    void noteBoot(const Meta& meta);
    // "Linux version ..." / "Command line: ..." (the kernel's first lines): a new boot.
    void noteBootBanner(std::string_view message, const Meta& meta);
    // Whether `message` (after "NVRM: ") says a GPU was reset; if so it is kept.
    bool noteReset(std::string_view message, const Meta& meta);
    void malformed(uint64_t lineNumber, const std::string& problem, std::string_view rawLine);
    XidEvent makeEvent(std::string_view rawLine, const Meta& meta, uint64_t lineNumber) const;
    size_t estimatedBytes(std::string_view rawLine, std::string_view message, uint64_t lineNumber) const;
    // Whether an event of this GPU, kind and code and about `bytes` of text fits the budget (then
    // its room is taken), else it is counted; decided before its strings are built.
    bool admit(const std::string& bus, XidEvent::Kind kind, int code, size_t bytes);
    void store(XidEvent&& e, size_t admitted);
    Error lineError(uint64_t lineNumber, const std::string& problem) const;

    std::string m_source;
    std::unique_ptr<KernelLogBudget> m_ownBudget;
    KernelLogBudget* m_budget;
    KernelLogContents m_out;
    std::map<std::tuple<std::string, int, int>, uint64_t> m_tallies;
    enum class Mode { Unknown, Text, Json } m_mode = Mode::Unknown;
    int m_boot = 0;
    bool m_sawStamp = false;
    double m_lastUptime = 0;
    std::string m_lastBootId;
    bool m_bootMarkerPending = false;
    bool m_sawContent = false;
    std::string m_lastGpuAtBus;  // the bus id of the last "GPU at" line (the serial line follows it)
    struct LastSxid {
        bool valid = false, kept = false;
        int code = 0;
        std::string bus;
    } m_lastSxid;  // the last Xid/SXid line was this SXid: its "Data {...}" line joins it
    struct Mentions {
        uint64_t count = 0, firstLine = 0;
    } m_foreignXid, m_foreignOther;
    uint64_t m_cutLines = 0, m_badJsonLines = 0, m_nonMessageLines = 0;
    uint64_t m_malformed = 0, m_identitiesNotKept = 0, m_bootsNotKept = 0, m_resetsNotKept = 0;
    bool m_sawMessage = false;     // a message before this one (a banner after it is a new boot)
    bool m_lastWasBanner = false;  // the previous kernel message was "Linux version ..."

    uint64_t m_lineNumber = 0;  // of the line being read
};

// Reads a whole log file (plain or gzip) within the limits of HealthReport.h; `budget` as above.
Result<KernelLogContents> readKernelLog(const std::string& path, KernelLogBudget* budget = nullptr);
// The same from memory (tests, fuzzing); `name` names it in errors.
Result<KernelLogContents> parseKernelLog(std::string bytes, const std::string& name,
                                         KernelLogBudget* budget = nullptr);

}  // namespace faultline
