#pragma once
// How an op recorded from a framework is judged: the BoundOptions that cover the
// implementations its recorded settings allow (docs/capture.md, "How captured ops are judged").
//
// Read from the op's parameters as faultline_capture writes them:
//   device_type        cpu | cuda (where the kernel ran); absent: not a framework capture, and
//                      the strict bounds apply
//   allow_tf32         1: float32 GEMM/attention operands may be rounded to TF32 (cuda)
//   reduced_precision_reduction
//                      1: bf16/fp16 GEMMs may reduce (split-K) in the narrow type (cuda)
// and the dtype of the op's first input:
//   bf16/fp16 on cpu   PyTorch's CPU kernels: GEMM and attention may accumulate in the narrow
//                      type, norms, softmax, activations round intermediates to it
//   bf16/fp16 on cuda  intermediates of norms, softmax and activations in the narrow type;
//                      narrow accumulation only with reduced_precision_reduction=1
//   narrow sums        (embedding_backward, nll_loss, layernorm weight/bias gradients) of bf16/
//                      fp16 on cpu: PyTorch's CPU kernels keep the partial sums in the narrow
//                      type (loose: (terms - 1) u of sum |x|) unless the capture recorded
//                      cpu_order (the golden model then follows that order bit for bit); on
//                      cuda: float sums, narrow steps
//   all_reduce, reduce_scatter
//                      of bf16/fp16 ranks: the sum in the narrow type
//   pointwise formulas of bf16/fp16 (either device): scalars (alpha, value, other, exponent)
//                      and steps rounded to the narrow type (PointwiseOps.cpp)
//   sum, mean          of bf16/fp16: float sums; mean may divide the sum rounded to the narrow
//                      type (PyTorch's CPU mean is sum then div)
#include <string>

#include "ErrorBounds.h"
#include "OpChecks.h"

namespace faultline::golden {

struct RecordedJudgement {
    BoundOptions options;
    std::string model;   // "" for the strict bounds, else what the bound allows, in words
    bool loose = false;  // the bound is much wider than typical legitimate errors (narrow
                         // accumulation): a corruption below it is not seen
};

RecordedJudgement recordedJudgement(std::string_view op, const OpParams& params, GoldenInputs inputs);

}  // namespace faultline::golden
