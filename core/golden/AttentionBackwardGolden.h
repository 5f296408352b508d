#pragma once
// Golden backward of scaled dot-product attention, as fused kernels compute it in one op
// (PyTorch 2.x's _scaled_dot_product_flash_attention_for_cpu_backward; the CUDA flash and
// memory-efficient backward have the same structure). For one (batch, head), q [sq, d],
// k [sk, d], v [sk, dv], the output's gradient g [sq, dv]:
//   s_ij = scale q_i . k_j, masked (causal: j > i, top-left aligned) to -inf;  p_i = softmax(s_i)
//   o_ic = sum_j p_ij v_jc;  dp_ij = sum_c g_ic v_jc;  D_i = sum_c g_ic o_ic
//   ds_ij = p_ij (dp_ij - D_i)
//   dq_ie = scale sum_j ds_ij k_je;  dk_je = scale sum_i ds_ij q_ie;  dv_jc = sum_i p_ij g_ic
// all in double from the inputs (the kernel's saved output and logsumexp are not read: the
// golden answer is the mathematical one), each output rounded once to its dtype.
//
// Bound (first order, per element, then doubled): the kernels widen their inputs to float, sum
// in float (gamma_n with u = 2^-24) and, for bfloat16/float16, round the probabilities, ds and
// the forward's output to the input type before the products (u_n, the input type's unit
// roundoff; u for float32). Score errors scale gamma_d sum |q||k|; the logsumexp's the largest
// score error plus gamma_sk; a probability's relative error twice their sum plus u_n; ds carries
// the errors of dp (gamma_dv sum |g||v|), D (through o's error) and p; each output sums them
// with its own products' gamma. Two output roundings and one subnormal ulp are added.
#include <cstdint>
#include <vector>

#include "AttentionGolden.h"
#include "ErrorBounds.h"

namespace faultline::golden {

enum class AttentionGrad { Query, Key, Value };

struct AttentionBackwardInput {
    const float* g = nullptr;  // [heads, sq, dv]
    const float* q = nullptr;  // [heads, sq, d]
    const float* k = nullptr;  // [heads, sk, d]
    const float* v = nullptr;  // [heads, sk, dv]
    AttentionShape shape;      // batch * heads (batch, heads) pairs
    double scale = 1.0;
    bool causal = false;
    DType inputType = DType::Float32;  // the narrow type of the intermediates (u_n)
};

// The gradient `which` in double: [heads, sq, d] (Query), [heads, sk, d] (Key), [heads, sk, dv]
// (Value).
std::vector<double> attentionBackwardGolden(AttentionGrad which, const AttentionBackwardInput& in);

// The per-element bound of an implementation's `which` against golden (its rounded values).
std::vector<double> attentionBackwardErrorBound(AttentionGrad which, const AttentionBackwardInput& in,
                                                const std::vector<double>& golden, DType out,
                                                const BoundOptions& options);

}  // namespace faultline::golden
