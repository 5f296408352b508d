#include "DeviceInventory.h"

#include "CudaPeerKey.h"

#include <cuda_runtime.h>

#include <cstdio>

#include "CudaRuntime.h"
#include "NvmlLibrary.h"

namespace faultline::cuda {
namespace {

std::string uuidText(const cudaUUID_t& u)
{
    const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
    std::string s = "GPU-";
    char hex[3];
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        std::snprintf(hex, sizeof hex, "%02x", b[i]);
        s += hex;
    }
    return s;
}

int attribute(cudaDeviceAttr attr, int device)
{
    int v = 0;
    return cudaDeviceGetAttribute(&v, attr, device) == cudaSuccess ? v : 0;
}

template <class T>
void putOptional(nlohmann::json& j, const char* key, const std::optional<T>& v)
{
    if (v) j[key] = *v;
}

}  // namespace

DeviceInventory collectDeviceInventory(const std::string& nvmlLibrary)
{
    DeviceInventory inv;
    cudaDriverGetVersion(&inv.driverVersion);
    cudaRuntimeGetVersion(&inv.runtimeVersion);
    NvmlLibrary nvml(nvmlLibrary);
    inv.nvmlAvailable = nvml.ok();
    inv.nvmlError = nvml.error();
    inv.nvmlDriverVersion = nvml.driverVersion();
    auto count = deviceCount();
    if (!count) {
        inv.cudaError = count.message();
        return inv;
    }
    inv.cudaAvailable = true;
    if (*count == 0) inv.cudaError = "CUDA: no CUDA devices";
    for (int d = 0; d < *count; ++d) {
        GpuInfo g;
        g.index = d;
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) {
            g.name = prop.name;
            g.uuid = uuidText(prop.uuid);
            g.computeMajor = prop.major;
            g.computeMinor = prop.minor;
            g.smCount = prop.multiProcessorCount;
            g.totalMemoryBytes = prop.totalGlobalMem;
        }
        char bus[32] = {};
        if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess) g.pciBusId = bus;
        g.clockKHz = attribute(cudaDevAttrClockRate, d);
        g.memoryClockKHz = attribute(cudaDevAttrMemoryClockRate, d);
        g.eccEnabled = attribute(cudaDevAttrEccEnabled, d) != 0;
        g.peerKey = cudaPeerKeyOfDevice(d);
        if (!g.pciBusId.empty()) g.nvml = nvml.query(g.pciBusId);
        inv.gpus.push_back(std::move(g));
    }
    return inv;
}

nlohmann::json inventoryToJson(const DeviceInventory& inv)
{
    nlohmann::json j;
    j["cuda_built"] = true;
    j["cuda_available"] = inv.cudaAvailable;
    if (!inv.cudaError.empty()) j["cuda_error"] = inv.cudaError;
    j["cuda_driver_version"] = inv.driverVersion;
    j["cuda_runtime_version"] = inv.runtimeVersion;
    j["nvml_available"] = inv.nvmlAvailable;
    if (!inv.nvmlError.empty()) j["nvml_error"] = inv.nvmlError;
    if (!inv.nvmlDriverVersion.empty()) j["driver_version"] = inv.nvmlDriverVersion;
    j["gpus"] = nlohmann::json::array();
    for (const GpuInfo& g : inv.gpus) {
        nlohmann::json d{{"index", g.index},
                         {"name", g.name},
                         {"uuid", g.uuid},
                         {"pci_bus_id", g.pciBusId},
                         {"compute_capability", std::to_string(g.computeMajor) + "." + std::to_string(g.computeMinor)},
                         {"sm_count", g.smCount},
                         {"memory_bytes", g.totalMemoryBytes},
                         {"clock_khz", g.clockKHz},
                         {"memory_clock_khz", g.memoryClockKHz},
                         {"ecc_enabled", g.eccEnabled},
                         {"peer_key", g.peerKey}};
        if (g.nvml) {
            const GpuNvmlInfo& n = *g.nvml;
            nlohmann::json m{{"serial", n.serial},
                             {"board_part_number", n.boardPartNumber},
                             {"vbios_version", n.vbiosVersion},
                             {"inforom_image_version", n.inforomImageVersion}};
            putOptional(m, "ecc_corrected_volatile", n.eccCorrectedVolatile);
            putOptional(m, "ecc_uncorrected_volatile", n.eccUncorrectedVolatile);
            putOptional(m, "ecc_corrected_aggregate", n.eccCorrectedAggregate);
            putOptional(m, "ecc_uncorrected_aggregate", n.eccUncorrectedAggregate);
            putOptional(m, "remapped_rows_correctable", n.remappedRowsCorrectable);
            putOptional(m, "remapped_rows_uncorrectable", n.remappedRowsUncorrectable);
            putOptional(m, "remap_pending", n.remapPending);
            putOptional(m, "remap_failure", n.remapFailure);
            putOptional(m, "temperature_c", n.temperatureC);
            putOptional(m, "power_w", n.powerW);
            if (!n.errors.empty()) m["errors"] = n.errors;
            d["nvml"] = std::move(m);
        }
        j["gpus"].push_back(std::move(d));
    }
    return j;
}

}  // namespace faultline::cuda
