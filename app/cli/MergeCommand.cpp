// faultline merge RESULTS.h5... --out FLEET.h5 [--fleet DIR] [--tasks N] [--trace TRACE] [--json]
//                 [--ledger [URL]]
// Merges the campaigns of many nodes into one fleet campaign and names the outlier GPUs
// (core/fleet/FleetMerge.h).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "Cli.h"
#include "Commands.h"
#include "LedgerRecording.h"
#include "core/Text.h"
#include "core/fleet/FleetJob.h"
#include "core/fleet/FleetMerge.h"
#include "core/fleet/FleetStatus.h"
#include "core/io/SafeFiles.h"
#include "core/ledger/LedgerFiles.h"
#include "core/replay/CampaignJournal.h"  // traceContentDigest

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;

struct MergeOptions {
    std::vector<std::string> inputs;
    std::string out, fleetDir, trace;
    uint32_t tasks = 0;
    bool json = false;
    LedgerRequest ledger;
};

// Every string of the summary came from a node file or the command line: printed through
// printableText, so no control character reaches the terminal.
std::string mergeText(const nlohmann::json& summary)
{
    const auto text = [](const nlohmann::json& j) { return printableText(j.get<std::string>()); };
    std::ostringstream out;
    out << "fleet of " << summary["node_count"].get<size_t>() << " node(s), "
        << summary["gpu_count"].get<size_t>() << " GPU(s)\n";
    for (const nlohmann::json& m : summary["missing_tasks"])
        out << "  MISSING task " << m["task"].get<uint32_t>() << ": " << text(m["reason"]) << "\n";
    for (const nlohmann::json& g : summary["unhealthy"]) {
        out << "  " << text(g["gpu"]) << ": " << text(g["verdict"]) << ", " << g["failures"].get<uint64_t>()
            << "/" << g["runs"].get<uint64_t>() << " runs failed";
        if (!g["uuid"].get<std::string>().empty()) out << " (" << text(g["uuid"]) << ")";
        out << "\n";
    }
    for (const nlohmann::json& o : summary["outliers"]) {
        out << "  OUTLIER " << text(o["gpu"]) << ":";
        for (const nlohmann::json& op : o["ops"])
            out << " op " << op["op"].get<uint32_t>() << " (" << op["agreeing"].get<uint32_t>() << " of "
                << op["peers"].get<uint32_t>() << " peers agree on other bits)";
        out << "\n";
    }
    if (summary["outliers"].empty()) out << "  no outlier among fleet peers\n";
    for (const nlohmann::json& n : summary["other_trace_nodes"])
        out << "  NOT MERGED " << text(n["file"]) << " (" << text(n["host"]) << "): another trace\n";
    for (const nlohmann::json& w : summary["warnings"]) out << "warning: " << text(w) << "\n";
    return out.str();
}

int runMerge(MergeOptions& o)
{
    // Scratch files (the spooled rows, the report's sections) beside the output.
    std::error_code absoluteError;
    FleetMerger merger(fs::absolute(o.out, absoluteError).parent_path().string());
    std::error_code ec;
    if (!o.fleetDir.empty()) {
        auto manifest = readFleetManifest(o.fleetDir);
        if (!manifest) return failWith(manifest.error());
        if (!o.tasks) o.tasks = manifest->tasks;
        // What the tasks left: a task is merged when it finished (an exit code of 0 or 1 and its
        // results file); any other is missing, with the reason.
        const FleetStatus status = fleetStatus(o.fleetDir, manifest->tasks, nullptr, nullptr);
        const bool named = !o.inputs.empty();
        for (const FleetTask& t : status.list) {
            if (t.state == "done") {
                if (!named) o.inputs.push_back(t.results);
                continue;
            }
            std::string reason = t.state == "failed"
                                     ? t.detail
                                     : "no exit code: the task is still running, or was cancelled "
                                       "or killed";
            if (!t.results.empty() && !named) reason += "; its partial results are not merged";
            merger.taskFailed(std::to_string(t.task), reason);
        }
    }
    if (o.inputs.empty())
        return failWith(o.fleetDir.empty() ? Error{"no results files to merge", ErrorCode::Usage}
                                           : fileError(o.fleetDir,
                                                       "no task has finished: nothing to merge (see "
                                                       "faultline fleet status)",
                                                       ErrorCode::Usage));
    if (o.tasks) merger.expectTasks(o.tasks);
    if (!o.trace.empty()) {
        if (Status regular = checkRegularInput(o.trace); !regular) return failWith(regular.error());
        auto digest = traceContentDigest(o.trace);
        if (!digest) return failWith(digest.error());
        merger.nameTrace({o.trace, *digest});
    }
    // Anything there, a dangling link included, is not overwritten.
    if (fs::exists(fs::symlink_status(o.out, ec)))
        return failWith(fileError(o.out, "exists already (not overwritten)", ErrorCode::Usage));
    for (const std::string& in : o.inputs) {
        if (fs::weakly_canonical(in, ec) == fs::weakly_canonical(o.out, ec))
            return failWith(fileError(o.out, "is one of the inputs", ErrorCode::Usage));
        if (Status s = merger.addFile(in); !s) return failWith(s.error());
    }
    // One second pass writes the results file and, with --json, the same report to stdout.
    auto summary = merger.finish(o.out, o.json ? &std::cout : nullptr);
    if (!summary) return failWith(summary.error());
    if (o.json)
        std::cout << "\n";
    else
        std::cout << mergeText(*summary);
    std::cout.flush();
    if (!std::cout) return failWith(Error{"cannot write the report to standard output", ErrorCode::Io});
    // The merged campaign as `ledger add FLEET.h5` reads it.
    if (int rc = recordInLedger(o.ledger,
                                [&](Ledger& ledger) -> Result<LedgerAdded> {
                                    auto added = addLedgerFile(ledger, o.out, ledgerHostName());
                                    if (!added) return added.error();
                                    return added->added;
                                });
        rc != kExitOk)
        return rc;
    // Nodes of another trace were not judged with the campaign: a finding like a missing task.
    const bool found = !(*summary)["missing_tasks"].empty() || !(*summary)["outliers"].empty() ||
                       !(*summary)["unhealthy"].empty() || !(*summary)["other_trace_nodes"].empty();
    return found ? kExitDiverged : kExitOk;
}

}  // namespace

CommandRunner addMergeCommand(CLI::App& app)
{
    auto o = std::make_shared<MergeOptions>();
    CLI::App* cmd = app.add_subcommand(
        "merge",
        "Merge the campaigns of many nodes into one fleet campaign; peers vote on bits and outlier GPUs "
        "are named");
    cmd->add_option("RESULTS", o->inputs, "campaign results files (replay --out), one per node");
    cmd->add_option("--out", o->out, "the merged campaign results file (never overwritten)")->required();
    cmd->add_option("--fleet", o->fleetDir,
                    "a fleet directory (fleet submit --out): its task count, failed tasks and, without "
                    "RESULTS, its results files");
    cmd->add_option("--tasks", o->tasks, "tasks the fleet job had: the missing ones are named")
        ->check(CLI::Range(1u, kMaxFleetTasks));
    cmd->add_option("--trace", o->trace,
                    "the trace the campaign is of (default: the one most nodes replayed); nodes that "
                    "replayed another are listed, not merged");
    cmd->add_flag("--json", o->json, "one JSON document (the merged report)");
    addLedgerOption(cmd, o->ledger);
    return [o] { return runMerge(*o); };
}

}  // namespace faultline::cli
