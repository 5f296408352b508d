// faultline bisect TRACE --suspect LABEL [--peer LABEL | --no-peer] [--json]
#include <iostream>
#include <memory>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/replay/Bisect.h"

namespace faultline::cli {
namespace {

struct BisectCliOptions {
    std::string trace, suspect, peer;
    bool json = false, allowExternal = false, quiet = false, noPeer = false;
};

int runBisect(const BisectCliOptions& o)
{
    OpenOptions open;
    open.allowExternal = o.allowExternal;
    auto trace = readTrace(o.trace, open);
    if (!trace) {
        return failWith(trace.error());
    }
    const auto* cancel = installInterruptFlag();
    faultline::BisectOptions options;
    options.suspect = o.suspect;
    options.peer = o.peer;
    options.noPeer = o.noPeer;
    auto report = bisectTrace(
        *trace, options,
        [&o](size_t done, size_t total, const std::string& what) {
            if (!o.quiet) printProgress(total ? double(done) / double(total) : 1.0, what);
        },
        cancel);
    endProgress();
    if (!report) {
        return failWith(report.error());
    }
    if (o.json)
        std::cout << bisectJson(*report).dump(2) << "\n";
    else
        std::cout << bisectText(*report);
    if (report->cancelled) {
        std::cerr << "bisect cancelled\n";
        return kExitError;
    }
    if (report->checkedOps == 0 && !report->firstDivergentOp) {
        std::cerr << "error: " << o.trace
                  << ": no op could be checked against a peer or the golden model (see the ops' details)\n";
        return kExitError;
    }
    return report->firstDivergentOp ? kExitDiverged : kExitOk;
}

}  // namespace

CommandRunner addBisectCommand(CLI::App& app)
{
    auto o = std::make_shared<BisectCliOptions>();
    CLI::App* cmd = app.add_subcommand("bisect",
                                       "Find the first op whose recorded output on the suspect differs from "
                                       "a rerun peer's bits or leaves the "
                                       "golden model's bound");
    cmd->add_option("TRACE", o->trace, "trace v1 file")->required();
    cmd->add_option("--suspect", o->suspect, "device label of the suspect (see `inspect`)")->required();
    auto* peer = cmd->add_option("--peer", o->peer,
                                 "device judging bit for bit where it reproduced itself (default: the device "
                                 "whose source is rerun; the first of several)");
    cmd->add_flag("--no-peer", o->noPeer, "judge by the golden model alone")->excludes(peer);
    cmd->add_flag("--json", o->json, "one JSON document");
    cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
    cmd->add_flag("--allow-external", o->allowExternal, "follow external links/storage in the trace");
    return [o] { return runBisect(*o); };
}

}  // namespace faultline::cli
