#pragma once
// The per-op glue the registry table (OpRegistry.cpp) points at: validation and inference
// (infer*), the golden run (run*) and the bound (bound*) of every op. Internal to core/golden.
#include "OpRegistry.h"

namespace faultline::golden::ops {

#define FL_GOLDEN_OP_DECLARE(Name)                                                       \
    Result<OutputSpec> infer##Name(GoldenInputs inputs, const OpParams& params);         \
    Result<HostTensor> run##Name(GoldenInputs inputs, const OpParams& params,            \
                                 const GoldenRunOptions& options);                       \
    Result<std::vector<double>> bound##Name(GoldenInputs inputs, const OpParams& params, \
                                            const HostTensor& golden, const BoundOptions& options);

FL_GOLDEN_OP_DECLARE(Gemm)
FL_GOLDEN_OP_DECLARE(Attention)
FL_GOLDEN_OP_DECLARE(LayerNorm)
FL_GOLDEN_OP_DECLARE(RmsNorm)
FL_GOLDEN_OP_DECLARE(Softmax)
FL_GOLDEN_OP_DECLARE(Gelu)
FL_GOLDEN_OP_DECLARE(Silu)
FL_GOLDEN_OP_DECLARE(Add)
FL_GOLDEN_OP_DECLARE(Mul)
FL_GOLDEN_OP_DECLARE(AllReduce)
FL_GOLDEN_OP_DECLARE(AllGather)
FL_GOLDEN_OP_DECLARE(ReduceScatter)
FL_GOLDEN_OP_DECLARE(Broadcast)

#undef FL_GOLDEN_OP_DECLARE

}  // namespace faultline::golden::ops
