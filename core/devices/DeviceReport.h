#pragma once
// The machine's GPU inventory as `faultline-worker --devices-json` prints it (one JSON object:
// cuda_built, cuda_available, cuda_error, cuda_driver_version, cuda_runtime_version,
// nvml_available, nvml_error, driver_version, gpus[] with peer_key and an optional nvml object each), read
// back into plain values for `faultline devices` and the GUI's devices panel. The worker is the
// only process that loads CUDA; everything else reads this document. One schema: the worker
// writes it with deviceReportJson from the DeviceReport that kernels/ fills.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../Result.h"

namespace faultline {

// NVML's view of one GPU; absent counters are queries the device or driver does not support.
struct GpuHealth {
    std::string serial, boardPartNumber, vbiosVersion, inforomImageVersion;
    std::optional<uint64_t> eccCorrectedVolatile, eccUncorrectedVolatile, eccCorrectedAggregate,
        eccUncorrectedAggregate;
    std::optional<uint64_t> remappedRowsCorrectable, remappedRowsUncorrectable;
    std::optional<bool> remapPending, remapFailure;
    std::optional<uint64_t> temperatureC;
    std::optional<double> powerW;
    std::vector<std::string> errors;  // one per failed NVML query

    // True when a counter says the memory is failing: uncorrected ECC errors, uncorrectable
    // remapped rows, a pending remap or a remap failure.
    bool needsAttention() const;
};

struct LocalGpu {
    int index = 0;
    std::string name, uuid, pciBusId, computeCapability;
    int smCount = 0;
    uint64_t memoryBytes = 0;
    int clockKHz = 0, memoryClockKHz = 0;  // 0 where the runtime does not report them
    bool eccEnabled = false;
    // What must match for two GPUs to owe each other identical bits on production kernels
    // (name, SMs, compute capability, driver, runtime, cuBLAS, cuBLASLt, NCCL); "" unknown.
    std::string peerKey;
    std::optional<GpuHealth> health;  // absent without NVML
};

struct DeviceReport {
    bool cudaBuilt = false;      // the worker has the CUDA target at all
    bool cudaAvailable = false;  // the CUDA runtime answered
    std::string cudaError;       // why there are no devices, as the runtime said it
    int cudaDriverVersion = 0, cudaRuntimeVersion = 0;
    bool nvmlAvailable = false;
    std::string nvmlError;
    std::string driverVersion;  // NVML's driver version string ("" without NVML)
    std::vector<LocalGpu> gpus;

    // Why the list is empty, in plain words; "" when there are GPUs. No driver at all (the
    // runtime's "insufficient driver" with driver version 0) is said as such.
    std::string noDevicesReason() const;
    // The indices of GPUs that are peers of each other (same non-empty peer key), one group per
    // key with at least two GPUs, in index order.
    std::vector<std::vector<int>> peerGroups() const;
};

// The worker's document for `report`: the one JSON mapping of the inventory (parseDeviceReport
// reads what this writes). kernels/ fills a DeviceReport from the CUDA runtime and NVML.
nlohmann::json deviceReportJson(const DeviceReport& report);

// Parses the worker's document. `source` names where it came from (the worker's path) in the
// error of a document that is not JSON, not an object, or holds a field of the wrong type.
// Missing fields take the defaults above.
Result<DeviceReport> parseDeviceReport(std::string_view json, const std::string& source);

// The GPU inventory of `faultline devices --json` (or `faultline-worker --devices-json`) in
// `path`, reduced to what identifies each GPU (the campaign report's node.inventory form):
// {"driver_version", "gpus": [{"index", "name", "uuid", "serial", "pci_bus_id", "sm_count",
// "peer_key"}]}. Errors name the file.
Result<nlohmann::json> readInventoryJson(const std::string& path);

// "79.6 GiB"
std::string formatGiB(uint64_t bytes);

}  // namespace faultline
