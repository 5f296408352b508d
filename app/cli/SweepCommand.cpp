// faultline sweep --targets T0,T1,... : pairwise bisection of a group of GPUs to find the faulty
// GPUs and links (core/collectives/Sweep.h). Exit 0 all healthy, 1 something faulty, 2 error.
#include <iostream>
#include <memory>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/collectives/LinkMatrix.h"
#include "core/collectives/Sweep.h"
#include "core/replay/TargetSpec.h"

namespace faultline::cli {

namespace {

struct SweepArgs {
    std::string targets, pattern = "allgather", out;
    uint64_t bytes = uint64_t(1) << 20;
    uint32_t reps = 3;
    uint64_t seed = 1;
    bool allPairs = false, json = false;
};

}  // namespace

CommandRunner addSweepCommand(CLI::App& app)
{
    auto a = std::make_shared<SweepArgs>();
    CLI::App* cmd = app.add_subcommand(
        "sweep",
        "Find the faulty GPUs and links of a group by pairwise transfers in two rounds (or all pairs)");
    cmd->add_option("--targets", a->targets, "the group, comma-separated (sim:MODEL[:link_to=K,...])")
        ->required();
    cmd->add_option("--pattern", a->pattern, "allgather (default), allreduce or sendrecv");
    cmd->add_option("--bytes", a->bytes, "bytes each rank sends per transfer (a multiple of 4)");
    cmd->add_option("--reps", a->reps, "repetitions per pair and direction")->check(CLI::Range(1u, 1000000u));
    cmd->add_option("--seed", a->seed, "seed of the payloads and simulated faults");
    cmd->add_flag("--all-pairs", a->allPairs, "test every pair once instead of two rounds (small groups)");
    cmd->add_option("--out", a->out, "write the result (HDF5, faultline_format=sweep)");
    cmd->add_flag("--json", a->json, "print the result as JSON");
    return [a] {
        SweepOptions o;
        auto targets = parseTargetList(a->targets);
        if (!targets) return failWith(Error{targets.message(), ErrorCode::Usage});
        for (const TargetSpec& t : *targets) o.targets.push_back(t.text);
        auto pattern = parseSweepPattern(a->pattern);
        if (!pattern) return failWith(pattern.error());
        o.pattern = *pattern;
        o.bytes = a->bytes;
        o.reps = a->reps;
        o.seed = a->seed;
        o.allPairs = a->allPairs;
        if (a->out.empty()) o.blockBytes = 0;  // the failing blocks are kept for the results file only
        if (!a->out.empty())
            if (Status st = checkNewOutput(a->out); !st) return failWith(st.error());
        auto report = runSweep(o);
        if (!report) return failWith(report.error());
        const nlohmann::json json = sweepJson(*report);
        if (!a->out.empty())
            if (Status st = writeSweepResults(a->out, *report); !st) return failWith(st.error());
        if (a->json)
            std::cout << json.dump(2) << "\n";
        else
            std::cout << sweepText(*report);
        return report->healthy() ? kExitOk : kExitDiverged;
    };
}

}  // namespace faultline::cli
