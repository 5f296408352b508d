// faultline-worker: runs replay requests for ONE target, speaking JSON lines on stdin/stdout
// (core/replay/WorkerProtocol.h). Started by the campaign orchestrator, one process per target,
// so a hang, crash or poisoned device context takes down only this process.
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <memory>

#include "core/collectives/CollectiveNccl.h"
#include "core/devices/DeviceReport.h"
#include "core/replay/Target.h"
#include "core/replay/TargetSpec.h"
#include "core/replay/WorkerProtocol.h"
#include "core/trace/Trace.h"

#ifdef FAULTLINE_HAVE_CUDA
#include "kernels/CudaTarget.h"
#include "kernels/DeviceInventory.h"
#include "kernels/NcclAllReduce.h"
#include "kernels/NcclCollective.h"
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

// --collective-rank R: one NCCL rank of `faultline collective` (core/collectives/CollectiveNccl.h).
int serveCollectiveRank(const std::string& tracePath, const std::string& targets, const std::string& ops,
                        size_t rank)
{
    faultline::CollectiveOptions o;
    o.tracePath = tracePath;
    o.ops = ops;
    auto specs = faultline::parseTargetList(targets);
    if (!specs) {
        std::cout << nlohmann::json{{"error", specs.message()}}.dump() << std::endl;
        return 2;
    }
    for (const faultline::TargetSpec& t : *specs) o.targets.push_back(t.text);
#ifdef FAULTLINE_HAVE_CUDA
    faultline::NcclRankBackend backend;
    backend.probe = &faultline::cuda::probeNcclDevice;
    backend.createUniqueId = &faultline::cuda::ncclCreateUniqueIdBytes;
    backend.run = [](const faultline::CollectiveProblem& p, size_t self, size_t ranks, int device,
                     const std::vector<uint8_t>& id) {
        return faultline::cuda::ncclRunCollectiveRank(p, self, ranks, device, id, nullptr);
    };
    backend.version = faultline::cuda::ncclLibraryVersion();
    return faultline::serveNcclRank(o, rank, &backend, stdin, stdout);
#else
    return faultline::serveNcclRank(o, rank, nullptr, stdin, stdout);
#endif
}

}  // namespace

int main(int argc, char** argv)
{
    // Past a file-size limit (ulimit -f) a write fails with EFBIG and is reported, naming the
    // file, instead of the process dying of SIGXFSZ without a word.
    std::signal(SIGXFSZ, SIG_IGN);
    std::ios::sync_with_stdio(false);
    CLI::App app{"faultline-worker: replays trace ops on one target for the faultline orchestrator"};
    std::string targetText, tracePath;
    std::string collectiveTargets, collectiveOps;
    int64_t collectiveRank = -1;
    bool allowExternal = false, devicesJson = false;
    app.add_option("--target", targetText, "cpu | sim:<model>[:k=v,...] | cuda:<index>");
    app.add_option("--trace", tracePath, "trace v1 file");
    app.add_flag("--allow-external", allowExternal, "follow external links/storage in the trace");
    app.add_flag("--devices-json", devicesJson, "print the GPU inventory as JSON and exit");
    app.add_option("--collective-rank", collectiveRank,
                   "serve this rank of `faultline collective` through NCCL (with --trace, --targets, --ops)")
        ->check(CLI::Range(int64_t(0), int64_t(1 << 20)));
    app.add_option("--targets", collectiveTargets,
                   "--collective-rank: the communicator, cuda:N[:nccl_*=...],...");
    app.add_option("--ops", collectiveOps, "--collective-rank: the op selection of the replay");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (devicesJson) return printDevicesJson();
    if (collectiveRank >= 0)
        return serveCollectiveRank(tracePath, collectiveTargets, collectiveOps, size_t(collectiveRank));
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
