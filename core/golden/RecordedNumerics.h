#pragma once
// How an op recorded from a framework is judged: the BoundOptions that cover the
// implementations its recorded settings allow, or, where the production order is known exactly,
// that order's own result with bound 0 (docs/capture.md, "How captured ops are judged").
//
// Read from the op's parameters as faultline_capture writes them:
//   device_type        cpu | cuda (where the kernel ran); absent: not a framework capture, and
//                      the strict bounds apply
//   allow_tf32         1: float32 GEMM/attention operands may be rounded to TF32 (cuda)
//   impl/library, tf32, math_mode, compute_type
//                      how a cuda target replays a gemm (kernels/CudaOpSettings.h): through cuBLAS
//                      the op is judged as CUDA's (device_type or not); TF32 or FAST_16F/16BF
//                      compute types widen a float32 GEMM's bound by its operands' rounding
//   reduced_precision_reduction
//                      1: bf16/fp16 GEMMs may reduce split-K parts in the narrow type (cuda)
//   split_k_max        optional: the most parts cuBLAS may split k into (else kSplitKMinimumDepth)
//   torch_version, torch_threads, mkldnn, onednn_version, cpu_capability, cpu_flags,
//   a_strides, b_strides, aten
//                      which CPU kernel a bf16/fp16 GEMM reached (CpuGemmNumerics.h)
// and the dtype of the op's first input:
//   bf16/fp16 GEMM on cpu
//                      PyTorch 1.13 where the kernel is verified: emulated bit for bit; else
//                      float accumulation where the recorded kernel sums in float (oneDNN, the
//                      dot kernel, PyTorch >= 2.1); else narrow accumulation (loose)
//   bf16/fp16 GEMM on cuda
//                      float accumulation (cuBLAS's default); tensor cores may truncate rather
//                      than round each addition (one float ulp); with reduced_precision_reduction=1
//                      (or on cuBLASLt of PyTorch < 2.8, which ignored the switch: addmm, or
//                      every GEMM with blas_library=cublaslt) a split-K
//                      bound whose width grows with the split count, not k (loose)
//   bf16/fp16 attention on cpu: may accumulate in the narrow type (loose)
//   norms, softmax, activations in bf16/fp16: intermediates in the narrow type
//   narrow sums        (embedding_backward, nll_loss, layernorm weight/bias gradients) of bf16/
//                      fp16 on cpu: PyTorch's CPU kernels keep the partial sums in the narrow
//                      type (loose: (terms - 1) u of sum |x|) unless the capture recorded
//                      cpu_order (the golden model then follows that order bit for bit); on
//                      cuda: float sums, narrow steps
//   all_reduce, reduce_scatter of bf16/fp16 ranks: the sum in the narrow type
//   sqrt, pow 0.5      on cpu, unless torch_version is 1.x: within one ulp (PyTorch 2.x's CPU
//                      sqrt is not correctly rounded), any dtype
//   pointwise formulas of bf16/fp16 (either device): scalars (alpha, value, other, exponent)
//                      and steps rounded to the narrow type (PointwiseOps.cpp)
//   sum, mean          of bf16/fp16: float sums; mean may divide the sum rounded to the narrow
//                      type (PyTorch's CPU mean is sum then div)
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "ErrorBounds.h"
#include "OpChecks.h"
#include "OpRegistry.h"

namespace faultline::golden {

// The assumed smallest k per split of a cuBLAS split-K GEMM, by input type: a part is at least one
// tensor-core MMA deep (PTX mma: k8 for bf16 on sm_80+, k4 for fp16 on sm_70's m8n8k4), so
// s <= ceil(k / depth). cuBLAS documents the split count (CUBLASLT_ALGO_CONFIG_SPLITK_NUM) without
// a maximum: this is an assumption (docs/numerics/gemm-bounds.md).
inline constexpr int64_t kSplitKMinimumDepthBf16 = 8;
inline constexpr int64_t kSplitKMinimumDepthFp16 = 4;

struct RecordedJudgement {
    // The golden model's bound that covers the recorded implementation (for an emulated op too:
    // what a replay on another target is judged with against the recorded output).
    BoundOptions options;
    std::string model;      // "" for the strict bounds, else what the bound allows, in words
    bool loose = false;     // the bound is much wider than typical legitimate errors (narrow
                            // accumulation): a corruption below it is not seen
    bool emulated = false;  // the production order is reproduced bit for bit: the reference is its
                            // result (recordedReference), the bound 0
};

RecordedJudgement recordedJudgement(std::string_view op, const OpParams& params, GoldenInputs inputs);

// What a recorded output is judged against: the golden model and its bound under the recorded
// numerics, or, for an emulated op, the production order's result with bound 0 everywhere.
struct RecordedReference {
    HostTensor expected;
    std::vector<double> bound;
    RecordedJudgement judgement;
};
Result<RecordedReference> recordedReference(std::string_view op, GoldenInputs inputs, const OpParams& params,
                                            const GoldenRunOptions& options = {});

}  // namespace faultline::golden
