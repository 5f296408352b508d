#pragma once
// One op's failure rate on one target, measured through a campaign (Campaign.h: the worker
// process, its watchdog and the judgement of every run) and repeated until a caller's rule
// decides it: the measurements of `faultline shrink` and `faultline explore`.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "../Result.h"
#include "../io/ScratchDirectory.h"
#include "Statistics.h"
#include "TargetSpec.h"

namespace faultline {

// Where and how the probe's campaigns run.
struct RateProbeSetup {
    std::string workerProgram;  // the faultline-worker executable
    std::string scratchDir;     // where workers write outputs (exists; the caller removes it)
    uint64_t seed = 1;          // the campaigns' --seed: the same runs fire again with the same seed
    std::chrono::milliseconds timeout{60000};
    bool allowExternal = false;
    const std::atomic<bool>* cancel = nullptr;
};

// Where setup.scratchDir is empty, creates a scratch directory ("<prefix>XXXX" in the system's
// temporary directory), points setup.scratchDir at it and returns it (the caller keeps it alive:
// it is removed when destroyed); nullopt when the setup names one. Errors (Io) say what the
// directory is for (`what`).
Result<std::optional<ScratchDirectory>> ensureScratchDirectory(RateProbeSetup& setup,
                                                               const std::string& prefix,
                                                               const std::string& what);

// Stop once this returns true for the runs and failures so far.
using RateRule = std::function<bool(uint64_t runs, uint64_t failures)>;

struct RateMeasure {
    uint64_t runs = 0, failures = 0;
    RateInterval interval;  // Wilson, at the probe's confidence
    double msPerRun = 0;    // median time of a run (the worker round trip), 0 when none ran
    bool decided = false;   // the rule was reached (false: the budget ran out or it was cancelled)
    // Targets that record their SMs: per SM, the failed runs with differing elements in its tiles
    // (vs_golden.sms of the runs the report lists), and how many failed runs said where.
    std::map<int32_t, uint64_t> failedRunsBySm;
    uint64_t failedRunsWithSms = 0;
    // The golden model refuses the op's inputs (a cut the op cannot take): no run counted.
    bool replayable = true;
    std::string notReplayable;
};

// Runs op `opIndex` of `tracePath` on `target` until `rule` says so, the budget (0: none) is
// spent or the probe is cancelled. Errors: the target cannot start, the trace cannot be read
// (a trace the golden model cannot replay is no error: replayable false).
Result<RateMeasure> measureOpRate(const std::string& tracePath, size_t opIndex, const TargetSpec& target,
                                  const RateRule& rule, double confidence, std::chrono::milliseconds budget,
                                  const RateProbeSetup& setup);

// The rule of a candidate judged against a reference interval (shrink: the original rate's):
// decided once its own interval at `confidence` lies wholly outside [low, high] (it does not
// reproduce), or once it has run `runs` times (then it reproduces when its rate is inside).
RateRule insideIntervalRule(const RateInterval& reference, uint64_t runs, double confidence);
// Whether a measurement decided by insideIntervalRule reproduces the reference.
bool reproducesInside(const RateMeasure& m, const RateInterval& reference);

}  // namespace faultline
