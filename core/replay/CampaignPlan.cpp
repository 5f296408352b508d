#include "CampaignPlan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "Statistics.h"
#include "StoppingRule.h"

namespace faultline {

Result<CampaignPlan> planCampaign(const std::vector<RunRecord>& runs, const std::vector<size_t>& ops,
                                  const std::vector<std::string>& targets,
                                  const std::vector<std::pair<std::string, std::string>>& opNames,
                                  double rate, double confidence)
{
    if (!(rate >= 1e-7 && rate <= 0.5))
        return Error{"--rate " + rateNumberText(rate) + ": must be a rate between 1e-7 and 0.5",
                     ErrorCode::Usage};
    if (!(confidence >= 0.5 && confidence <= 0.999999))
        return Error{"--confidence " + std::to_string(confidence) + ": must be between 0.5 and 0.999999",
                     ErrorCode::Usage};
    CampaignPlan plan;
    plan.rate = rate;
    plan.confidence = confidence;
    std::map<std::pair<size_t, std::string>, std::vector<double>> timed;  // ms of each timed run
    for (const RunRecord& r : runs) {
        if (r.setupError || r.outcome == RunOutcome::Hang || r.outcome == RunOutcome::Crash || !(r.ms >= 0))
            continue;
        timed[{r.opIndex, r.target}].push_back(r.ms);
    }
    const uint64_t needed = runsToRuleOut(rate, confidence);
    std::map<std::string, double> perTarget;
    for (size_t i = 0; i < ops.size(); ++i)
        for (const std::string& target : targets) {
            PlanRow row;
            row.opIndex = ops[i];
            if (i < opNames.size()) std::tie(row.op, row.name) = opNames[i];
            row.target = target;
            row.runsNeeded = needed;
            if (const auto it = timed.find({ops[i], target}); it != timed.end() && !it->second.empty()) {
                // The median: the first run of an op on a target also builds the references and
                // copies its output, which the thousands of runs after it do not.
                row.timedRuns = it->second.size();
                row.msPerRun = medianOf(it->second);
                row.seconds = double(needed) * row.msPerRun / 1000.0;
            } else {
                plan.complete = false;
            }
            perTarget[target] += row.seconds;
            plan.rows.push_back(std::move(row));
        }
    for (const std::string& target : targets) {
        plan.targetSeconds.emplace_back(target, perTarget[target]);
        plan.seconds = std::max(plan.seconds, perTarget[target]);
    }
    return plan;
}

std::string durationText(double seconds)
{
    char text[32];
    if (seconds < 0.01)
        std::snprintf(text, sizeof text, "%.2f ms", seconds * 1000);
    else if (seconds < 1)
        std::snprintf(text, sizeof text, "%.0f ms", seconds * 1000);
    else if (seconds < 120)
        std::snprintf(text, sizeof text, "%.1f s", seconds);
    else if (seconds < 7200)
        std::snprintf(text, sizeof text, "%.1f min", seconds / 60);
    else if (seconds < 2 * 86400)
        std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
    else
        std::snprintf(text, sizeof text, "%.1f days", seconds / 86400);
    return text;
}

nlohmann::json planJson(const CampaignPlan& plan)
{
    nlohmann::json ops = nlohmann::json::array(), targets = nlohmann::json::array();
    for (const PlanRow& r : plan.rows)
        ops.push_back({{"index", r.opIndex},
                       {"op", r.op},
                       {"name", r.name},
                       {"target", r.target},
                       {"runs_needed", r.runsNeeded},
                       {"timed_runs", r.timedRuns},
                       {"ms_per_run", r.timedRuns ? nlohmann::json(r.msPerRun) : nlohmann::json()},
                       {"seconds", r.timedRuns ? nlohmann::json(r.seconds) : nlohmann::json()}});
    for (const auto& [target, seconds] : plan.targetSeconds)
        targets.push_back({{"target", target}, {"seconds", seconds}});
    return {{"rate", plan.rate},
            {"confidence", plan.confidence},
            {"source", plan.source},
            {"source_path", plan.sourcePath.empty() ? nlohmann::json() : nlohmann::json(plan.sourcePath)},
            {"runs_needed_per_op", runsToRuleOut(plan.rate, plan.confidence)},
            {"seconds", plan.seconds},
            {"complete", plan.complete},
            {"targets", targets},
            {"ops", ops}};
}

std::string planText(const CampaignPlan& plan)
{
    std::ostringstream out;
    out << "plan: rule out a failure rate of " << rateNumberText(plan.rate) << " at "
        << confidenceText(plan.confidence) << ": " << runsToRuleOut(plan.rate, plan.confidence)
        << " clean runs per op and target (fewer where a failure comes first)\n";
    out << "run times: "
        << (plan.source == "journal" ? "read from the journal " + plan.sourcePath
                                     : std::string("measured now, a few runs of each op on each target"))
        << "\n";
    char line[512];
    std::snprintf(line, sizeof line, "  %6s %-12s %-34s %10s %12s %12s\n", "op", "kind", "target", "runs",
                  "per run", "time");
    out << line;
    for (const PlanRow& r : plan.rows) {
        const std::string per = r.timedRuns ? durationText(r.msPerRun / 1000) : std::string("unknown");
        const std::string time = r.timedRuns ? durationText(r.seconds) : std::string("unknown");
        std::snprintf(line, sizeof line, "  %6zu %-12s %-34s %10llu %12s %12s\n", r.opIndex, r.op.c_str(),
                      r.target.c_str(), static_cast<unsigned long long>(r.runsNeeded), per.c_str(),
                      time.c_str());
        out << line;
    }
    for (const auto& [target, seconds] : plan.targetSeconds)
        out << "  " << target << ": " << durationText(seconds) << "\n";
    out << "total: " << durationText(plan.seconds) << " (targets in parallel, ops one after another)";
    if (!plan.complete)
        out << "; some op has no timed run on some target: its time is unknown and not counted";
    out << "\n";
    return out.str();
}

}  // namespace faultline
