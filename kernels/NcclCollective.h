#pragma once
// One rank of a collective through NCCL, one process per GPU (`faultline collective` with cuda:
// targets, core/collectives/CollectiveNccl.h): rank 0 creates the ncclUniqueId, every rank joins
// the communicator with ncclCommInitRank on its own device and runs ncclAllReduce /
// ncclAllGather / ncclReduceScatter / ncclBroadcast in the tensors' dtype (float32, float16,
// bfloat16). The NCCL_ALGO / NCCL_PROTO / channel variables are set by the caller before the
// communicator is created. Errors name the device. Builds without NCCL return an error saying so.
#include <cstdint>
#include <vector>

#include "core/HostTensor.h"
#include "core/Result.h"
#include "core/collectives/CollectiveRing.h"

namespace faultline::cuda {

// The device is there and usable (errors: no driver, no device, an index beyond the machine's).
Status probeNcclDevice(int device);
// A fresh ncclUniqueId as bytes, to relay to every rank.
Result<std::vector<uint8_t>> ncclCreateUniqueIdBytes();
// Rank `rank` of `ranks` on local device `device`: its input is problem.inputs[rank]; returns
// its output (collectiveOutputShape). `cudaCode` receives a CUDA error code that caused a failure.
Result<HostTensor> ncclRunCollectiveRank(const CollectiveProblem& problem, size_t rank, size_t ranks,
                                         int device, const std::vector<uint8_t>& uniqueId, int* cudaCode);

}  // namespace faultline::cuda
