#pragma once
// A replay campaign: ops × targets × repetitions. Each target runs in its own faultline-worker
// process under a watchdog (a hang becomes a `hang` outcome, a crash a `crash` outcome with its
// stderr, and the worker is restarted). Every finished run is appended to a journal and flushed
// before the next starts, so a killed orchestrator loses at most the run in flight, and a
// resumed campaign skips what the journal holds. Outputs are compared with the golden model
// (within the op's error bound), with what the trace's devices recorded, and across targets by
// digest; summaries give rates with Wilson intervals, determinism certificates and verdicts.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"
#include "../trace/Trace.h"
#include "Statistics.h"
#include "TargetSpec.h"
#include "TileSmMap.h"

namespace faultline {

struct CampaignOptions {
    std::string tracePath;
    std::vector<TargetSpec> targets;
    std::string ops;                 // selection: "" all; "3,5-7", op kinds "gemm,softmax"
    uint32_t reps = 3;
    uint64_t seed = 1;
    std::string outPath;             // RESULTS.h5; "" writes no results file
    bool resume = false;             // continue from OUT's journal
    std::chrono::milliseconds timeout{60000};  // per run: longer is a hang
    std::string workerProgram;       // the faultline-worker executable
    bool allowExternal = false;
    std::string scratchDir;          // where workers write outputs ("" = a temp dir)
    // A target known to be healthy: where it and other targets are peers (same peer key), its
    // outputs are the bits the others must reproduce. "" = the peers' majority decides.
    std::string reference;
    unsigned maxRestartsPerTarget = 64;
    // Copy every repetition's outputs to the host. By default a repetition the target found
    // bitwise identical to one already judged (its repetition check) is not copied: it takes that
    // run's judgement (RunRecord::hostCopy false). Copying all catches bits that change on the
    // way from the device to the host (transfer mismatches), at the cost of the copies.
    bool copyAll = false;
};

// One run: (target, op, repetition). outcome: ok | mismatch | hang | crash | error (an error may
// be a device fault, deviceFault).
struct RunRecord {
    std::string target;
    size_t opIndex = 0;
    std::string op, name;
    uint32_t rep = 0;
    std::string outcome;
    double ms = 0;
    std::string digest;        // outputDigest of the outputs (ok/mismatch)
    uint64_t injected = 0;     // sim: elements the defect changed
    // The output is defined to be the golden model's bit for bit (ReplayOutput::goldenExact):
    // judged by bits ("judged":"bitwise" in vsGolden), else within the op's bound ("bound").
    bool goldenExact = false;
    std::string peerKey;       // the worker's Target::peerKey; "" = no peers
    nlohmann::json vsGolden;   // {"judged","differing","mismatches","beyond_tolerance","max_ulp","max_abs_error","signature",...}
    nlohmann::json vsRecorded; // {label: {"mismatches","beyond_tolerance","max_ulp"}}
    nlohmann::json vsRep;      // the target's on-device comparison with an earlier repetition (WorkerProtocol.h)
    // False when the target found the output bitwise identical to an earlier repetition's and it
    // was not copied to the host: digest and judgement are that repetition's.
    bool hostCopy = true;
    // Set by summarizeCampaign for runs that have peers: {"basis":"reference"|"majority"|"none",
    // "equal":BOOL (absent with basis none), "peers":N}. Not journaled.
    nlohmann::json vsPeers;
    std::string error;         // error / crash description
    // An `error` the target reported as fatal: a sticky device error that poisoned the worker's
    // CUDA context (the worker was restarted). Journaled as "device_fault": true.
    bool deviceFault = false;
    std::string stderrTail;    // hang/crash: the worker's last stderr lines
    // Which SM computed each tile of output 0, when the target records it; kept with the first
    // completed run of each op on each target in a campaign (it is the same for every run of a
    // sim target), empty otherwise.
    TileSmMap smMap;

    bool failed() const { return outcome != "ok"; }
    // Failed, or its bits differ from what its peers' reference says they must be.
    bool failedOrPeerMismatch() const
    {
        return failed() || (vsPeers.is_object() && vsPeers.contains("equal") && !vsPeers.value("equal", true));
    }
    nlohmann::json toJson() const;
    static Result<RunRecord> fromJson(const nlohmann::json& j);
};

struct OpTargetStats {
    size_t opIndex = 0;
    std::string op, name, target;
    uint64_t runs = 0, failures = 0, mismatches = 0, hangs = 0, crashes = 0, errors = 0;
    uint64_t deviceFaults = 0;  // errors that were sticky device errors (RunRecord::deviceFault)
    RateInterval rate;
    uint64_t distinctDigests = 0;  // among completed runs; 1 = bitwise reproducible
    uint64_t maxUlp = 0;
    std::string signature;         // most frequent signature kind among mismatches
    uint64_t peerMismatches = 0;   // runs whose bits differ from the peers' reference (counted in failures)
    uint64_t repDiffering = 0;     // runs the target's on-device check found different from an earlier rep
    uint64_t repMaxFlippedBits = 0;
    // Runs where the on-device repetition check and the host's digests disagree: the bits changed
    // between the device and the host, or the device-side comparison is wrong.
    uint64_t transferMismatches = 0;
};

struct TargetSummary {
    std::string target, description;
    bool bitwiseStable = true;
    uint64_t runs = 0, failures = 0;
    RateInterval rate;
    // Determinism certificate: every op's completed runs on this target gave identical bits.
    bool deterministic = true;
    std::vector<size_t> failingOps, reproducingOps;
    std::string peerKey;
    std::vector<size_t> peerSplitOps;  // ops where it and its peers differ and nothing decides who is right
    // healthy | transient | persistent | device-specific (see verdictFor in Campaign.cpp)
    std::string verdict;
    std::string explanation;
};

// Targets with the same peer key that ran an op (not golden-exact runs: those are judged by
// bits against the golden model already). Their outputs must be bitwise identical; the bits
// they must reproduce are the reference target's when it is among them and deterministic, else
// the digest a strict majority of them produced.
struct PeerGroup {
    size_t opIndex = 0;
    std::string peerKey;
    std::vector<std::string> targets;
    std::string basis;            // reference | majority | none
    std::string digest;           // the reference bits' digest ("" with basis none)
    std::vector<std::string> agreeing, differing;  // targets whose runs all match / do not all match
};

// What the campaign knows of a target from its worker's hello.
struct TargetInfo {
    std::string description;
    bool bitwiseStable = true;
    std::string peerKey;
};

struct CampaignReport {
    std::string trace;
    uint32_t reps = 0;
    uint64_t seed = 0;
    std::vector<size_t> ops;
    std::vector<TargetSummary> targets;
    std::vector<OpTargetStats> stats;
    // Per op: groups of targets whose first completed runs gave identical bits.
    std::vector<std::pair<size_t, std::vector<std::vector<std::string>>>> agreement;
    std::vector<PeerGroup> peers;
    std::string reference;
    std::vector<RunRecord> runs;
    std::vector<std::string> warnings;
    bool cancelled = false;
};

// The runs a campaign journal holds; a torn or unreadable line is skipped with a warning.
std::vector<RunRecord> readCampaignJournal(const std::string& path, std::vector<std::string>& warnings);
// Whether journaled runs belong to a campaign of these targets (labels), ops and repetitions,
// so that resuming it with them continues the same campaign; the error names the first that does not.
Status checkJournalFits(const std::vector<RunRecord>& runs, const std::vector<std::string>& targets,
                        const std::vector<size_t>& ops, uint32_t reps);

// Resolves an op selection against the trace: indices and ranges ("0,3-5") and op kinds
// ("gemm"). Ops the golden model cannot run are left out with a warning.
Result<std::vector<size_t>> selectOps(const Trace& trace, const std::string& selection,
                                      std::vector<std::string>& warnings);

// Builds statistics, certificates and verdicts from run records (pure; used after resume too).
// `info` maps target labels to what their workers said of them; `reference` is
// CampaignOptions::reference.
CampaignReport summarizeCampaign(const std::vector<RunRecord>& runs, const std::vector<std::string>& targets,
                                 const std::map<std::string, TargetInfo>& info, const std::string& reference = {});

nlohmann::json campaignJson(const CampaignReport& report);
std::string campaignText(const CampaignReport& report);
// The results file: HDF5 with faultline_format="campaign", /targets, /stats, /runs.
Status writeCampaignResults(const std::string& path, const CampaignReport& report);
// Reads a results file back: campaignJson() of the report it holds. Errors name the file.
Result<nlohmann::json> readCampaignResults(const std::string& path);

using CampaignProgress = std::function<void(uint64_t done, uint64_t total, const std::string& what)>;

class Campaign {
public:
    explicit Campaign(CampaignOptions options) : m_options(std::move(options)) {}
    // Called from the target threads (serialised by the campaign).
    void setProgress(CampaignProgress progress) { m_progress = std::move(progress); }
    // Checked between runs; a cancelled campaign keeps what finished (report.cancelled).
    void setCancelFlag(const std::atomic<bool>* cancel) { m_cancel = cancel; }
    // Runs every target in parallel, one worker process each.
    Result<CampaignReport> run();

    // The journal that goes with a results file.
    static std::string journalPath(const std::string& outPath) { return outPath + ".journal.jsonl"; }

private:
    CampaignOptions m_options;
    CampaignProgress m_progress;
    const std::atomic<bool>* m_cancel = nullptr;
};

}  // namespace faultline
