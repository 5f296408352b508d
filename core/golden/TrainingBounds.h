#pragma once
// Error bounds of the loss, embedding and backward ops (LossGolden.h, BackwardGolden.h), in the
// model of ErrorBounds.h with one refinement: the two sides are counted separately. Each bound is
//   B = kBoundSafety (E_production + E_golden) + ulp_out(|golden| + that)
// where E_production is the first-order error of any implementation that rounds every elementary
// step with unit roundoff u_s (u = 2^-24, or the narrow type's when BoundOptions declares narrow
// intermediates), adds n terms in any order and blocking with gamma_n(u_a) (u_a = u, or the narrow
// type's when BoundOptions declares narrow accumulation: PyTorch's CPU kernels for bf16 layernorm
// weight/bias gradients, embedding backward and nll_loss reductions) and evaluates exp, log, erf
// and tanh within kGoldenFunctionUlp ulps; E_golden is the same for the golden model (u, its tree's
// depth ceil(n/32) + 5 for sums). Sums of exact terms (layernorm_backward_bias, embedding_backward,
// nll_loss with reduction sum, the total weight) take no safety factor: their gamma bounds hold to
// every order. Where a result is one rounding of exact arithmetic the bound is 0
// (judged bit for bit): embedding, nll_loss with reduction none, its total weight without class
// weights, nll_loss_backward with reduction none or sum, embedding_backward rows that one index
// (or none) adds to. Per op (magnitudes in exact arithmetic; g the incoming gradient):
//   log_softmax        dz_j = u_s|z_j|, e_s = gamma + sum_k p_k (dz_k + f + u_s) + u_s,
//                      dL = e_s + (f + u_s)|L|, dy_j = dz_j + dL + u_s(|x_j| + |m| + |L| + |y_j|)
//                      (covers x - m - L, x - (m + L) and a sum or log rounded to the narrow type)
//   log_softmax_bw     dS = gamma sum|g| + u_s|S|, dgi_j = p_j dS + p_j|S|(f + 2u_s) + u_s|gi_j|
//   softmax_bw         dS = (gamma + u_s) sum|g p| + u_s|S|,
//                      dgi_j = p_j dS + u_s p_j (|g_j| + |S|) + u_s|gi_j|
//   nll_loss sum/mean  dS = (gamma + u_s) sum|w x|; mean: dS/|W| + |out|(gamma sum|w| + u_s|W|)/|W|
//                      + u_s|out| (CPU bf16 divides by the total weight rounded to bf16)
//   total weight       gamma sum|w| (with class weights)
//   nll_loss_bw mean   1 ulp of the output (2 with class weights: the quotient may or may not be
//                      rounded to the output type before the product)
//   embedding_bw       per output element of a row that c > 1 indices add to:
//                      gamma_{c-1} sum|g| (+ 2u_s sum|g| with scale_grad_by_freq); with cpu_order
//                      (the golden in PyTorch's CPU order, narrow partial sums): 0
//   layernorm grads    a = rstd, mu = mean, P = sum_k |gamma_k dy_k|,
//                      Q = sum_k |gamma_k dy_k|(|x_k| + |mu|) (the uncentred form's magnitudes, as
//                      PyTorch's CPU and CUDA kernels compute b x + c with b = (db mu - ds) a^3 / n):
//                      input: eb = a^3/n (gamma + 9u_s) Q, |b| <= a^3 Q / n,
//                      ec = |mu| eb + u_s|mu||b| + a/n (gamma + 4u_s) P + u_s|c|,
//                      dx_j = 4u_s a|gamma_j dy_j| + |x_j| eb + 2u_s|b||x_j| + ec + u_s|dx_j|;
//                      weight: gamma_rows sum_i |dy (x - mu) a| + 4u_s sum_i |dy| a (|x| + |mu|);
//                      bias: gamma_rows sum_i |dy|; with cpu_order (PyTorch's CPU order emulated):
//                      the largest difference between the FMA choices its compilers may make (0
//                      for bias, and wherever the choices agree)
//   gelu/silu bw       every step of PyTorch's formula (BackwardGolden.h) propagated to first
//                      order, functions within f, constants rounded once (u)
// Results below the normal range add an absolute term per rounding (2^-150 in float, the narrow
// type's half subnormal spacing otherwise). Non-finite golden values: bound +inf (checkWithinBound
// then requires the same class).
#include <cstdint>
#include <span>
#include <vector>

#include "BackwardGolden.h"
#include "ErrorBounds.h"
#include "LossGolden.h"

namespace faultline::golden {

std::vector<double> logSoftmaxErrorBound(const float* x, int64_t rows, int64_t n,
                                         std::span<const double> golden, DType out,
                                         const BoundOptions& options);
std::vector<double> logSoftmaxBackwardErrorBound(const float* g, const float* y, int64_t rows, int64_t n,
                                                 std::span<const double> golden, DType out,
                                                 const BoundOptions& options);
std::vector<double> softmaxBackwardErrorBound(const float* g, const float* p, int64_t rows, int64_t n,
                                              std::span<const double> golden, DType out,
                                              const BoundOptions& options);
std::vector<double> nllLossErrorBound(const NllLossInput& in, std::span<const double> golden, DType out,
                                      const BoundOptions& options);
std::vector<double> nllLossTotalWeightErrorBound(const NllLossInput& in, std::span<const double> golden,
                                                 DType out, const BoundOptions& options);
std::vector<double> nllLossBackwardErrorBound(const NllLossInput& in, std::span<const double> golden,
                                              DType out);
// cpuOrder: the golden followed PyTorch's CPU order with narrow partial sums (bound 0).
std::vector<double> embeddingBackwardErrorBound(const float* grad, const int64_t* idx, int64_t count,
                                                int64_t dim, int64_t numWeights, int64_t padding,
                                                bool scaleByFrequency, bool cpuOrder,
                                                std::span<const double> golden, DType out,
                                                const BoundOptions& options);
std::vector<double> layerNormBackwardErrorBound(LayerNormGrad which, const LayerNormBackwardInput& in,
                                                std::span<const double> golden, DType out,
                                                const BoundOptions& options);
std::vector<double> activationBackwardErrorBound(Activation kind, const float* g, const float* x,
                                                 int64_t count, std::span<const double> golden, DType out,
                                                 const BoundOptions& options);

}  // namespace faultline::golden
