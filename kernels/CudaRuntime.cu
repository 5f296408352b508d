#include "CudaRuntime.h"

#include <cuda_runtime.h>

namespace faultline::cuda {

Result<int> deviceCount()
{
    int n = 0;
    const cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess)
        return Error{std::string("CUDA: ") + cudaGetErrorName(rc) + " (" + std::to_string(int(rc)) +
                     "): " + cudaGetErrorString(rc)};
    return n;
}

}  // namespace faultline::cuda
