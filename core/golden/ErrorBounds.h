#pragma once
// Per-element error bounds for judging an implementation that is correct but computes in another
// order than the golden model (cuBLAS, cuDNN, NCCL, numpy, PyTorch CPU): for every output element
// a bound B such that any such implementation's d satisfies |d - d_golden| <= B, while real
// corruption (a flipped exponent or high mantissa bit, a stuck bit around bit 20 of a float, a
// sign flip) lands outside for typical data.
//
// Model. u = 2^-24 (float32). Each bound adds the worst-case error of the golden model and of the
// other implementation from the exact result (the "2" below), each followed by its own rounding
// to the output dtype (one ulp of the output dtype at |d| covers both roundings):
//   gemm     B = |alpha| S (gamma_k(u) + gamma_k(u_acc)(1+u_op)^2 + 2u_op + u_op^2)
//                + 4u (|alpha| S (1+gamma) + |beta c|) + ulp_out
//            S = sum_k |a_ik||b_kj| (computed by the golden GEMM on |A|,|B| and inflated by
//            1 + 2 gamma_k), gamma_k = k u / (1 - k u). Rigorous for any summation order, fused
//            or not, with accumulation in float or better. u_op: TF32 (2^-11) or another operand
//            rounding the caller declares; u_acc: a coarser accumulation the caller declares.
//   others   first-order error propagation of each step of the golden formula (rounding of
//            every elementary operation, gamma_n for every n-term sum in any order, and
//            kGoldenFunctionUlp ulps for exp/erf/tanh/sqrt/rsqrt in either implementation),
//            B = 2 * kBoundSafety * (one side's first-order error) + ulp_out. The safety factor
//            absorbs second-order terms and library functions that are worse than 4 ulp.
//     layernorm  mean error dmu = gamma_n mean|x| + 2u|mu|; var relative error
//                (gamma_n var + 2(dmu mean|d| + u var) + 3u var + dmu^2) / (var + eps) + u;
//                rstd relative error half of that + 4u; y error |g| rstd (dmu + u|d|)
//                + |d rstd g| (e_rstd + 2u) + u|y|. Holds for two-pass or Welford variance, not
//                for the cancelling one-pass E[x^2] - E[x]^2.
//     rmsnorm    e_ms = (gamma_n + 2u) ms / (ms + eps) + u; e_rstd = e_ms/2 + 4u;
//                dy = |y| (e_rstd + 2u).
//     softmax    y = scale x (error dy_j = u|y_j| with a scale, 0 without), m = max y,
//                z = y - m: dz_j = dy_j + max_j dy_j + u(|y_j| + |m|) + u|z_j|;
//                e_j = dz_j + 4u; e_sum = gamma_n + sum_j p_j e_j; dp_j = p_j (e_j + e_sum + u).
//     attention  score error |scale| (gamma_d + gamma_d(u_acc) + u_op terms) sum_t |q||k|
//                + 2u|y|, then softmax as above (the max's error is the largest score error),
//                then out error sum_j p_j e_pj |v_jc| + (gamma_sk + u_op terms) sum_j p_j |v_jc|.
//     gelu/silu  argument error through the derivative, 4u per special function, u per
//                rounding (see ErrorBounds.cpp).
//     add, mul, and the other element-wise formulas, sum, mean: PointwiseOps.cpp's model.
//     all_reduce sum: (gamma_{R-1}(u) + gamma_{R-1}(u_acc)) sum_r |x_r| + ulp_out; max/min: 0
//                (exact in any order).
// Non-finite results: where the golden value is NaN or ±inf the bound is +inf and
// checkWithinBound requires the same class (NaN for NaN, the same infinity).
//
// Reduced-precision implementations (BoundOptions, set from what a trace records; see
// RecordedNumerics.h). Measured on PyTorch 1.13's CPU kernels in bfloat16:
//   - small bmm/mm accumulate in bfloat16 (every product and partial sum rounded):
//     u_acc = 2^-8 turns gamma_k(u_acc) into k 2^-8 of S. Rigorous, and loose: a corruption
//     smaller than that share of S is not seen (callers say so per op);
//   - split-K with a reduced-precision reduction (cuBLAS, reduced_precision_reduction=1): each of
//     the s parts sums its products in float and is rounded to the narrow type, and the parts are
//     summed in it: the implementation's relative error of S is (1 + gamma_k(u_acc))
//     (1 + gamma_{s+1}(u_n)) - 1 (the +1: the epilogue's beta C in the narrow type), and beta C
//     carries gamma_{s+1}(u_n) of |beta c|. It grows with s, not k;
//   - subnormal flushing (oneDNN, flushSubnormals): each input read as zero, each product and sum
//     flushed, costs below 2^-126 absolute: 2^-126 (|alpha| (sum_l |a_il| + sum_l |b_lj| + 2k + 2)
//     + |beta| + 1) per element;
//   - layernorm returns mean and rstd within a few bf16 ulps (about 1.5 of mean|x| and 3 of
//     rstd, independent of n) and evaluates (x scale + bias) gamma + beta with each step
//     rounded to bf16, bias = -mean rstd: intermediates of unit roundoff u_i = 2^-8.
// With u_i > u (intermediateUnitRoundoff) every elementary step of the formulas above rounds
// with u_i instead of u, and the statistics of the norms carry kNarrowStatisticsRoundings u_i
// more (of mean|x| for the mean, relative for the variance and the mean square); softmax and
// attention add one u_i rounding of exp and of the scores; layernorm's y error uses
// u_i (|x| + |mu|) for the scale-and-shift form instead of u |x - mu|. Narrow intermediates
// may be subnormal, where a rounding's error is absolute: each such bound adds
// kNarrowSteps * intermediateAbsoluteRoundoff. gemm and all_reduce read
// u_acc only.
#include <cstdint>
#include <span>
#include <vector>

#include "../DType.h"
#include "ActivationGolden.h"
#include "AllReduceGolden.h"
#include "AttentionGolden.h"
#include "GemmGolden.h"

namespace faultline::golden {

inline constexpr double kBoundSafety = 2.0;

// What the caller knows about the implementation being judged.
struct BoundOptions {
    bool tf32 = false;                          // GEMM/attention operands were rounded to TF32
    double operandUnitRoundoff = 0.0;           // other operand rounding (e.g. 2^-8: P rounded to
                                                // bf16 in a flash kernel); the larger one applies
    double accumulationUnitRoundoff = 0.0;      // coarser accumulation than float (e.g. 2^-8 for
                                                // NCCL's bf16 all_reduce); 0 = float or better
    double intermediateUnitRoundoff = 0.0;      // intermediates (norm statistics, scores,
                                                // elementwise steps) rounded to a narrower type
                                                // than float, e.g. 2^-8 for PyTorch's bf16 CPU
                                                // kernels; 0 = float or better
    double intermediateAbsoluteRoundoff = 0.0;  // one such rounding's absolute error in the
                                                // subnormal range (half the narrow type's
                                                // smallest subnormal: 2^-134 for bf16)
    int threads = 0;                            // for the GEMMs inside the bounds (0 = all cores)
    // GEMM split-K with reduced-precision reduction (cuBLAS with reduced_precision_reduction=1):
    // K cut into at most splitCount parts, each summed with accumulationUnitRoundoff (float),
    // each part rounded to a type of unit roundoff splitUnitRoundoff (2^-8 for bf16) and the parts
    // summed in it. splitCount <= 1: no split.
    int64_t splitCount = 0;
    double splitUnitRoundoff = 0.0;
    // GEMM: the implementation reads subnormal inputs as zero and flushes subnormal products and
    // sums (oneDNN's vdpbf16ps, DAZ/FTZ): absolute errors below 2^-126 per step.
    bool flushSubnormals = false;
    // sqrt (and pow with exponent 0.5) may be faithfully rounded, one ulp from the correctly
    // rounded value, rather than correctly rounded: PyTorch 2.x's vectorised CPU sqrt (AVX-512
    // and AVX2 builds through Sleef's 0.5001-ulp sqrt) is not IEEE's sqrt. Golden stays sqrtRn.
    bool faithfulSqrt = false;
};

// Extra roundings of norm statistics allowed when intermediates are narrow (see above).
inline constexpr double kNarrowStatisticsRoundings = 4.0;
// Roundings of a narrow intermediate per output element counted for the subnormal term.
inline constexpr double kNarrowSteps = 4.0;

// Element-by-element judgement of `candidate` against `golden` with bounds `bound`.
struct BoundCheck {
    uint64_t checked = 0;
    uint64_t violations = 0;
    int64_t firstViolation = -1;  // element index, -1 for none
    int64_t worstIndex = -1;      // element with the largest |d - g| / B (-1 when all equal)
    double worstRatio = 0.0;      // that ratio (inf where B is 0 and they differ, or a class
                                  // mismatch: NaN vs number, a different infinity)
};
// Golden NaN: the candidate must be NaN. Golden ±inf: the candidate must be the same infinity.
// Golden finite: the candidate must be finite and within B. All three spans have one size.
BoundCheck checkWithinBound(std::span<const double> candidate, std::span<const double> golden,
                            std::span<const double> bound);

// ---- per-op bounds, on the float inputs the golden kernels take ----------------------------
// `golden` holds the golden output values (after rounding to `out`) widened to double.

struct GemmBoundInput {
    const GemmOperands* ops = nullptr;    // a, b, strides, offsets as the golden ran (out unused)
    size_t aElements = 0, bElements = 0;  // extent of ops->a and ops->b
    float alpha = 1.0f, beta = 0.0f;
    const float* c = nullptr;  // C broadcast to the output layout; null when C is not read
};
std::vector<double> gemmErrorBound(const GemmBoundInput& in, std::span<const double> golden, DType out,
                                   const BoundOptions& options = {});

std::vector<double> layerNormErrorBound(const float* x, const float* gamma, const float* beta, int64_t rows,
                                        int64_t n, float eps, std::span<const double> golden, DType out,
                                        const BoundOptions& options = {});
std::vector<double> rmsNormErrorBound(const float* x, const float* gamma, int64_t rows, int64_t n, float eps,
                                      std::span<const double> golden, DType out,
                                      const BoundOptions& options = {});
std::vector<double> softmaxErrorBound(const float* x, int64_t rows, int64_t n, bool hasScale, float scale,
                                      std::span<const double> golden, DType out,
                                      const BoundOptions& options = {});
std::vector<double> activationErrorBound(Activation kind, const float* x, int64_t count,
                                         std::span<const double> golden, DType out,
                                         const BoundOptions& options = {});
std::vector<double> attentionErrorBound(const float* q, const float* k, const float* v,
                                        const AttentionShape& shape, float scale, bool causal,
                                        std::span<const double> golden, DType out,
                                        const BoundOptions& options = {});
std::vector<double> allReduceErrorBound(ReduceOp op, std::span<const float* const> ranks, int64_t count,
                                        std::span<const double> golden, DType out,
                                        const BoundOptions& options = {});

}  // namespace faultline::golden
