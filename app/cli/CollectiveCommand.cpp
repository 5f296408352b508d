// faultline collective TRACE --targets T0,T1,... : replays the trace's collectives on a
// communicator of targets and names the faulty GPUs and directed links
// (core/collectives/CollectiveReplay.h). Exit 0 all healthy, 1 something faulty, 2 error.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/collectives/CollectiveReplay.h"
#include "core/replay/TargetSpec.h"

namespace faultline::cli {

namespace {

struct CollectiveArgs {
    std::string trace, targets, ops, ring, out;
    uint32_t reps = 1;
    uint64_t seed = 1;
    double timeout = 60;
    bool json = false, inProcess = false;
    int64_t serveRank = -1;
};

// The command line a rank process runs: this executable serving one rank of the same replay.
std::vector<std::string> rankCommand(const CollectiveArgs& a, const CollectiveOptions& o)
{
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    std::string targets;
    for (const std::string& t : o.targets) targets += (targets.empty() ? "" : ",") + t;
    std::vector<std::string> cmd = {ec ? "faultline" : self.string(),
                                    "collective",
                                    a.trace,
                                    "--targets",
                                    targets,
                                    "--seed",
                                    std::to_string(o.seed)};
    if (!a.ops.empty()) cmd.insert(cmd.end(), {"--ops", a.ops});
    if (!a.ring.empty()) cmd.insert(cmd.end(), {"--ring", a.ring});
    cmd.push_back("--serve-rank");
    return cmd;
}

}  // namespace

CommandRunner addCollectiveCommand(CLI::App& app)
{
    auto a = std::make_shared<CollectiveArgs>();
    CLI::App* cmd = app.add_subcommand(
        "collective",
        "Replay the trace's collectives on a communicator of targets and name the faulty GPUs and links");
    cmd->add_option("TRACE", a->trace,
                    "trace v1 file with all_reduce/all_gather/reduce_scatter/broadcast ops")
        ->required();
    cmd->add_option("--targets", a->targets,
                    "the communicator, one target per rank (sim:MODEL[:link_to=K,...], or "
                    "cuda:N[:nccl_algo=A,nccl_proto=P,nccl_min_channels=K,nccl_max_channels=K] through NCCL)")
        ->required();
    cmd->add_option("--ops", a->ops, "ops to replay: indices, ranges, op kinds (default: every collective)");
    cmd->add_option("--reps", a->reps, "repetitions per op and ring")->check(CLI::Range(1u, 1000000u));
    cmd->add_option("--ring", a->ring, "ring order of the ranks, e.g. 0,2,1,3 (default: the target order)");
    cmd->add_option("--seed", a->seed, "seed of the simulated faults");
    cmd->add_option("--timeout", a->timeout, "watchdog: seconds a rank process may take to answer")
        ->check(secondsInRange(0.1, 86400.0));
    cmd->add_flag("--in-process", a->inProcess,
                  "run every rank in this process (default: one process per rank)");
    cmd->add_option("--out", a->out, "write the result (HDF5, faultline_format=collective)");
    cmd->add_flag("--json", a->json, "print the result as JSON");
    cmd->add_option("--serve-rank", a->serveRank, "(internal) serve one rank on stdin/stdout")->group("");
    return [a] {
        CollectiveOptions o;
        o.tracePath = a->trace;
        auto targets = parseTargetList(a->targets);
        if (!targets) return failWith(Error{targets.message(), ErrorCode::Usage});
        for (const TargetSpec& t : *targets) o.targets.push_back(t.text);
        o.ops = a->ops;
        o.reps = a->reps;
        o.seed = a->seed;
        o.timeoutSeconds = a->timeout;
        if (!a->ring.empty()) {
            auto ring = parseRingText(a->ring);
            if (!ring) return failWith(ring.error());
            o.ring = *ring;
        }
        if (a->serveRank >= 0) return serveCollectiveRank(o, size_t(a->serveRank), stdin, stdout);
        if (!a->out.empty())
            if (Status st = checkNewOutput(a->out, {a->trace}); !st) return failWith(st.error());
        o.workerProgram = workerProgramPath();
        const bool nccl = std::any_of(targets->begin(), targets->end(),
                                      [](const TargetSpec& t) { return t.kind == "cuda"; });
        if (nccl && a->inProcess)
            return failWith(Error{"--in-process: cuda: ranks run through NCCL, one faultline-worker per GPU",
                                  ErrorCode::Usage});
        if (!a->inProcess) o.rankCommand = rankCommand(*a, o);
        auto report = runCollectiveReplay(o);
        if (!report) return failWith(report.error());
        const nlohmann::json json = collectiveJson(*report);
        if (!a->out.empty())
            if (Status st = writeJsonResults(a->out, "collective", json); !st) return failWith(st.error());
        if (a->json)
            std::cout << json.dump(2) << "\n";
        else
            std::cout << collectiveText(*report);
        return report->healthy() ? kExitOk : kExitDiverged;
    };
}

}  // namespace faultline::cli
