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

}  // namespace

DeviceReport collectDeviceInventory(const std::string& nvmlLibrary)
{
    DeviceReport inv;
    inv.cudaBuilt = true;
    cudaDriverGetVersion(&inv.cudaDriverVersion);
    cudaRuntimeGetVersion(&inv.cudaRuntimeVersion);
    NvmlLibrary nvml(nvmlLibrary);
    inv.nvmlAvailable = nvml.ok();
    inv.nvmlError = nvml.error();
    inv.driverVersion = nvml.driverVersion();
    auto count = deviceCount();
    if (!count) {
        inv.cudaError = count.message();
        return inv;
    }
    inv.cudaAvailable = true;
    if (*count == 0) inv.cudaError = "CUDA: no CUDA devices";
    for (int d = 0; d < *count; ++d) {
        LocalGpu g;
        g.index = d;
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) {
            g.name = prop.name;
            g.uuid = uuidText(prop.uuid);
            g.computeCapability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
            g.smCount = prop.multiProcessorCount;
            g.memoryBytes = prop.totalGlobalMem;
        }
        char bus[32] = {};
        if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess) g.pciBusId = bus;
        g.clockKHz = attribute(cudaDevAttrClockRate, d);
        g.memoryClockKHz = attribute(cudaDevAttrMemoryClockRate, d);
        g.eccEnabled = attribute(cudaDevAttrEccEnabled, d) != 0;
        g.peerKey = cudaPeerKeyOfDevice(d);
        if (!g.pciBusId.empty()) g.health = nvml.query(g.pciBusId);
        inv.gpus.push_back(std::move(g));
    }
    return inv;
}

}  // namespace faultline::cuda
