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

// One declaration per row of core/trace/OpList.h: an op without its glue fails to link.
#define FL_TRACE_OP(name, Glue, numerics, collective, signature, ...) FL_GOLDEN_OP_DECLARE(Glue)
#include "../trace/OpList.h"
#undef FL_TRACE_OP

#undef FL_GOLDEN_OP_DECLARE

// The output an op's plan (its checked inputs and the output they give) infers, or its error.
template <class Plan>
Result<OutputSpec> outputOf(const Result<Plan>& plan)
{
    if (!plan) return plan.error();
    return plan->out;
}

}  // namespace faultline::golden::ops
