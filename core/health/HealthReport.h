#pragma once
// Device health for RMA evidence: Xid/SXid events decoded from kernel logs (dmesg, journalctl -k,
// nvidia-bug-report logs), health snapshots from `nvidia-smi -q -x` XML or the live inventory
// (NVML), merged per GPU into flags, counters, an event timeline and a recommendation (reset,
// drain, RMA candidate, and why). `faultline health --json` prints healthReportJson(); the
// evidence bundle stores the same document. Fields are listed in docs/formats.md.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

struct DeviceReport;
struct LocalGpu;

// One field decoded from an Xid's message where NVIDIA documents its layout (e.g. "link" of
// Xid 74, "recovery_action" of Xid 154, "address" of Xid 48/63/64/94/95).
struct XidDecodedField {
    std::string name, value;
};

// One Xid or SXid line of a kernel log.
struct XidEvent {
    enum class Kind { Xid, SXid };
    Kind kind = Kind::Xid;
    int code = 0;  // the Xid (or SXid) number

    // When: `time` in ISO 8601 where the log has a full date (UTC with "Z" from the journal's
    // __REALTIME_TIMESTAMP, local without a zone from dmesg -T), the syslog text where it has no
    // year ("Dec 01 10:00:07"), else ""; `uptimeSeconds` where it carries the kernel's monotonic
    // stamp ("[ 1234.567]") or the journal's __MONOTONIC_TIMESTAMP.
    std::string time;
    std::optional<double> uptimeSeconds;
    // Which boot of the log: 0 for the first seen in the file, counting up when the kernel's
    // stamps go back or the journal's _BOOT_ID changes; `bootId` is the journal's id ("" unknown).
    int boot = 0;
    std::string bootId;

    // Where: PCI bus id normalised to "dddd:bb:dd.f" (lower case, 4-digit domain); MIG instances
    // as the line names them ("" when the line has none).
    std::string busId, gpuInstance, computeInstance;
    std::string device;        // SXid: the NVSwitch device ("nvidia-nvswitch3"), else ""
    std::string uuid, serial;  // from the driver's identity lines before the GPU's first Xid

    std::optional<int64_t> pid;  // absent for "pid='<unknown>'" and lines without a pid
    std::string process;         // name=…, "" when absent
    std::string message;         // the text after the code (and pid/name)
    std::string rawLine;         // the whole log line, capped at kMaxStoredLineBytes
    std::string source;          // "FILE:LINE"

    // The catalogue's entry (resources/xid/xid-catalog.json); known=false keeps unknown codes.
    // immediateAction/investigatoryAction are NVIDIA's bucket names ("RESET_GPU", "WORKFLOW_XID_48").
    bool known = false;
    std::string mnemonic, category;  // "ROBUST_CHANNEL_GPU_ECC_DBE"; "memory", "nvlink", "application", ...
    std::string name, meaning, immediateAction, investigatoryAction;
    std::vector<std::string> architectures;
    std::vector<XidDecodedField> decoded;
};

// One boot a log shows, at its first stamped line (kernel stamp or journal boot id).
struct KernelLogBoot {
    int index = 0;                 // as XidEvent::boot
    std::string bootId;            // the journal's _BOOT_ID ("" unknown)
    std::string time;              // the first line's time, as XidEvent::time ("" none)
    std::optional<double> uptime;  // the first line's kernel stamp
    std::string source;            // "FILE:LINE"
};
inline constexpr size_t kMaxKeptBoots = 10'000;  // per log; more are counted in a warning

// A GPU reset a kernel log shows: a driver line (NVRM) naming the GPU's bus id and saying a reset
// was done ("has been reset", "was (successfully) reset", "Resetting GPU", "GPU reset complete /
// done / succeeded"); a reset asked for ("GPU reset required") is not one.
struct KernelLogReset {
    int boot = 0;                  // as XidEvent::boot
    std::string bootId;            // the journal's _BOOT_ID ("" unknown)
    std::string busId;             // normalised like XidEvent::busId
    std::string time;              // as XidEvent::time ("" none)
    std::optional<double> uptime;  // the line's kernel stamp
    std::string message;           // the driver's text, after "NVRM: "
    std::string source;            // "FILE:LINE"
};
inline constexpr size_t kMaxKeptResets = 10'000;  // per log; more are counted in a warning

// Identity of one GPU, from nvidia-smi XML, NVML or the driver's log lines; "" where unknown.
struct GpuIdentity {
    std::string busId;  // normalised like XidEvent::busId
    std::string uuid, serial, product, architecture;
    std::string boardPartNumber, gpuPartNumber, vbiosVersion, inforomImageVersion, inforomOemObject,
        inforomEccObject;
    std::string driverVersion, cudaVersion;
};

// Health counters of one GPU at one moment. Absent values are "N/A" or not reported.
struct GpuCounters {
    // ECC counters by nvidia-smi's element names, flattened with '.': "sram_correctable",
    // "sram_uncorrectable_parity", "sram_uncorrectable_secded", "dram_uncorrectable",
    // "single_bit.device_memory", "double_bit.total", ...
    std::map<std::string, uint64_t> eccVolatile, eccAggregate;
    // Totals derived from the above (or NVML's totals).
    std::optional<uint64_t> eccCorrectedVolatile, eccUncorrectedVolatile, eccCorrectedAggregate,
        eccUncorrectedAggregate;
    std::optional<bool> eccEnabled;
    // Aggregate uncorrectable SRAM errors by where they occurred ("sram_l2", "sram_sm", ...).
    std::map<std::string, uint64_t> sramUncorrectableSources;
    std::optional<bool> sramThresholdExceeded;

    // Dynamic page retirement (pre-Ampere).
    std::optional<uint64_t> retiredPagesSingleBit, retiredPagesDoubleBit;
    std::optional<bool> retiredPagesPending;

    // Row remapping (Ampere and later). remappedRowsAvailable=false: the section was "N/A".
    bool remappedRowsAvailable = false;
    std::optional<uint64_t> remappedRowsCorrectable, remappedRowsUncorrectable;
    std::optional<bool> remapPending, remapFailure;
    std::map<std::string, uint64_t> rowRemapperHistogram;  // "max", "high", "partial", "low", "none"

    // Telemetry as reported (numbers in C, W, MHz).
    std::optional<double> gpuTemperatureC, memoryTemperatureC, powerDrawW, powerLimitW;
    std::map<std::string, double> clocksMHz;  // "graphics_clock", "sm_clock", "mem_clock", ...
};

// One observation of one GPU: an nvidia-smi XML's <gpu> or a live NVML query.
struct GpuHealthSnapshot {
    std::string source;     // "FILE" (nvidia-smi XML) or "nvml"
    std::string timestamp;  // as the source gives it ("" unknown)
    GpuIdentity identity;
    GpuCounters counters;
    std::string recoveryAction;  // <gpu_recovery_action>: "None", "Reset", "Drain", ... ("" absent)
    std::string bootId;          // the boot it was taken in (BootId.h; a live snapshot's), "" unknown
};

// Ordered by severity: a GPU's recommendation is the most severe of its reasons.
enum class HealthAction { None, Monitor, Reset, Drain, RmaCandidate };

struct HealthReason {
    HealthAction action = HealthAction::None;
    std::string why;  // one sentence naming the evidence (flag, counter, Xid and where)
};

struct HealthFlags {
    bool rowRemapPending = false, rowRemapFailure = false, sramThresholdExceeded = false;
    bool retiredPagesPending = false;
};

// Everything known about one GPU (a bus id seen only in logs is still a GPU).
struct GpuHealthRecord {
    GpuIdentity identity;                      // merged from snapshots and log identity lines
    std::vector<GpuHealthSnapshot> snapshots;  // in input order (e.g. before and after a reset)
    GpuCounters counters;                      // the last snapshot's
    HealthFlags flags;                         // from the last snapshot
    std::vector<XidEvent> events;              // in log order (the kept ones: kMaxKeptEvents)
    std::map<int, uint64_t> xidsNotKept;       // Xids counted beyond the caps, by code
    HealthAction recommendation = HealthAction::None;
    std::vector<HealthReason> reasons;
};

struct HealthReport {
    std::vector<GpuHealthRecord> gpus;         // ordered by bus id
    std::vector<XidEvent> unattributedEvents;  // no bus id (SXids, unparsable PCI fields)
    std::vector<std::string> sources;          // files read, in order
    // The boot of the machine the report was taken on (`faultline health` sets it, BootId.h), ""
    // unknown (a report of files from elsewhere, as `ledger add` builds).
    std::string bootId;
    // Boots the logs show (KernelLogParser.h), log by log; not in the JSON document (the ledger
    // records them as reboots seen in the logs).
    std::vector<KernelLogBoot> boots;
    // GPU resets the logs show, log by log; not in the JSON document (the ledger records them as
    // events of kind "reset").
    std::vector<KernelLogReset> resets;
    std::vector<std::string> warnings;  // tolerated oddities, each once with a count
    // Events counted but not kept (beyond kMaxKeptEvents or kMaxKeptEventBytes across all logs):
    // the total, and those without a GPU (SXids, Xids without a bus id).
    uint64_t eventsNotKept = 0, unattributedNotKept = 0;

    // True when any GPU's recommendation is not None or any event was seen: `faultline health`
    // exits 1 then.
    bool somethingFound() const;
};

struct HealthInputs {
    std::vector<std::string> logFiles;        // dmesg, journalctl -k (text or -o json), bug reports (.gz)
    std::vector<std::string> nvidiaSmiFiles;  // nvidia-smi -q -x output
    std::vector<GpuHealthSnapshot> liveSnapshots;  // e.g. healthSnapshotsFromDevices()
};

// Limits on untrusted input. A longer line is cut (its head kept and parsed) and counted in the
// warnings; a bigger log file (after decompression) or more log text across all inputs, a bigger
// XML file or one with more <gpu> elements or tags is an error naming the file. Events beyond the
// caps on kept events (count or text, across all logs) are counted per GPU and code, not kept;
// the report says so. Identity lines for more than kMaxGpus GPUs are counted, not kept.
inline constexpr size_t kMaxLogLineBytes = 64 * 1024;
inline constexpr size_t kMaxStoredLineBytes = 4 * 1024;
inline constexpr uint64_t kMaxLogBytes = uint64_t(4) << 30;
inline constexpr uint64_t kMaxTotalLogBytes = uint64_t(16) << 30;
inline constexpr size_t kMaxKeptEvents = 100'000;
inline constexpr size_t kMaxKeptEventBytes = size_t(64) << 20;  // raw lines, messages and sources kept
inline constexpr size_t kMaxGpus = 4096;  // <gpu> elements per XML; GPUs of identity lines
inline constexpr uint64_t kMaxXmlBytes = uint64_t(64) << 20;
inline constexpr size_t kMaxXmlTags = 4'000'000;  // '<' in one XML file (about 500 per GPU in nvidia-smi's)

// Reads every input, decodes each event with the Xid catalogue and merges per GPU. An unreadable
// or malformed file is an error "FILE:LINE: problem" (XML: "FILE:LINE: problem" from the
// parser's offset).
Result<HealthReport> collectHealth(const HealthInputs& inputs);

// Events of one GPU (bus id, "" for none), kind and code counted beyond the caps, not kept.
struct EventTally {
    std::string busId;
    XidEvent::Kind kind = XidEvent::Kind::Xid;
    int code = 0;
    uint64_t count = 0;
};

// Merges already parsed events and snapshots (what collectHealth does after reading); `notKept`
// adds the events counted but not kept to their GPUs' counts and recommendations.
HealthReport buildHealthReport(std::vector<XidEvent> events, std::vector<GpuHealthSnapshot> snapshots,
                               const std::vector<EventTally>& notKept = {});

// The live inventory as health snapshots (one per GPU that has NVML data), source "nvml".
std::vector<GpuHealthSnapshot> healthSnapshotsFromDevices(const DeviceReport& devices);
GpuHealthSnapshot healthSnapshotFromGpu(const LocalGpu& gpu, const std::string& driverVersion);

// "none", "monitor", "reset", "drain", "rma_candidate".
const char* healthActionName(HealthAction a);

// The `faultline health --json` document: {"gpus": [...], "unattributed_events": [...], ...}.
nlohmann::json healthReportJson(const HealthReport& report);
// The same document written as it is built, event by event (no whole document in memory): the
// bytes of healthReportJson(report).dump(2) with invalid UTF-8 replaced and DEL and the C1 controls
// escaped as \\u00XX, and a final newline.
void writeHealthReportJson(std::ostream& out, const HealthReport& report);
// One event as it appears in "events" (also one line of the evidence bundle's events.jsonl).
nlohmann::json xidEventJson(const XidEvent& event);
nlohmann::json gpuCountersJson(const GpuCounters& counters);
nlohmann::json gpuIdentityJson(const GpuIdentity& identity);

// The plain-text per-GPU summary `faultline health` prints. Every string from the inputs goes
// through printableText (core/Text.h): control characters and invalid bytes are written as \xHH,
// so no escape sequence from a log or XML reaches the terminal.
std::string healthReportText(const HealthReport& report);
void writeHealthReportText(std::ostream& out, const HealthReport& report);

}  // namespace faultline
