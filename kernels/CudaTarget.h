#pragma once
// The `cuda:<index>` replay target. Every trace v1 op runs as its golden CUDA kernel
// (GoldenKernels.h), bit-identical to the `cpu` target, and records the SM of every output tile.
// Production replay, chosen by the op's recorded settings (CudaOpSettings.h): gemm with
// impl=cublas (cublasSgemm) or impl=cublaslt (cublasLtMatmul, CublasLtGemm.h); all_reduce with
// impl=nccl across local GPUs (NcclAllReduce.h; every rank's output is returned, rank 0 first).
//
// Comparison: outputs come back to the host, where the orchestrator judges them against the
// golden model and the trace's recorded outputs; those references are host tensors and the
// judgement is bound-based (ulps against a per-element bound), so it stays on the host. The
// one comparison whose reference is already on the device is repetition against repetition:
// the target keeps the first repetition's float32 output of the op it last ran on the device
// and compares each later repetition there with CompareKernel (bitwise, NaN by its bits, as the
// host's digests do), returning the summary as ReplayOutput::repeatCheck. When that repetition
// is one the orchestrator already holds and the output is identical, it is not copied back at
// all (ReplayOutput::outputOmitted): a campaign of many repetitions moves one copy per op unless
// the device's results change (or the campaign asks for every copy, replay --copy-all).
//
// All CUDA work runs on the target's DeviceThread; CUDA errors become Errors naming the device,
// and a sticky one makes fatalError() true.
#include <memory>

#include "core/replay/Target.h"
#include "core/replay/TargetSpec.h"

namespace faultline::cuda {

// Creates the target for a spec of kind "cuda" (model = the device index). Fails with the CUDA
// error when there is no such device or no driver.
Result<std::unique_ptr<Target>> createCudaTarget(const TargetSpec& spec);

// True for the ops the golden kernels implement (every golden op).
bool cudaTargetHasOp(const std::string& op);

}  // namespace faultline::cuda
