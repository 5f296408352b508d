#pragma once
// The golden model's ops, registered in ONE place (OpRegistry.cpp): for every trace v1 op its
// name, the inputs and parameters it accepts (validated with messages such as
// "op gemm: inputs[1] has shape [64, 32] but trans_b=0 needs [k, n] = [48, n]"), the output
// shape and dtype it produces, the golden computation and its error bound.
//
// Ops and semantics (docs/formats.md, trace v1):
//   gemm        [A, B] or [A, B, C]; trans_a, trans_b (0/1, default 0), alpha, beta (default 1,
//               0), out_dtype (default A's dtype). D = alpha op(A) op(B) + beta C; A [..., m, k]
//               ([..., k, m] with trans_a), B [..., k, n] ([..., n, k] with trans_b); leading
//               dims are batch dims and broadcast numpy-style; C broadcasts to D [..., m, n].
//   layernorm   [x, gamma, beta] over the last axis, eps (default 1e-5, PyTorch's)
//   rmsnorm     [x, gamma] over the last axis, eps (required: there is no common default)
//   softmax     [x] over the last axis, optional scale (applied to x first)
//   gelu        [x], approximate = none (default) | tanh
//   silu        [x]
//   add         [x, y], same shape
//   attention   [q, k, v] = [b, h, sq, d], [b, h, sk, d], [b, h, sk, dv]; causal (default 0),
//               scale (default 1/sqrt(d))
//   all_reduce  [x_rank0, x_rank1, ...] same shape and dtype; reduce_op sum (default) | max |
//               min; ranks (device labels, one per input; not used by the computation)
//   all_gather, reduce_scatter, broadcast: see CollectiveGolden.h
// Input dtypes: float32, bfloat16, float16, float8_e4m3fn, float8_e5m2 (widened to float
// exactly); outputs have the first input's dtype (gemm: out_dtype) and are rounded once from
// the float result. The orders are GoldenOrder.h's; each op's file documents its formula.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "ErrorBounds.h"
#include "GemmGolden.h"
#include "GoldenSupport.h"
#include "OpChecks.h"  // OutputSpec, GoldenInputs, kMaxGoldenElements

namespace faultline::golden {

struct GoldenRunOptions {
    int threads = 0;  // 0: all cores. The bits never depend on it.
    GemmKernel gemmKernel = GemmKernel::Auto;
};

struct GoldenOp {
    std::string_view name;
    std::string_view signature;            // e.g. "gemm(A, B[, C])"
    std::vector<std::string_view> params;  // the parameters it reads
    // Validates inputs and parameters; the output's dtype and shape.
    Result<OutputSpec> (*infer)(GoldenInputs inputs, const OpParams& params);
    // Validates, then computes the golden output.
    Result<HostTensor> (*run)(GoldenInputs inputs, const OpParams& params, const GoldenRunOptions& options);
    // Validates (golden must have the inferred dtype and shape), then the per-element bound.
    Result<std::vector<double>> (*bound)(GoldenInputs inputs, const OpParams& params,
                                         const HostTensor& golden, const BoundOptions& options);
};

// Every registered op, in trace v1's order.
std::span<const GoldenOp> goldenOps();
// nullptr when `name` is not a golden op.
const GoldenOp* findGoldenOp(std::string_view name);

// The same three, by name; an unknown op is an error "op NAME: the golden model has no such op",
// and so is a parameter the op does not read (what faultline_capture records on every op, such
// as aten and allow_tf32, and how a cuda target replays it, such as impl and tf32, excepted).
Result<OutputSpec> inferGoldenOutput(std::string_view op, GoldenInputs inputs, const OpParams& params);
Result<HostTensor> runGolden(std::string_view op, GoldenInputs inputs, const OpParams& params,
                             const GoldenRunOptions& options = {});
Result<std::vector<double>> goldenErrorBound(std::string_view op, GoldenInputs inputs, const OpParams& params,
                                             const HostTensor& golden, const BoundOptions& options = {});

}  // namespace faultline::golden
