#pragma once
// The campaign journal (RESULTS.h5.journal.jsonl): a header line saying which campaign it
// belongs to, then one run record per line, appended and flushed to disk (fdatasync) before the
// next run starts, so a killed orchestrator loses at most the run in flight.
//
// One writer at a time: while a campaign has the journal open it holds a write lock on
// PATH.lock (which holds the holder's pid), and a second campaign (or a resume while one runs)
// is refused with that pid. A torn last
// line (a killed writer) is cut off before anything is appended. A write that fails (a full
// disk) is undone, so the journal stays intact up to the last complete run, and reported.
#include <sys/types.h>
#include <cstdint>
#include <functional>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "../Result.h"
#include "RunRecord.h"

namespace faultline {

inline constexpr int kJournalFormatVersion = 1;

// The journal's first line: {"journal":"faultline-campaign","version":1,"trace_digest","targets",
// "ops","reps","seed"}, and "until_rate" for an adaptive campaign (reps 0). A journal of an older
// Faultline has none.
struct JournalHeader {
    int version = kJournalFormatVersion;
    std::string traceDigest;  // traceContentDigest of the trace the campaign replays
    std::vector<std::string> targets;
    std::vector<size_t> ops;
    uint32_t reps = 0;     // 0 with untilRate: adaptive, as many repetitions as it takes
    double untilRate = 0;  // replay --until-rate; 0: a fixed number of repetitions
    uint64_t seed = 0;

    nlohmann::json toJson() const;
    static std::optional<JournalHeader> fromJson(const nlohmann::json& j);
};

class CampaignJournal {
public:
    CampaignJournal() = default;
    CampaignJournal(const CampaignJournal&) = delete;
    CampaignJournal& operator=(const CampaignJournal&) = delete;
    ~CampaignJournal();
    // Opens `path` for appending (created if missing), takes its lock, cuts a torn last line and
    // writes `header` when the file is empty. Errors name the file (a held lock names the pid).
    Status open(const std::string& path, const JournalHeader& header);
    // Appends one record; without an open file it does nothing. Thread-safe. The record reaches
    // the file at once (a killed campaign keeps it) and the disk within kSyncInterval.
    Status append(const RunRecord& r);
    // Flushes what was appended to the disk (also done when the journal is destroyed).
    Status sync();

    static constexpr std::chrono::milliseconds kSyncInterval{1000};

private:
    Status writeLine(const std::string& line);
    Status syncLocked();

    int m_fd = -1;
    int m_lockFd = -1;  // PATH.lock, write-locked while open; removed when the journal closes
    std::string m_path, m_lockPath;
    off_t m_synced = 0;  // the length known to be on disk
    std::chrono::steady_clock::time_point m_lastSync;
    std::mutex m_mutex;
};

// Reads a journal line by line, holding one line at a time: `header` is called once with its
// header (nullopt when it has none) before `run` is called for each run. Torn, unreadable and
// unknown lines and repeated runs (the same target, op and repetition twice) are skipped and
// counted in warnings. The first error a callback returns stops the reading and is returned.
struct JournalVisitor {
    std::function<Status(const std::optional<JournalHeader>&)> header;
    std::function<Status(RunRecord)> run;
};
Status readCampaignJournal(const std::string& path, std::vector<std::string>& warnings,
                           const JournalVisitor& visit);

// What a journal holds: its header (if any) and its runs. Torn, unreadable and unknown lines and
// repeated runs (the same target, op and repetition twice) are skipped and counted in warnings.
struct JournalContents {
    std::optional<JournalHeader> header;
    std::vector<RunRecord> runs;
};
JournalContents readCampaignJournalContents(const std::string& path, std::vector<std::string>& warnings);
// The runs alone (readCampaignJournalContents().runs).
std::vector<RunRecord> readCampaignJournal(const std::string& path, std::vector<std::string>& warnings);

// Whether journaled runs belong to a campaign of these targets (labels), ops and repetitions,
// so that resuming it with them continues the same campaign; the error names the first that does not.
Status checkJournalFits(const std::vector<RunRecord>& runs, const std::vector<std::string>& targets,
                        const std::vector<size_t>& ops, uint32_t reps);
// One run of that check, against the campaign's targets, ops and reps.
Status checkRunFits(const RunRecord& r, const JournalHeader& campaign);
// Whether a journal's header names this trace (digest) and seed. A journal without a header
// (older Faultline) is checked by its runs alone, with a warning. Errors say how to go on.
Status checkJournalHeader(const std::string& path, const std::optional<JournalHeader>& header,
                          const JournalHeader& campaign, std::vector<std::string>& warnings);
// Both, for a whole journal read into memory.
Status checkJournalBelongs(const std::string& path, const JournalContents& journal,
                           const JournalHeader& campaign, std::vector<std::string>& warnings);
// A run that does not fit (checkRunFits) as a refusal to resume, naming the journal.
Error journalRefusal(const std::string& path, const std::string& why);

// A digest (XXH3 128-bit, hex) of a file's bytes: which trace a journal belongs to.
Result<std::string> traceContentDigest(const std::string& path);

}  // namespace faultline
