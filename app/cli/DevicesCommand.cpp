// faultline devices [--json]: the machine's GPUs (CUDA runtime + NVML), as faultline-worker
// --devices-json reports them. `faultline` never loads CUDA itself, so this runs the worker.
// No GPU or driver is not an error: it is said plainly and the exit code is 0.
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/replay/WorkerProcess.h"

namespace faultline::cli {
namespace {

struct DevicesOptions {
    bool json = false;
};

std::string gib(uint64_t bytes)
{
    std::ostringstream s;
    s.precision(1);
    s << std::fixed << double(bytes) / double(uint64_t(1) << 30) << " GiB";
    return s.str();
}

template <class T>
std::string field(const nlohmann::json& j, const char* key, T fallback)
{
    if (!j.contains(key) || j[key].is_null()) return "n/a";
    std::ostringstream s;
    s << j.value(key, fallback);
    return s.str();
}

std::string devicesText(const nlohmann::json& j)
{
    std::ostringstream out;
    if (!j.value("cuda_built", false)) {
        out << "No CUDA devices: " << j.value("cuda_error", std::string("faultline-worker has no CUDA target"))
            << "\n";
        return out.str();
    }
    const auto& gpus = j.contains("gpus") && j["gpus"].is_array() ? j["gpus"] : nlohmann::json::array();
    if (gpus.empty())
        out << "No CUDA devices: " << j.value("cuda_error", std::string("the CUDA runtime reports none")) << "\n";
    out << "CUDA runtime " << j.value("cuda_runtime_version", 0) << ", driver API " << j.value("cuda_driver_version", 0);
    if (j.contains("driver_version")) out << ", driver " << j.value("driver_version", std::string());
    out << "\n";
    if (!j.value("nvml_available", false)) out << j.value("nvml_error", std::string("no NVML")) << "\n";
    for (const auto& g : gpus) {
        out << "cuda:" << g.value("index", 0) << "  " << g.value("name", std::string()) << "  "
            << g.value("uuid", std::string()) << "\n"
            << "    pci " << g.value("pci_bus_id", std::string()) << ", compute " << g.value("compute_capability", std::string())
            << ", " << g.value("sm_count", 0) << " SMs, " << gib(g.value("memory_bytes", uint64_t(0))) << ", clock "
            << g.value("clock_khz", 0) / 1000 << " MHz, memory clock " << g.value("memory_clock_khz", 0) / 1000
            << " MHz, ECC " << (g.value("ecc_enabled", false) ? "on" : "off") << "\n";
        if (!g.contains("nvml")) continue;
        const auto& n = g["nvml"];
        out << "    serial " << n.value("serial", std::string()) << ", board " << n.value("board_part_number", std::string())
            << ", VBIOS " << n.value("vbios_version", std::string()) << ", InfoROM "
            << n.value("inforom_image_version", std::string()) << "\n"
            << "    ECC volatile corrected " << field(n, "ecc_corrected_volatile", uint64_t(0)) << ", uncorrected "
            << field(n, "ecc_uncorrected_volatile", uint64_t(0)) << "; aggregate corrected "
            << field(n, "ecc_corrected_aggregate", uint64_t(0)) << ", uncorrected "
            << field(n, "ecc_uncorrected_aggregate", uint64_t(0)) << "\n"
            << "    remapped rows correctable " << field(n, "remapped_rows_correctable", 0u) << ", uncorrectable "
            << field(n, "remapped_rows_uncorrectable", 0u) << ", pending " << field(n, "remap_pending", false)
            << ", failure " << field(n, "remap_failure", false) << "; " << field(n, "temperature_c", 0u) << " C, "
            << field(n, "power_w", 0.0) << " W\n";
    }
    return out.str();
}

int runDevices(const DevicesOptions& o)
{
    const std::string worker = workerProgramPath();
    WorkerProcess proc;
    if (Status s = proc.start(worker, {"--devices-json"}); !s) {
        std::cerr << "error: " << s.message() << "\n";
        return kExitError;
    }
    std::string line;
    const auto outcome = proc.readLine(line, std::chrono::seconds(60));
    proc.finish(std::chrono::seconds(5));
    if (outcome != WorkerProcess::ReadOutcome::Line) {
        std::cerr << "error: " << worker << ": no device report ("
                  << (outcome == WorkerProcess::ReadOutcome::Timeout ? "timed out" : proc.describeExit()) << ")";
        const std::string err = proc.stderrText();
        if (!err.empty()) std::cerr << ": " << err;
        std::cerr << "\n";
        return kExitError;
    }
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        std::cerr << "error: " << worker << ": malformed device report: " << line << "\n";
        return kExitError;
    }
    if (o.json)
        std::cout << j.dump(2) << "\n";
    else
        std::cout << devicesText(j) << std::flush;
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
