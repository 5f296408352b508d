#pragma once
// `faultline plan`: how many clean runs an adaptive campaign (replay --until-rate) needs per op
// and target to rule out a failure rate, and how long they take, from measured per-op run times:
// runs of each op on each target, either measured for the plan or read from an earlier
// campaign's journal. Targets run in parallel and ops one after another on each target, so the
// campaign takes as long as its slowest target.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"
#include "RunRecord.h"

namespace faultline {

struct PlanRow {
    size_t opIndex = 0;
    std::string op, name, target;
    uint64_t runsNeeded = 0;  // clean runs that rule out the rate (runsToRuleOut)
    uint64_t timedRuns = 0;   // runs the time per run is the median of (0: none: unknown)
    double msPerRun = 0;      // median time of one run (worker round trip)
    double seconds = 0;       // runsNeeded x msPerRun
};

struct CampaignPlan {
    double rate = 0, confidence = 0.95;
    std::string source;         // "measured" (runs made for the plan) or "journal" (an earlier campaign's)
    std::string sourcePath;     // the journal read ("" when measured)
    std::vector<PlanRow> rows;  // op order, then target order
    std::vector<std::pair<std::string, double>> targetSeconds;  // per target: its ops one after another
    double seconds = 0;                                         // the slowest target
    bool complete = true;                                       // every (op, target) had a timed run
};

// The plan for `ops` x `targets` from timed runs (runs of other ops or targets, hangs, crashes and
// runs of ops that cannot be replayed are not timings). Errors: a rate or confidence out of range.
Result<CampaignPlan> planCampaign(const std::vector<RunRecord>& runs, const std::vector<size_t>& ops,
                                  const std::vector<std::string>& targets,
                                  const std::vector<std::pair<std::string, std::string>>& opNames,
                                  double rate, double confidence);

// {"rate","confidence","source","source_path","runs_needed_per_op","seconds","complete",
//  "targets":[{"target","seconds"}],"ops":[{"index","op","name","target","runs_needed","timed_runs",
//  "ms_per_run","seconds"}]}
nlohmann::json planJson(const CampaignPlan& plan);
std::string planText(const CampaignPlan& plan);
// "0.12 ms", "45 ms", "12.5 s", "3.2 min", "1.4 h", "2.1 days".
std::string durationText(double seconds);

}  // namespace faultline
