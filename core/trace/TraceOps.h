#pragma once
// The op vocabulary of trace v1 (docs/formats.md), generated from THE list in OpList.h: which ops
// and which attributes per op this version understands, each op's kind (an enum, so code
// dispatches by kind rather than comparing names) and how it computes. Anything else in a trace
// is reported as a warning when reading, never an error.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// Every op of OpList.h, in its order.
enum class OpKind {
#define FL_TRACE_OP(name, Glue, numerics, collective, signature, ...) Glue,
#include "OpList.h"
#undef FL_TRACE_OP
};

// How an op computes, which decides what its recorded numerics settings change
// (core/golden/RecordedNumerics.h).
enum class OpNumerics {
    MatrixProduct,  // sums of products over k (gemm): accumulation precision, TF32 operands
    Attention,      // products, a softmax and products again: also narrow scores and probabilities
    Reduction,      // sums across ranks (all_reduce, reduce_scatter): accumulation precision
    OneRounding,    // an exact operation rounded once (neg, sqrt): nothing to widen
    DataMovement,   // bytes moved without arithmetic (all_gather, broadcast, where): nothing to widen
    Intermediates,  // norms, softmax, activations: intermediates in the op's dtype
    NarrowSums,     // sums PyTorch's CPU kernels accumulate in the op's dtype (layernorm weight/bias
                    // gradients, embedding backward, nll_loss): also narrow accumulation there
    Pointwise,      // element-wise formulas with scalars or several steps (add with alpha, mul by a
                    // scalar, addcdiv, lerp, pow): bf16/fp16 kernels may round the steps and the
                    // scalars to the op's dtype
    Summation,      // sums over dims, accumulated in float (sum, mean): a bf16/fp16 mean may
                    // divide the sum rounded to the op's dtype
    FloatSteps,     // a formula computed in float whatever the dtype (the fused optimizers'
                    // kernels), the result rounded once to the op's dtype: nothing to widen
};

struct TraceOpSpec {
    OpKind kind;
    std::string_view name;
    std::string_view signature;  // "gemm(A, B[, C])"
    std::vector<std::string_view> params;
    OpNumerics numerics;
    bool collective;
};

// The table, in OpList.h's order.
std::span<const TraceOpSpec> traceOpTable();
// nullptr for an op this version does not know.
const TraceOpSpec* findTraceOp(std::string_view op);
const TraceOpSpec& traceOpSpec(OpKind kind);
std::optional<OpKind> opKindOf(std::string_view op);
std::string_view opName(OpKind kind);
// "matrix_product", "attention", "reduction", "one_rounding", "data_movement", "intermediates",
// "narrow_sums", "pointwise", "summation".
std::string_view opNumericsName(OpNumerics n);

// Attributes every op group may carry: op, inputs, name, phase.
const std::vector<std::string_view>& commonTraceOpAttributes();
// What faultline_capture records on every op (docs/capture.md): how the aten call ran, not what
// the op computes (aten, device_type, call, allow_tf32, ...).
const std::vector<std::string_view>& captureTraceOpAttributes();
// How a `cuda:N` target replays the op (kernels/CudaOpSettings.h; other targets ignore them): impl,
// library, tf32, math_mode, compute_type, algo, workspace, grid. Not what the op computes, so the
// golden model accepts them; tf32 and the FAST compute types widen the bound, grid places tiles on
// fewer SMs (golden/ReplaySettings.h).
const std::vector<std::string_view>& replaySettingAttributes();
// The op parameters this version knows for `op` (e.g. gemm: trans_a, trans_b, alpha, beta,
// out_dtype); empty for unknown ops.
const std::vector<std::string_view>& knownTraceOpParameters(const std::string& op);
// True when `attribute` is a common attribute, a known parameter of `op`, or (for a known op) a
// capture or replay-setting attribute.
bool isKnownTraceOpAttribute(const std::string& op, const std::string& attribute);

}  // namespace faultline
