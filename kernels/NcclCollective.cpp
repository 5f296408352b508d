#include "NcclCollective.h"

#include <cuda_runtime.h>

#include <cstring>
#include <optional>
#include <string>

#include "CudaRuntime.h"
#include "NcclAllReduce.h"
#include "NcclTypes.h"
#include "core/collectives/CollectiveNccl.h"

namespace faultline::cuda {

Status probeNcclDevice(int device)
{
    auto count = deviceCount();
    if (!count) return Error{"no usable CUDA device: " + count.message(), ErrorCode::Device};
    if (device < 0 || device >= *count)
        return Error{"no such device: this machine has " + std::to_string(*count) + " CUDA device(s)",
                     ErrorCode::Device};
    if (!ncclBuilt())
        return Error{"this build has no NCCL (nccl.h and libnccl were not found when it was configured)",
                     ErrorCode::Device};
    return {};
}

#ifdef FAULTLINE_HAVE_NCCL

Result<std::vector<uint8_t>> ncclCreateUniqueIdBytes()
{
    ncclUniqueId id;
    if (ncclResult_t rc = ncclGetUniqueId(&id); rc != ncclSuccess)
        return Error{std::string("ncclGetUniqueId: ") + ncclGetErrorString(rc), ErrorCode::Device};
    std::vector<uint8_t> bytes(sizeof id.internal);
    std::memcpy(bytes.data(), id.internal, bytes.size());
    return bytes;
}

Result<HostTensor> ncclRunCollectiveRank(const CollectiveProblem& p, size_t rank, size_t ranks, int device,
                                         const std::vector<uint8_t>& uniqueId, int* cudaCode)
{
    const std::string where = "cuda:" + std::to_string(device);
    if (rank >= p.inputs.size() || ranks != p.inputs.size())
        return Error{where + ": rank " + std::to_string(rank) + " of " + std::to_string(ranks) + " for " +
                         std::to_string(p.inputs.size()) + " inputs",
                     ErrorCode::Usage};
    ncclUniqueId id;
    if (uniqueId.size() != sizeof id.internal)
        return Error{where + ": the NCCL unique id has " + std::to_string(uniqueId.size()) + " bytes, not " +
                         std::to_string(sizeof id.internal),
                     ErrorCode::Protocol};
    std::memcpy(id.internal, uniqueId.data(), uniqueId.size());
    auto type = ncclTypeOf(p.inputs[rank].dtype);
    if (!type) return Error{where + ": " + type.message(), ErrorCode::Usage};
    const HostTensor& input = p.inputs[rank];
    HostTensor out(input.dtype, collectiveOutputShape(p));
    const size_t inBytes = input.byteCount(), outBytes = out.byteCount();
    const size_t count = size_t(input.elementCount());

    std::optional<Error> failure;
    auto cudaFail = [&](const char* what, int rc) {
        if (failure) return;
        if (cudaCode) *cudaCode = rc;
        failure = cudaErrorFor(device, what, rc);
        failure->code = isStickyCudaError(rc) ? ErrorCode::FatalDevice : ErrorCode::Device;
    };
    auto ncclFail = [&](const char* what, ncclResult_t rc) {
        if (!failure) failure = Error{where + ": " + what + ": " + ncclGetErrorString(rc), ErrorCode::Device};
    };
    cudaStream_t stream = nullptr;
    void* send = nullptr;
    void* recv = nullptr;
    ncclComm_t comm = nullptr;
    int rc = int(cudaSetDevice(device));
    if (rc == 0) rc = int(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (rc == 0 && inBytes) rc = int(cudaMalloc(&send, inBytes));
    if (rc == 0 && outBytes) rc = int(cudaMalloc(&recv, outBytes));
    if (rc == 0 && inBytes)
        rc = int(cudaMemcpyAsync(send, input.data.data(), inBytes, cudaMemcpyHostToDevice, stream));
    if (rc != 0) cudaFail("preparing an NCCL rank", rc);
    if (!failure)
        if (ncclResult_t nrc = ncclCommInitRank(&comm, int(ranks), id, int(rank)); nrc != ncclSuccess) {
            comm = nullptr;
            ncclFail("ncclCommInitRank", nrc);
        }
    if (!failure && count) {
        ncclResult_t nrc = ncclSuccess;
        const char* what = "";
        switch (p.kind) {
            case CollectiveKind::AllReduce:
                what = "ncclAllReduce";
                nrc = ncclAllReduce(send, recv, count, *type, ncclOpOf(p.reduce), comm, stream);
                break;
            case CollectiveKind::AllGather:
                what = "ncclAllGather";
                nrc = ncclAllGather(send, recv, count, *type, comm, stream);
                break;
            case CollectiveKind::ReduceScatter:
                what = "ncclReduceScatter";
                nrc = ncclReduceScatter(send, recv, size_t(out.elementCount()), *type, ncclOpOf(p.reduce),
                                        comm, stream);
                break;
            case CollectiveKind::Broadcast:
                what = "ncclBroadcast";
                nrc = ncclBroadcast(send, recv, count, *type, int(p.root), comm, stream);
                break;
        }
        if (nrc != ncclSuccess) ncclFail(what, nrc);
    }
    if (!failure && outBytes) {
        rc = int(cudaMemcpyAsync(out.data.data(), recv, outBytes, cudaMemcpyDeviceToHost, stream));
        if (rc == 0) rc = int(cudaStreamSynchronize(stream));
        if (rc != 0) cudaFail("running the NCCL collective", rc);
    }
    if (!failure && comm) {
        ncclResult_t async = ncclSuccess;
        if (ncclCommGetAsyncError(comm, &async) == ncclSuccess && async != ncclSuccess)
            ncclFail("the NCCL collective", async);
    }
    // A failed communicator may block in ncclCommDestroy: it is aborted instead.
    if (comm) failure ? ncclCommAbort(comm) : ncclCommDestroy(comm);
    cudaFree(send);
    cudaFree(recv);
    if (stream) cudaStreamDestroy(stream);
    if (failure) return *failure;
    return out;
}

#else

Result<std::vector<uint8_t>> ncclCreateUniqueIdBytes()
{
    return Error{"this build has no NCCL (nccl.h and libnccl were not found when it was configured)",
                 ErrorCode::Device};
}

Result<HostTensor> ncclRunCollectiveRank(const CollectiveProblem&, size_t, size_t, int,
                                         const std::vector<uint8_t>&, int*)
{
    return Error{"this build has no NCCL (nccl.h and libnccl were not found when it was configured)",
                 ErrorCode::Device};
}

#endif

}  // namespace faultline::cuda
