// faultline explore TRACE --op N --targets T,... [--vary scale,block,dtype,placement] [--runs N]
//                   [--confidence C] [--seed N] [--timeout SECONDS] [--json] [--out RESULT.h5]
// One op replayed around its recorded inputs: the failure rate per condition and target, and the
// conditions under which each target's defect fired and never did (core/replay/Explore.h).
#include <iostream>
#include <memory>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/replay/Explore.h"

namespace faultline::cli {
namespace {

struct ExploreCliOptions {
    std::string trace, targets, out;
    std::vector<std::string> vary{"scale", "block", "dtype", "placement"};
    size_t op = 0;
    uint64_t runs = 40, seed = 1;
    double confidence = 0.95, timeoutSeconds = 60;
    bool json = false, allowExternal = false;
};

int runExplore(const ExploreCliOptions& o)
{
    auto targets = parseTargetList(o.targets);
    if (!targets) return failWith(targets.error());
    if (!o.out.empty())
        if (Status st = checkNewOutput(o.out, {o.trace}); !st) return failWith(st.error());
    ExploreOptions e;
    e.tracePath = o.trace;
    e.opIndex = o.op;
    e.targets = *targets;
    e.vary = o.vary;
    e.runs = o.runs;
    e.confidence = o.confidence;
    e.setup.workerProgram = workerProgramPath();
    e.setup.seed = o.seed;
    e.setup.timeout = std::chrono::milliseconds(int64_t(o.timeoutSeconds * 1000));
    e.setup.allowExternal = o.allowExternal;
    e.setup.cancel = installInterruptFlag();
    auto report = exploreOp(e);
    if (!report) return failWith(report.error());
    const nlohmann::json j = exploreJson(*report);
    if (!o.out.empty())
        if (Status st = writeJsonResults(o.out, "explore", j); !st) return failWith(st.error());
    if (o.json)
        std::cout << j.dump(2) << "\n";
    else
        std::cout << exploreText(*report);
    if (report->cancelled) return kExitError;
    return report->anyFailure() ? kExitDiverged : kExitOk;
}

}  // namespace

CommandRunner addExploreCommand(CLI::App& app)
{
    auto o = std::make_shared<ExploreCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "explore",
        "Replay one op around its recorded inputs: the failure rate per condition (magnitude, "
        "sub-block, dtype) and where each target's defect fires");
    cmd->add_option("TRACE", o->trace, "trace v1 file")->required();
    cmd->add_option("--op", o->op, "the op's index in the trace")->required();
    cmd->add_option("--targets", o->targets, "comma-separated: cpu, sim:<model>[:k=v,...], cuda:<index>")
        ->required();
    cmd->add_option("--vary", o->vary, "conditions: scale, block, dtype, placement (default all)")
        ->delimiter(',');
    cmd->add_option("--runs", o->runs, "runs per condition and target (default 40)")
        ->check(CLI::Range(uint64_t(1), uint64_t(1000000)));
    cmd->add_option("--confidence", o->confidence, "confidence of the rate intervals (default 0.95)");
    cmd->add_option("--seed", o->seed, "seed for simulated faults (as replay's)");
    cmd->add_option("--timeout", o->timeoutSeconds, "seconds before a run counts as a hang")
        ->check(secondsInRange(0.001, 86400.0));
    cmd->add_option("--out", o->out, "the report as an HDF5 results file (a new file)");
    cmd->add_flag("--json", o->json, "one JSON document");
    cmd->add_flag("--allow-external", o->allowExternal, "follow external links/storage in the trace");
    return [o] { return runExplore(*o); };
}

}  // namespace faultline::cli
