#pragma once
// How a cuda target runs one op, read from the op's parameters: `impl` = golden (default: the
// golden kernels, bit-identical to the CPU golden model) | cublas (production replay through
// cuBLAS SGEMM; gemm only), `tf32` = 0 (default) | 1 (let cuBLAS use TF32 tensor cores).
// Plain C++: testable without a GPU.
#include <map>
#include <string>

#include "core/Result.h"
#include "core/trace/Trace.h"

namespace faultline::cuda {

enum class CudaImpl { Golden, Cublas };

struct CudaOpSettings {
    CudaImpl impl = CudaImpl::Golden;
    bool tf32 = false;
};

// Errors read "op NAME: parameter impl=X is not golden or cublas" and the like.
Result<CudaOpSettings> parseCudaOpSettings(const std::string& op, const std::map<std::string, AttrValue>& params);

}  // namespace faultline::cuda
