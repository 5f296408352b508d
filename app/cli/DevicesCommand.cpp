// faultline devices [--json]: the machine's GPUs (CUDA runtime + NVML), as faultline-worker
// --devices-json reports them. `faultline` never loads CUDA itself, so this runs the worker.
// No GPU or driver is not an error: it is said plainly and the exit code is 0.
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/devices/DeviceReport.h"
#include "core/replay/WorkerProcess.h"

namespace faultline::cli {
namespace {

struct DevicesOptions {
    bool json = false;
};

template <class T>
std::string optionalText(const std::optional<T>& v)
{
    if (!v) return "n/a";
    std::ostringstream s;
    s << *v;
    return s.str();
}

std::string optionalText(const std::optional<bool>& v)
{
    return v ? (*v ? "yes" : "no") : "n/a";
}

std::string devicesText(const DeviceReport& r)
{
    std::ostringstream out;
    if (r.gpus.empty()) out << "No CUDA devices: " << r.noDevicesReason() << "\n";
    if (!r.cudaBuilt) return out.str();
    out << "CUDA runtime " << r.cudaRuntimeVersion << ", driver API " << r.cudaDriverVersion;
    if (!r.driverVersion.empty()) out << ", driver " << r.driverVersion;
    out << "\n";
    if (!r.nvmlAvailable) out << (r.nvmlError.empty() ? std::string("no NVML") : r.nvmlError) << "\n";
    for (const LocalGpu& g : r.gpus) {
        out << "cuda:" << g.index << "  " << g.name << "  " << g.uuid << "\n"
            << "    pci " << g.pciBusId << ", compute " << g.computeCapability << ", " << g.smCount
            << " SMs, " << formatGiB(g.memoryBytes) << ", clock " << g.clockKHz / 1000
            << " MHz, memory clock " << g.memoryClockKHz / 1000 << " MHz, ECC "
            << (g.eccEnabled ? "on" : "off") << "\n";
        if (!g.peerKey.empty()) out << "    peer key: " << g.peerKey << "\n";
        if (!g.health) continue;
        const GpuHealth& n = *g.health;
        out << "    serial " << n.serial << ", board " << n.boardPartNumber << ", VBIOS " << n.vbiosVersion
            << ", InfoROM " << n.inforomImageVersion << "\n"
            << "    ECC volatile corrected " << optionalText(n.eccCorrectedVolatile) << ", uncorrected "
            << optionalText(n.eccUncorrectedVolatile) << "; aggregate corrected "
            << optionalText(n.eccCorrectedAggregate) << ", uncorrected "
            << optionalText(n.eccUncorrectedAggregate) << "\n"
            << "    remapped rows correctable " << optionalText(n.remappedRowsCorrectable)
            << ", uncorrectable " << optionalText(n.remappedRowsUncorrectable) << ", pending "
            << optionalText(n.remapPending) << ", failure " << optionalText(n.remapFailure) << "; "
            << optionalText(n.temperatureC) << " C, " << optionalText(n.powerW) << " W\n";
    }
    if (r.gpus.size() >= 2) {
        const auto groups = r.peerGroups();
        if (groups.empty())
            out << "No two GPUs here are peers: production-library replays are judged against the golden "
                   "model's "
                   "bound only\n";
        for (const auto& g : groups) {
            out << "Peers (bitwise comparable on production libraries):";
            for (size_t i = 0; i < g.size(); ++i) out << (i ? ", " : " ") << "cuda:" << g[i];
            out << "\n";
        }
    }
    return out.str();
}

int runDevices(const DevicesOptions& o)
{
    const std::string worker = workerProgramPath();
    WorkerProcess proc;
    if (Status s = proc.start(worker, {"--devices-json"}); !s) {
        return failWith(s.error());
    }
    std::string line;
    const auto outcome = proc.readLine(line, std::chrono::seconds(60));
    proc.finish(std::chrono::seconds(5));
    if (outcome != WorkerProcess::ReadOutcome::Line) {
        std::cerr << "error: " << worker << ": no device report ("
                  << (outcome == WorkerProcess::ReadOutcome::Timeout ? "timed out" : proc.describeExit())
                  << ")";
        const std::string err = proc.stderrText();
        if (!err.empty()) std::cerr << ": " << err;
        std::cerr << "\n";
        return kExitError;
    }
    auto report = parseDeviceReport(line, worker);
    if (!report) {
        return failWith(report.error());
    }
    if (o.json)
        std::cout << nlohmann::json::parse(line).dump(2) << "\n";
    else
        std::cout << devicesText(*report) << std::flush;
    return kExitOk;
}

}  // namespace

CommandRunner addDevicesCommand(CLI::App& app)
{
    auto o = std::make_shared<DevicesOptions>();
    CLI::App* cmd = app.add_subcommand(
        "devices", "List the GPUs: identity, SMs, memory, clocks, ECC mode and NVML health counters");
    cmd->add_flag("--json", o->json, "One JSON document");
    return [o] { return runDevices(*o); };
}

}  // namespace faultline::cli
