#include "CudaRuntime.h"

#include <cuda_runtime.h>

namespace faultline::cuda {

Result<int> deviceCount()
{
    int n = 0;
    const cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) return cudaErrorFor(-1, "cudaGetDeviceCount", int(rc));
    return n;
}

Error cudaErrorFor(int device, const std::string& what, int code)
{
    const auto rc = static_cast<cudaError_t>(code);
    std::string prefix = device >= 0 ? "cuda:" + std::to_string(device) + ": " : std::string("CUDA: ");
    return Error{prefix + what + ": " + cudaGetErrorName(rc) + " (" + std::to_string(code) +
                 "): " + cudaGetErrorString(rc)};
}

bool isStickyCudaError(int code)
{
    switch (static_cast<cudaError_t>(code)) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorECCUncorrectable:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorLaunchTimeout:
        case cudaErrorAssert:
        case cudaErrorContextIsDestroyed:
        case cudaErrorDevicesUnavailable:
        case cudaErrorUnknown:
        // Hopper and later: an uncontained HBM or NVLink fault, a tensor-memory leak, a terminated
        // MPS client, an external device error: the process must be terminated and relaunched.
        case cudaErrorNvlinkUncorrectable:
        case cudaErrorContained:
        case cudaErrorTensorMemoryLeak:
        case cudaErrorMpsClientTerminated:
        case cudaErrorExternalDevice:
            return true;
        default:
            return false;
    }
}

}  // namespace faultline::cuda
