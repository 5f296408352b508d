#pragma once
// `faultline collective TRACE --targets T0,T1,...`: replays the collective ops of a trace
// (all_reduce, all_gather, reduce_scatter, broadcast) on a communicator of targets, rank r
// taking the op's input r, and names the faulty GPUs and directed links.
//
// Simulated ranks (`sim:` targets) run the written-down ring algorithms of CollectiveRing.h on
// the ring order given (default: the target order) and then on its reverse, which exercises
// the other direction of every link: a faulty GPU corrupts hops with both its ring neighbours,
// a faulty link only its own direction. Each run is judged by the invariants, bitwise:
//   all_reduce      every rank holds identical bits, and the result is the golden reduction
//                   (bitwise where the inputs are exact or the op is max/min, else within the
//                   golden model's error bound);
//   reduce_scatter  rank r holds block r of the golden reduction (the same judgement);
//   all_gather      every rank holds exactly the inputs in rank order: each differing block
//                   names its source rank and destination rank;
//   broadcast       every rank holds exactly the root's input (source: the root).
// Attribution: every hop is checked by its receiver against the clean run; corruption that
// entered on the hop (not inherited from upstream) is a failure of the directed link src->dst.
// A GPU is faulty when hops with two or more different partners failed, or when it hung or
// crashed; a directed link is faulty when it failed and neither end is a faulty GPU (a faulty
// link next to a faulty GPU is therefore not named separately). Rates carry Wilson intervals.
//
// The ranks run in this process (runCollectiveReplay with no rank program), one process per
// rank with the chunks relayed through pipes and a watchdog (a rank program: the rank side is
// serveCollectiveRank), or one MPI process per rank (faultline-collective-rank).
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../Result.h"
#include "../replay/Statistics.h"
#include "../trace/Trace.h"
#include "CollectiveRing.h"

namespace faultline {

struct CollectiveOptions {
    std::string tracePath;
    std::vector<std::string> targets;  // one per rank
    std::string ops;                   // op selection (indices, ranges, kinds); "" every collective
    uint32_t reps = 1;
    std::vector<size_t> ring;  // empty: the target order
    bool reverseRing = true;   // also run the reversed ring
    uint64_t seed = 1;
    // Ranks in separate processes: the program and arguments that serve one rank on stdin/stdout
    // (the rank index is appended). Empty: every rank in this process.
    std::vector<std::string> rankCommand;
    double timeoutSeconds = 60;  // watchdog per reply of a rank process
    // cuda: ranks: faultline-worker, started once per rank with --collective-rank (CollectiveNccl.h).
    std::string workerProgram;
};

// One run: an op on one ring, one repetition.
struct CollectiveRun {
    size_t opIndex = 0;
    std::string op;
    size_t ring = 0;  // index into CollectiveReport::rings
    uint32_t rep = 0;
    RunOutcome status = RunOutcome::Ok;  // JSON and text: collectiveStatusName
    std::string error;                   // status Error: the rank's message (naming its device)
    int64_t failedRank = -1;             // the rank that hung or crashed
    std::string judged;                  // identical+bitwise | identical+bound | bitwise | bound | exact
    bool identical = true;               // all_reduce: every rank holds the same bits
    uint64_t violations = 0;             // elements out of the judgement, over all ranks
    std::vector<size_t> ranksOff;        // ranks whose output failed the judgement
    std::vector<std::pair<size_t, size_t>> differingBlocks;  // all_gather/broadcast: (src, dst)
};

// One directed link as the replays used it.
struct CollectiveLink {
    size_t src = 0, dst = 0;
    uint64_t transfers = 0, failures = 0, corruptedBytes = 0, bytes = 0;
    double seconds = 0;
    std::map<std::string, uint64_t> signatures;
    std::string signature;  // the most frequent among failures ("" none)
    RateInterval rate;
    bool faulty = false;
    double gbps() const { return seconds > 0 ? double(bytes) / seconds / 1e9 : 0; }
};

struct CollectiveGpu {
    size_t index = 0;
    bool faulty = false;
    uint64_t transfers = 0, failures = 0, unanswered = 0;
    RateInterval rate;
    std::vector<size_t> failedPartners;
};

struct CollectiveOpInfo {
    size_t index = 0;
    std::string op, name, dtype, reduceOp;
    std::vector<uint64_t> shape;
    int64_t root = -1;
};

struct CollectiveReport {
    CollectiveOptions options;
    std::string mode;  // in-process | processes | mpi
    std::vector<std::string> descriptions;
    std::vector<std::vector<size_t>> rings;
    std::vector<CollectiveOpInfo> ops;
    // The runs listed: every run up to kListedRuns, then only runs that did not pass (up to
    // kListedRuns more); the rest are counted. Memory is bounded by the ops and ranks, not by
    // --reps (addRun).
    std::vector<CollectiveRun> runs;
    uint64_t runsTotal = 0, runsNotListed = 0;
    std::map<std::string, uint64_t> runStatusCounts;  // every run, by status
    std::vector<uint64_t> unansweredByRank;           // runs each rank hung or crashed in
    static constexpr size_t kListedRuns = 10000;
    void addRun(CollectiveRun run);
    std::vector<CollectiveLink> links;  // every directed link used, by (src, dst)
    std::vector<CollectiveGpu> gpus;
    std::vector<std::string> warnings;
    bool linksObservable = true;  // false for NCCL ranks: NCCL hides its hops, links stays empty
    nlohmann::json nccl;          // NCCL ranks: version and each rank's settings (null otherwise)
    std::vector<size_t> faultyGpus() const;
    std::vector<std::pair<size_t, size_t>> faultyLinks() const;
    bool healthy() const;
};

// What a receiver records of one hop (the transport-independent part of a run).
struct CollectiveHop {
    size_t transfer = 0;
    RingArrival arrival;
    double seconds = 0;
};

// The checked setup: the trace's selected collectives and the rings (errors exit 2: fewer than
// two targets, a mix of sim: and cuda: targets, a bad cuda: parameter or a repeated device, a bad --ring, no
// collective selected, an op whose rank count differs from the targets).
struct CollectiveSetup {
    Trace trace;
    std::vector<CollectiveProblem> problems;
    std::vector<std::vector<size_t>> rings;
    std::vector<std::string> descriptions;
    std::vector<std::string> warnings;
    bool nccl = false;  // every target is cuda: (NCCL ranks, no rings)
};
Result<CollectiveSetup> prepareCollectiveReplay(const CollectiveOptions& options);

// A run's status as the collective report spells it (docs/formats.md): ok | diverged | hang |
// crash | error; replay's run outcomes, a mismatch named "diverged".
std::string collectiveStatusName(RunOutcome status);

// Runs every selected op on every ring `reps` times.
Result<CollectiveReport> runCollectiveReplay(const CollectiveOptions& options);

// ---- the parts shared by the transports ----

// Judges a finished run from the ranks' outputs (empty outputs: the run did not finish).
void judgeCollectiveRun(const CollectiveProblem& problem, const std::vector<HostTensor>& outputs,
                        CollectiveRun& run);
// Notes a hop in its run: the first rank that did not answer sets the run's status.
void noteCollectiveHop(CollectiveRun& run, const RingPlan& plan, const CollectiveHop& hop);
// Adds a run's hops to the per-link table.
void addCollectiveHops(std::map<std::pair<size_t, size_t>, CollectiveLink>& links, const RingPlan& plan,
                       const std::vector<CollectiveHop>& hops);
// Fills report.links, report.gpus from the link table (report.options, runs filled).
void judgeCollectiveReport(CollectiveReport& report,
                           std::map<std::pair<size_t, size_t>, CollectiveLink> links);
CollectiveReport startCollectiveReport(const CollectiveOptions& options, const CollectiveSetup& setup,
                                       const std::string& mode);

// The rank side of the process transport: serves rank `self` over JSON lines on `in`/`out`
// until the input ends. A hang or crash of its fault model is real (the orchestrator's watchdog
// records it). Returns the exit code.
int serveCollectiveRank(const CollectiveOptions& options, size_t self, std::FILE* in, std::FILE* out);

// Wire and hop records as JSON (the process and MPI transports).
nlohmann::json ringWireJson(const RingWire& wire);
Result<RingWire> ringWireFromJson(const nlohmann::json& j);
nlohmann::json collectiveHopJson(const CollectiveHop& hop);
Result<CollectiveHop> collectiveHopFromJson(const nlohmann::json& j);

nlohmann::json collectiveJson(const CollectiveReport& report);
std::string collectiveText(const CollectiveReport& report);

}  // namespace faultline
