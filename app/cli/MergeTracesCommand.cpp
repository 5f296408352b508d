// faultline merge-traces RANK_FILE... --out TRACE [--json] [--allow-external]
// Joins the per-rank traces of a distributed capture into one trace: collectives aligned by
// order per process group, every rank's outputs under its label (core/collectives/RankTraceMerge.h).
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "Cli.h"
#include "Commands.h"
#include "core/collectives/RankTraceMerge.h"

namespace faultline::cli {
namespace {

struct MergeTracesOptions {
    std::vector<std::string> inputs;
    std::string out;
    bool json = false;
    bool allowExternal = false;
};

std::string mergeTracesText(const RankTraceMergeReport& r)
{
    std::ostringstream out;
    out << "merged " << r.files.size() << " rank file(s) into " << r.out << ": " << r.ops << " op(s), "
        << r.collectives << " collective(s) joined across ranks, " << r.rankOps << " kept per rank\n";
    out << "devices:";
    for (const std::string& d : r.devices) out << " " << d;
    out << "\n";
    for (const MergedGroup& g : r.groups) {
        out << "  group [";
        for (size_t i = 0; i < g.ranks.size(); ++i) out << (i ? ", " : "") << g.ranks[i];
        out << "]: " << g.collectives << " collective(s) from " << g.files.size() << " file(s)\n";
    }
    out << r.tensors << " tensor(s) stored, " << r.sharedTensors
        << " reference(s) to identical ones shared\n";
    for (const std::string& w : r.warnings) out << "warning: " << w << "\n";
    return out.str();
}

int runMergeTraces(const MergeTracesOptions& o)
{
    std::error_code ec;
    if (std::filesystem::exists(o.out, ec)) {
        for (const std::string& in : o.inputs)
            if (std::filesystem::equivalent(in, o.out, ec))
                return failWith(fileError(o.out, "is one of the rank files (--out must be a new path)",
                                          ErrorCode::Usage));
        return failWith(fileError(o.out, "exists already (not overwritten)", ErrorCode::Usage));
    }
    OpenOptions open;
    open.allowExternal = o.allowExternal;
    auto report = mergeRankTraces(o.inputs, o.out, open);
    if (!report) return failWith(report.error());
    if (o.json)
        std::cout << rankTraceMergeJson(*report).dump(2) << "\n";
    else
        std::cout << mergeTracesText(*report);
    std::cout.flush();
    if (!std::cout) return failWith(Error{"cannot write the report to standard output", ErrorCode::Io});
    return kExitOk;
}

}  // namespace

CommandRunner addMergeTracesCommand(CLI::App& app)
{
    auto o = std::make_shared<MergeTracesOptions>();
    CLI::App* cmd = app.add_subcommand(
        "merge-traces",
        "Join per-rank traces (one file per rank) into one trace: collectives aligned by order per process "
        "group, every rank's outputs kept");
    cmd->add_option("RANK_FILE", o->inputs, "per-rank trace files (faultline_capture writes one per rank)")
        ->required();
    cmd->add_option("--out", o->out, "the merged trace (never overwritten)")->required();
    cmd->add_flag("--json", o->json, "one JSON document (the merge report)");
    cmd->add_flag("--allow-external", o->allowExternal,
                  "follow external links and storage that point outside the files");
    return [o] { return runMergeTraces(*o); };
}

}  // namespace faultline::cli
