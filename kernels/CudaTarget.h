#pragma once
// The `cuda:<index>` replay target. Golden ops (gemm, add, gelu, silu, softmax, layernorm,
// rmsnorm) run as the golden CUDA kernels (GoldenKernels.h), bit-identical to the `cpu` target,
// and record the SM of every output tile; gemm with `impl=cublas` runs cuBLAS SGEMM (pedantic
// math, TF32 only with `tf32=1`) as production replay. Other ops are an error naming them.
// All CUDA work runs on the target's DeviceThread; CUDA errors become Errors naming the device,
// and a sticky one makes fatalError() true.
#include <memory>

#include "core/replay/Target.h"
#include "core/replay/TargetSpec.h"

namespace faultline::cuda {

// Creates the target for a spec of kind "cuda" (model = the device index). Fails with the CUDA
// error when there is no such device or no driver.
Result<std::unique_ptr<Target>> createCudaTarget(const TargetSpec& spec);

// True for the ops the golden kernels implement.
bool cudaTargetHasOp(const std::string& op);

}  // namespace faultline::cuda
