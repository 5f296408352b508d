// faultline shrink TRACE --op N --target T --out MIN.h5 [--confidence C] [--budget DURATION]
//                  [--max-runs N] [--seed N] [--timeout SECONDS] [--json] [--allow-external]
// The minimal reproducer of one op's failure on one target (core/replay/Shrink.h): a one-op trace
// with the fewest input elements that still fails at a rate inside the original's interval.
#include <cmath>
#include <iostream>
#include <memory>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/replay/Shrink.h"
#include "core/replay/StoppingRule.h"

namespace faultline::cli {
namespace {

struct ShrinkCliOptions {
    std::string trace, target, out, budget;
    size_t op = 0;
    double confidence = 0.95, timeoutSeconds = 60;
    uint64_t maxRuns = 2000, seed = 1;
    bool json = false, allowExternal = false;
};

int runShrink(const ShrinkCliOptions& o)
{
    auto targets = parseTargetList(o.target);
    if (!targets) return failWith(targets.error());
    if (targets->size() != 1)
        return failWith(Error{"--target takes one target (got '" + o.target + "')", ErrorCode::Usage});
    if (Status st = checkNewOutput(o.out, {o.trace}); !st) return failWith(st.error());
    ShrinkOptions s;
    s.tracePath = o.trace;
    s.outPath = o.out;
    s.opIndex = o.op;
    s.target = targets->front();
    s.confidence = o.confidence;
    s.maxRuns = o.maxRuns;
    if (!o.budget.empty()) {
        auto budget = parseDuration(o.budget);
        if (!budget) return failWith(budget.error());
        s.budget = *budget;
    }
    s.setup.workerProgram = workerProgramPath();
    s.setup.seed = o.seed;
    s.setup.timeout = std::chrono::milliseconds(int64_t(o.timeoutSeconds * 1000));
    s.setup.allowExternal = o.allowExternal;
    s.setup.cancel = installInterruptFlag();
    auto report = shrinkOp(s);
    if (!report) return failWith(report.error());
    if (o.json)
        std::cout << shrinkJson(*report).dump(2) << "\n";
    else
        std::cout << shrinkText(*report);
    return report->reproduced ? kExitOk : kExitDiverged;
}

}  // namespace

CommandRunner addShrinkCommand(CLI::App& app)
{
    auto o = std::make_shared<ShrinkCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "shrink", "Shrink one op's failure on one target to a minimal reproducer (a one-op trace)");
    cmd->add_option("TRACE", o->trace, "trace v1 file")->required();
    cmd->add_option("--op", o->op, "the op's index in the trace")->required();
    cmd->add_option("--target", o->target, "the target it fails on: sim:<model>[:k=v,...], cuda:<index>, cpu")
        ->required();
    cmd->add_option("--out", o->out, "the minimal reproducer to write (trace v1; a new file)")->required();
    cmd->add_option("--confidence", o->confidence, "confidence of the rate intervals (default 0.95)");
    cmd->add_option("--budget", o->budget, "wall-clock budget of the whole shrink: 90s, 10m, 2h");
    cmd->add_option("--max-runs", o->maxRuns,
                    "runs of the original at most (it stops at 20 failures; default 2000); every candidate "
                    "runs at most as many as the original did")
        ->check(CLI::Range(uint64_t(1), uint64_t(10000000)));
    cmd->add_option("--seed", o->seed, "seed for simulated faults (as replay's)");
    cmd->add_option("--timeout", o->timeoutSeconds, "seconds before a run counts as a hang")
        ->check(secondsInRange(0.001, 86400.0));
    cmd->add_flag("--json", o->json, "one JSON document");
    cmd->add_flag("--allow-external", o->allowExternal, "follow external links/storage in the trace");
    return [o] { return runShrink(*o); };
}

}  // namespace faultline::cli
