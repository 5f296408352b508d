#include "NcclAllReduce.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

#include "CudaRuntime.h"

#include "NcclTypes.h"

namespace faultline::cuda {

bool ncclBuilt()
{
#ifdef FAULTLINE_HAVE_NCCL
    return true;
#else
    return false;
#endif
}

int ncclLibraryVersion()
{
#ifdef FAULTLINE_HAVE_NCCL
    int version = 0;
    if (ncclGetVersion(&version) != ncclSuccess) return 0;
    return version;
#else
    return 0;
#endif
}

Result<std::vector<int>> ncclRankDevices(std::span<const std::string> labels, size_t rankCount,
                                         int deviceCount)
{
    if (rankCount < 2)
        return Error{"impl=nccl needs at least 2 ranks (this all_reduce has " + std::to_string(rankCount) +
                     ")"};
    if (deviceCount < 2)
        return Error{"impl=nccl needs at least 2 local GPUs (this machine has " +
                     std::to_string(deviceCount) + ")"};
    std::vector<int> devices;
    bool fromLabels = labels.size() == rankCount;
    for (size_t r = 0; fromLabels && r < rankCount; ++r) {
        const std::string& l = labels[r];
        if (l.rfind("cuda:", 0) != 0 || l.size() == 5) {
            fromLabels = false;
            break;
        }
        int index = -1;
        const char* last = l.data() + l.size();
        const auto [ptr, ec] = std::from_chars(l.data() + 5, last, index);
        if (ec != std::errc() || ptr != last || index < 0) {
            fromLabels = false;
            break;
        }
        devices.push_back(index);
    }
    if (!fromLabels) {
        devices.clear();
        for (size_t r = 0; r < rankCount; ++r) devices.push_back(int(r));
    }
    if (rankCount > size_t(deviceCount))
        return Error{"impl=nccl puts one rank per local GPU: " + std::to_string(rankCount) + " ranks but " +
                     std::to_string(deviceCount) + " GPUs"};
    std::set<int> seen;
    for (size_t r = 0; r < devices.size(); ++r) {
        if (devices[r] >= deviceCount)
            return Error{"impl=nccl: rank " + std::to_string(r) +
                         " is on cuda:" + std::to_string(devices[r]) + " but this machine has " +
                         std::to_string(deviceCount) + " GPUs"};
        if (!seen.insert(devices[r]).second)
            return Error{"impl=nccl: cuda:" + std::to_string(devices[r]) + " holds two ranks"};
    }
    return devices;
}

#ifdef FAULTLINE_HAVE_NCCL

namespace {

// Every per-rank resource, released on every path (on the rank's own device).
struct RankResources {
    int device = 0;
    cudaStream_t stream = nullptr;
    void* send = nullptr;
    void* recv = nullptr;
    ncclComm_t comm = nullptr;
};

// After a failure the communicators may be broken: ncclCommDestroy can block on them, so they
// are aborted instead.
void release(std::vector<RankResources>& ranks, bool failed)
{
    for (RankResources& r : ranks) {
        cudaSetDevice(r.device);
        if (r.stream && !failed) cudaStreamSynchronize(r.stream);
        if (r.comm) failed ? ncclCommAbort(r.comm) : ncclCommDestroy(r.comm);
        cudaFree(r.send);
        cudaFree(r.recv);
        if (r.stream) cudaStreamDestroy(r.stream);
    }
}

}  // namespace

Result<std::vector<HostTensor>> ncclAllReduce(ReduceKind kind, std::span<const HostTensor> inputs,
                                              const std::vector<int>& devices, int* cudaCode)
{
    if (inputs.size() != devices.size() || inputs.empty())
        return Error{"impl=nccl: " + std::to_string(inputs.size()) + " inputs for " +
                     std::to_string(devices.size()) + " devices"};
    auto type = ncclTypeOf(inputs[0].dtype);
    if (!type) return type.error();
    int previous = 0;
    cudaGetDevice(&previous);
    const size_t bytes = inputs[0].byteCount();
    const size_t count = size_t(inputs[0].elementCount());
    std::vector<RankResources> ranks(inputs.size());
    std::vector<ncclComm_t> comms(inputs.size());
    std::optional<Error> failure;
    auto cudaFail = [&](int device, const char* what, int rc) {
        if (failure) return;
        if (cudaCode) *cudaCode = rc;
        failure = cudaErrorFor(device, what, rc);
    };
    auto ncclFail = [&](const char* what, ncclResult_t rc) {
        if (!failure) failure = Error{std::string("impl=nccl: ") + what + ": " + ncclGetErrorString(rc)};
    };

    if (ncclResult_t rc = ncclCommInitAll(comms.data(), int(comms.size()), devices.data()); rc != ncclSuccess)
        ncclFail("ncclCommInitAll", rc);
    for (size_t r = 0; r < ranks.size(); ++r) {
        ranks[r].device = devices[r];
        ranks[r].comm = failure ? nullptr : comms[r];
    }
    for (size_t r = 0; r < ranks.size() && !failure; ++r) {
        RankResources& rr = ranks[r];
        int rc = int(cudaSetDevice(rr.device));
        if (rc == 0) rc = int(cudaStreamCreateWithFlags(&rr.stream, cudaStreamNonBlocking));
        if (rc == 0 && bytes) rc = int(cudaMalloc(&rr.send, bytes));
        if (rc == 0 && bytes) rc = int(cudaMalloc(&rr.recv, bytes));
        if (rc == 0 && bytes)
            rc = int(
                cudaMemcpyAsync(rr.send, inputs[r].data.data(), bytes, cudaMemcpyHostToDevice, rr.stream));
        if (rc != 0) cudaFail(rr.device, "preparing an NCCL rank", rc);
    }
    if (!failure && count) {
        ncclResult_t rc = ncclGroupStart();
        for (size_t r = 0; r < ranks.size() && rc == ncclSuccess; ++r)
            rc = ncclAllReduce(ranks[r].send, ranks[r].recv, count, *type, ncclOpOf(kind), ranks[r].comm,
                               ranks[r].stream);
        const ncclResult_t end = ncclGroupEnd();
        if (rc != ncclSuccess)
            ncclFail("ncclAllReduce", rc);
        else if (end != ncclSuccess)
            ncclFail("ncclGroupEnd", end);
    }
    std::vector<HostTensor> outputs;
    for (size_t r = 0; r < ranks.size() && !failure; ++r) {
        RankResources& rr = ranks[r];
        HostTensor out(inputs[0].dtype, inputs[0].shape);
        int rc = int(cudaSetDevice(rr.device));
        if (rc == 0 && bytes)
            rc = int(cudaMemcpyAsync(out.data.data(), rr.recv, bytes, cudaMemcpyDeviceToHost, rr.stream));
        if (rc == 0) rc = int(cudaStreamSynchronize(rr.stream));
        if (rc != 0) cudaFail(rr.device, "running the NCCL all_reduce", rc);
        outputs.push_back(std::move(out));
    }
    release(ranks, failure.has_value());
    cudaSetDevice(previous);
    if (failure) return *failure;
    return outputs;
}

#else

Result<std::vector<HostTensor>> ncclAllReduce(ReduceKind, std::span<const HostTensor>,
                                              const std::vector<int>&, int*)
{
    return Error{
        "impl=nccl: this build has no NCCL (nccl.h and libnccl were not found when it was configured)"};
}

#endif

}  // namespace faultline::cuda
