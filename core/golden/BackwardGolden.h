#pragma once
// Golden backward of softmax, layernorm, gelu and silu: float in and out (the glue in
// BackwardOps.cpp widens and rounds once), every sum in the golden tree (GoldenOrder.h).
//
//   softmax_backward     S = treeSum(g_j p_j); gi_j = p_j (g_j - S)         (p: softmax's output)
//   layernorm backward   per row i of n (a = rstd_i, mu = mean_i, as recorded by the forward):
//                        xhat_j = (x_j - mu) a; gd_j = gamma_j dy_j; db = treeSum(gd);
//                        ds = treeSum(gd_j xhat_j);
//                        grad_input_j = a ((gd_j - db / n) - xhat_j (ds / n))
//                        grad_weight_j = treeSum over rows of dy_ij xhat_ij
//                        grad_bias_j = treeSum over rows of dy_ij
//                        cpu_order = T (PyTorch's CPU kernel on T threads, bf16: checked bit for
//                        bit against torch 1.13 and 2.15): the rows split into min(T, rows)
//                        contiguous chunks of ceil(rows / that); per chunk, from +0, row by row
//                        partial = round_out(partial + dy (a x + b)) with b = -(a mu) (grad_weight)
//                        or round_out(partial + dy) (grad_bias); the chunks' partials added in float
//                        in chunk order from +0, rounded once
//   gelu_backward none   cdf = 0.5 (1 + erf(x sqrt(1/2))); pdf = (1/sqrt(2 pi)) exp(-x^2/2);
//                        gi = g (cdf + x pdf)                               (PyTorch's formula)
//   gelu_backward tanh   t = tanh(b (x + k x^3)), b = sqrt(2/pi), k = 0.044715;
//                        gi = g (0.5 (1 + t) + (0.5 x)(1 - t^2)(b (1 + 3k x^2)))
//   silu_backward        s = 1 / (1 + exp(-x)); gi = (g s)(1 + x (1 - s))
// Products are mulRn (never fused); erf, exp and tanh are GoldenMath.h's.
#include <cstdint>

#include "../DType.h"
#include "ActivationGolden.h"

namespace faultline::golden {

void softmaxBackwardGolden(const float* g, const float* p, float* gi, int64_t rows, int64_t n);

// dy, x: rows x n; mean, rstd: rows; gamma: n.
struct LayerNormBackwardInput {
    const float* dy = nullptr;
    const float* x = nullptr;
    const float* mean = nullptr;
    const float* rstd = nullptr;
    const float* gamma = nullptr;
    int64_t rows = 0, n = 0;
    int64_t cpuRowChunks = 0;         // > 0: grad_weight/grad_bias in PyTorch's CPU order (above)
    DType partials = DType::Float32;  // the type its partial sums are rounded to
};
enum class LayerNormGrad { Input, Weight, Bias };
// Input: rows x n values; Weight, Bias: n.
void layerNormBackwardGolden(LayerNormGrad which, const LayerNormBackwardInput& in, float* out);
// grad_weight/grad_bias in PyTorch's CPU order with each of its compilers' choices: the term's
// a x + b and the partial sum's add fused into FMAs or not.
void layerNormColumnSumsCpuOrder(LayerNormGrad which, const LayerNormBackwardInput& in, bool fuseInner,
                                 bool fuseAdd, float* out);

// kind: GeluErf, GeluTanh or Silu.
void activationBackwardGolden(Activation kind, const float* g, const float* x, float* gi, int64_t count);

}  // namespace faultline::golden
