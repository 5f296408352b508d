#pragma once
// all_reduce through NCCL across local GPUs: the production collective, for `impl=nccl`. Rank r's
// input goes to local device devices[r]; one communicator per device (ncclCommInitAll), one
// ncclAllReduce per rank inside a group, the tensors' own data type (float32, float16,
// bfloat16). NCCL's summation order (rings, trees, chunking) is not the golden rank order, so
// its sums are judged against the golden within the op's bound, not bit for bit.
//
// It runs on the calling target's device thread and, for the duration of the call, also drives
// the other ranks' devices from it (NCCL's single-process, multi-device pattern needs one thread
// to launch every rank inside one group); the calling device is current again on return.
// Builds without NCCL (FAULTLINE_HAVE_NCCL unset) return an error saying so.
#include <span>
#include <string>
#include <vector>

#include "GoldenKernels.h"
#include "core/HostTensor.h"
#include "core/Result.h"

namespace faultline::cuda {

// True when this build links NCCL.
bool ncclBuilt();
// ncclGetVersion of the linked library (e.g. 22703 for 2.27.3); 0 without NCCL.
int ncclLibraryVersion();

// The local device of each of `rankCount` ranks: the trace's rank labels when every one is
// "cuda:N" (N distinct and < deviceCount), else ranks 0..rankCount-1 in order. Errors say why
// the machine cannot host the ranks (fewer than 2 ranks, fewer devices than ranks, repeats).
Result<std::vector<int>> ncclRankDevices(std::span<const std::string> labels, size_t rankCount,
                                         int deviceCount);

// Runs the collective; returns every rank's output (all equal on a healthy system). `cudaCode`
// receives a CUDA error code (for the sticky-error check) when one caused the failure.
Result<std::vector<HostTensor>> ncclAllReduce(ReduceKind kind, std::span<const HostTensor> ranks,
                                              const std::vector<int>& devices, int* cudaCode);

}  // namespace faultline::cuda
