#pragma once
// What the machine's GPUs are, for reports and the RMA bundle: per device from the CUDA runtime
// (name, UUID, PCI bus id, SMs, memory, clocks, ECC mode) and, where NVML loads
// (dlopen("libnvidia-ml.so.1"), no link-time dependency), serial, board part number, VBIOS,
// InfoROM, ECC counters, remapped rows, temperature and power. Never fails: a missing driver or
// NVML is recorded as a reason.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace faultline::cuda {

struct GpuNvmlInfo {
    std::string serial, boardPartNumber, vbiosVersion, inforomImageVersion;
    std::optional<uint64_t> eccCorrectedVolatile, eccUncorrectedVolatile, eccCorrectedAggregate,
        eccUncorrectedAggregate;
    std::optional<uint32_t> remappedRowsCorrectable, remappedRowsUncorrectable;
    std::optional<bool> remapPending, remapFailure;
    std::optional<uint32_t> temperatureC;
    std::optional<double> powerW;
    std::vector<std::string> errors;  // "nvmlDeviceGetSerial: Not Supported", one per failed query
};

struct GpuInfo {
    int index = 0;
    std::string name, uuid, pciBusId;
    int computeMajor = 0, computeMinor = 0;
    int smCount = 0;
    uint64_t totalMemoryBytes = 0;
    int clockKHz = 0, memoryClockKHz = 0;  // 0 where the runtime no longer reports them
    bool eccEnabled = false;
    std::string peerKey;  // CudaPeerKey.h: GPUs with equal keys owe each other identical bits
    std::optional<GpuNvmlInfo> nvml;  // absent without NVML or when the device was not found in it
};

struct DeviceInventory {
    bool cudaAvailable = false;
    std::string cudaError;  // why there are no devices (e.g. "CUDA: cudaGetDeviceCount: ... (35): ...")
    int driverVersion = 0, runtimeVersion = 0;
    bool nvmlAvailable = false;
    std::string nvmlError;  // "no NVML: dlopen libnvidia-ml.so.1: ..." when it did not load
    std::string nvmlDriverVersion;
    std::vector<GpuInfo> gpus;
};

// Queries the runtime and NVML. `nvmlLibrary` is the name handed to dlopen.
DeviceInventory collectDeviceInventory(const std::string& nvmlLibrary = "libnvidia-ml.so.1");

nlohmann::json inventoryToJson(const DeviceInventory& inv);

}  // namespace faultline::cuda
