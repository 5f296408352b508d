#pragma once
// The peer key of a cuda target (Target::peerKey): what must match for two GPUs to owe each
// other identical bits on the same production kernel: the SKU (device name), SM count (cuBLAS
// picks kernels and split-K by it), compute capability, the CUDA driver and runtime versions
// and the cuBLAS, cuBLASLt and NCCL library versions. cudaPeerKey is plain C++, testable
// without a GPU; cudaPeerKeyOfDevice asks the runtime.
#include <cstddef>
#include <string>

namespace faultline::cuda {

struct CudaPeerIdentity {
    std::string name;  // cudaDeviceProp::name, e.g. "NVIDIA H200"
    int smCount = 0;
    int ccMajor = 0, ccMinor = 0;
    int driverVersion = 0;       // cudaDriverGetVersion, e.g. 13000
    int runtimeVersion = 0;      // cudaRuntimeGetVersion
    int cublasVersion = 0;       // major*10000 + minor*100 + patch (cublasGetProperty)
    size_t cublasLtVersion = 0;  // cublasLtGetVersion
    int ncclVersion = 0;         // ncclGetVersion; 0 = this build has no NCCL
};

// "NVIDIA H200, 132 SMs, sm_90, driver 13000, runtime 13000, cuBLAS 130100, cuBLASLt 130100,
// NCCL 22703" (", no NCCL" without it). Equal keys <=> equal identities.
std::string cudaPeerKey(const CudaPeerIdentity& id);

// The key of local device `device`, from the CUDA runtime and the linked libraries; "" when the
// runtime cannot describe the device.
std::string cudaPeerKeyOfDevice(int device);

}  // namespace faultline::cuda
