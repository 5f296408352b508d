#include "CudaPeerKey.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "NcclAllReduce.h"

namespace faultline::cuda {

std::string cudaPeerKey(const CudaPeerIdentity& id)
{
    std::string key = id.name + ", " + std::to_string(id.smCount) + " SMs, sm_" + std::to_string(id.ccMajor) +
                      std::to_string(id.ccMinor) + ", driver " + std::to_string(id.driverVersion) +
                      ", runtime " + std::to_string(id.runtimeVersion) + ", cuBLAS " +
                      std::to_string(id.cublasVersion) + ", cuBLASLt " + std::to_string(id.cublasLtVersion);
    key += id.ncclVersion ? ", NCCL " + std::to_string(id.ncclVersion) : std::string(", no NCCL");
    return key;
}

std::string cudaPeerKeyOfDevice(int device)
{
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return {};
    CudaPeerIdentity id;
    id.name = prop.name;
    id.smCount = prop.multiProcessorCount;
    id.ccMajor = prop.major;
    id.ccMinor = prop.minor;
    cudaDriverGetVersion(&id.driverVersion);
    cudaRuntimeGetVersion(&id.runtimeVersion);
    int major = 0, minor = 0, patch = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    id.cublasVersion = major * 10000 + minor * 100 + patch;
    id.cublasLtVersion = cublasLtGetVersion();
    id.ncclVersion = ncclLibraryVersion();
    return cudaPeerKey(id);
}

}  // namespace faultline::cuda
