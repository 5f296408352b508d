// faultline-worker: runs replay requests for ONE target, speaking JSON lines on stdin/stdout
// (core/replay/WorkerProtocol.h). Started by the campaign orchestrator, one process per target,
// so a hang, crash or poisoned device context takes down only this process.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "core/devices/DeviceReport.h"
#include "core/replay/Target.h"
#include "core/replay/TargetSpec.h"
#include "core/replay/WorkerProtocol.h"
#include "core/trace/Trace.h"

#ifdef FAULTLINE_HAVE_CUDA
#include "kernels/CudaTarget.h"
#include "kernels/DeviceInventory.h"
#endif

namespace {

// --devices-json: the GPU inventory as one JSON line (`faultline devices` runs this, so the
// `faultline` executable itself never loads the CUDA runtime).
int printDevicesJson()
{
#ifdef FAULTLINE_HAVE_CUDA
    const faultline::DeviceReport report = faultline::cuda::collectDeviceInventory();
#else
    faultline::DeviceReport report;
    report.cudaError = "this faultline-worker was built without the CUDA target";
#endif
    std::cout << faultline::deviceReportJson(report).dump() << std::endl;
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    std::ios::sync_with_stdio(false);
    CLI::App app{"faultline-worker: replays trace ops on one target for the faultline orchestrator"};
    std::string targetText, tracePath;
    bool allowExternal = false, devicesJson = false;
    app.add_option("--target", targetText, "cpu | sim:<model>[:k=v,...] | cuda:<index>");
    app.add_option("--trace", tracePath, "trace v1 file");
    app.add_flag("--allow-external", allowExternal, "follow external links/storage in the trace");
    app.add_flag("--devices-json", devicesJson, "print the GPU inventory as JSON and exit");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (devicesJson) return printDevicesJson();
    if (targetText.empty() || tracePath.empty()) {
        std::cerr << "faultline-worker: --target and --trace are required (or --devices-json)\n";
        return 2;
    }
    auto spec = faultline::parseTargetSpec(targetText);
    if (!spec) {
        std::cerr << "faultline-worker: " << spec.message() << "\n";
        return 2;
    }
#ifdef FAULTLINE_HAVE_CUDA
    faultline::registerTargetFactory("cuda", &faultline::cuda::createCudaTarget);
#endif
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
