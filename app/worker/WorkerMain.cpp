// faultline-worker: runs replay requests for ONE target, speaking JSON lines on stdin/stdout
// (core/replay/WorkerProtocol.h). Started by the campaign orchestrator, one process per target,
// so a hang, crash or poisoned device context takes down only this process.
#include <CLI/CLI.hpp>
#include <iostream>

#include "core/replay/Target.h"
#include "core/replay/TargetSpec.h"
#include "core/replay/WorkerProtocol.h"
#include "core/trace/Trace.h"

int main(int argc, char** argv)
{
    std::ios::sync_with_stdio(false);
    CLI::App app{"faultline-worker: replays trace ops on one target for the faultline orchestrator"};
    std::string targetText, tracePath;
    bool allowExternal = false;
    app.add_option("--target", targetText, "cpu | sim:<model>[:k=v,...] | cuda:<index>")->required();
    app.add_option("--trace", tracePath, "trace v1 file")->required();
    app.add_flag("--allow-external", allowExternal, "follow external links/storage in the trace");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    auto spec = faultline::parseTargetSpec(targetText);
    if (!spec) {
        std::cerr << "faultline-worker: " << spec.message() << "\n";
        return 2;
    }
    auto target = faultline::createTarget(*spec);
    if (!target) {
        std::cerr << "faultline-worker: " << target.message() << "\n";
        return 2;
    }
    faultline::OpenOptions open;
    open.allowExternal = allowExternal;
    auto trace = faultline::readTrace(tracePath, open);
    if (!trace) {
        std::cerr << "faultline-worker: " << trace.message() << "\n";
        return 2;
    }
    return faultline::serveWorkerRequests(std::cin, std::cout, **target, *trace);
}
