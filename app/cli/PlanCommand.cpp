// faultline plan TRACE --rate RATE --targets T,... [--confidence C] [--ops SEL] [--from RESULTS.h5]
//                [--measure-runs N] [--json] [--allow-external]
// How many runs `replay --until-rate RATE` needs per op and target and how long they take, from
// run times measured now (a few runs of each selected op on each target) or read from the journal
// beside an earlier campaign's results file.
#include <filesystem>
#include <iostream>
#include <memory>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/replay/Campaign.h"
#include "core/replay/CampaignPlan.h"
#include "core/replay/StoppingRule.h"

namespace faultline::cli {
namespace {

struct PlanOptions {
    std::string trace, targets, ops, from, rateText;
    double confidence = 0.95;
    uint32_t measureRuns = 3;
    bool json = false, allowExternal = false;
};

int runPlan(const PlanOptions& o)
{
    // Checked before anything is measured.
    auto rate = parseRate(o.rateText, "--rate");
    if (!rate) return failWith(rate.error());
    if (auto checked = planCampaign({}, {}, {}, {}, *rate, o.confidence); !checked)
        return failWith(checked.error());
    auto targets = parseTargetList(o.targets);
    if (!targets) return failWith(targets.error());
    OpenOptions open;
    open.allowExternal = o.allowExternal;
    auto trace = readTrace(o.trace, open);
    if (!trace) return failWith(trace.error());
    std::vector<std::string> warnings;
    auto ops = selectOps(*trace, o.ops, warnings);
    if (!ops) return failWith(ops.error());
    std::vector<std::pair<std::string, std::string>> names;
    for (size_t index : *ops)
        for (const TraceOp& op : trace->ops)
            if (op.index == index) names.emplace_back(op.op, op.name);
    std::vector<std::string> labels;
    for (const TargetSpec& t : *targets) labels.push_back(t.text);

    std::vector<RunRecord> runs;
    std::string source = "measured", sourcePath;
    if (!o.from.empty()) {
        source = "journal";
        sourcePath = Campaign::journalPath(o.from);
        if (!std::filesystem::exists(sourcePath))
            return failWith(fileError(o.from,
                                      "has no journal beside it (" + sourcePath +
                                          "): plan reads run times from the journal a campaign wrote",
                                      ErrorCode::Usage));
        runs = readCampaignJournal(sourcePath, warnings);
    } else {
        CampaignOptions c;
        c.tracePath = o.trace;
        c.targets = *targets;
        c.ops = o.ops;
        c.reps = o.measureRuns;
        c.workerProgram = workerProgramPath();
        c.allowExternal = o.allowExternal;
        Campaign campaign(c);
        campaign.setCancelFlag(installInterruptFlag());
        auto report = campaign.run();
        if (!report) return failWith(report.error());
        if (report->cancelled) {
            std::cerr << "plan cancelled\n";
            return kExitError;
        }
        runs = std::move(report->runs);
    }
    auto plan = planCampaign(runs, *ops, labels, names, *rate, o.confidence);
    if (!plan) return failWith(plan.error());
    plan->source = source;
    plan->sourcePath = sourcePath;
    if (o.json) {
        nlohmann::json j = planJson(*plan);
        j["trace"] = o.trace;
        j["warnings"] = warnings;
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << planText(*plan);
        for (const std::string& w : warnings) std::cout << "warning: " << w << "\n";
    }
    return kExitOk;
}

}  // namespace

CommandRunner addPlanCommand(CLI::App& app)
{
    auto o = std::make_shared<PlanOptions>();
    CLI::App* cmd = app.add_subcommand(
        "plan", "How many runs and how much time `replay --until-rate RATE` needs per op and target");
    cmd->add_option("TRACE", o->trace, "trace v1 file")->required();
    cmd->add_option("--rate", o->rateText, "the failure rate to rule out: 1e-3, 0.001 or 0.1%")->required();
    cmd->add_option("--targets", o->targets, "comma-separated: cpu, sim:<model>[:k=v,...], cuda:<index>")
        ->required();
    cmd->add_option("--confidence", o->confidence, "confidence of the bound (default 0.95)");
    cmd->add_option("--ops", o->ops,
                    "op selection: indices, ranges, op kinds (e.g. 0,3-5,gemm); default all");
    CLI::Option* from = cmd->add_option(
        "--from", o->from, "read run times from the journal beside this results file instead of measuring");
    cmd->add_option("--measure-runs", o->measureRuns, "runs of each op on each target to time (default 3)")
        ->check(CLI::Range(1u, 1000u))
        ->excludes(from);
    cmd->add_flag("--json", o->json, "one JSON document");
    cmd->add_flag("--allow-external", o->allowExternal, "follow external links/storage in the trace");
    return [o] { return runPlan(*o); };
}

}  // namespace faultline::cli
