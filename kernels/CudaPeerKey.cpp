#include "CudaPeerKey.h"

namespace faultline::cuda {

std::string cudaPeerKey(const CudaPeerIdentity& id)
{
    std::string key = id.name + ", " + std::to_string(id.smCount) + " SMs, sm_" + std::to_string(id.ccMajor) +
                      std::to_string(id.ccMinor) + ", driver " + std::to_string(id.driverVersion) + ", runtime " +
                      std::to_string(id.runtimeVersion) + ", cuBLAS " + std::to_string(id.cublasVersion) +
                      ", cuBLASLt " + std::to_string(id.cublasLtVersion);
    key += id.ncclVersion ? ", NCCL " + std::to_string(id.ncclVersion) : std::string(", no NCCL");
    return key;
}

}  // namespace faultline::cuda
