#pragma once
// Our dtypes and reductions as NCCL's, shared by the single-process all_reduce (NcclAllReduce)
// and the one-process-per-rank collectives (NcclCollective). Only where NCCL is built.
#ifdef FAULTLINE_HAVE_NCCL
#include <nccl.h>

#include <string>

#include "GoldenKernels.h"
#include "core/DType.h"
#include "core/Result.h"
#include "core/golden/AllReduceGolden.h"

namespace faultline::cuda {

inline Result<ncclDataType_t> ncclTypeOf(DType t)
{
    switch (t) {
        case DType::Float32:
            return ncclFloat32;
        case DType::Float16:
            return ncclFloat16;
        case DType::BFloat16:
            return ncclBfloat16;
        default:
            break;
    }
    return Error{"NCCL replays float32, float16 and bfloat16 collectives, not " + std::string(dtypeName(t))};
}

inline ncclRedOp_t ncclOpOf(ReduceKind k)
{
    switch (k) {
        case ReduceKind::Sum:
            return ncclSum;
        case ReduceKind::Max:
            return ncclMax;
        case ReduceKind::Min:
            return ncclMin;
    }
    return ncclSum;
}

inline ncclRedOp_t ncclOpOf(golden::ReduceOp op)
{
    switch (op) {
        case golden::ReduceOp::Sum:
            return ncclSum;
        case golden::ReduceOp::Max:
            return ncclMax;
        case golden::ReduceOp::Min:
            return ncclMin;
    }
    return ncclSum;
}

}  // namespace faultline::cuda
#endif
