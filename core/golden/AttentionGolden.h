#pragma once
// Golden scaled dot-product attention: out = softmax(scale * Q K^T, masked) V for q [b,h,sq,d],
// k [b,h,sk,d], v [b,h,sk,dv], float in and out. Literally three golden pieces in a row:
//   scores  s_ij = gemmEpilogue(dotChain(q_i, k_j over d ascending), alpha = scale)
//                = mulRn(scale, chain)                               (golden GEMM, k = d)
//   mask    causal: s_ij = -inf for j > i (top-left aligned, as PyTorch's is_causal)
//   probs   p_i = softmaxRowInPlace(s_i)                             (SoftmaxGolden.h)
//   out     o_ic = dotChain(p_i, v_c over j ascending, all sk keys)   (golden GEMM, k = sk)
// Scores and probabilities stay float; only `out` is rounded to the output dtype. The PV chain
// runs over every key, masked ones included (their p is +0.0f, so a finite v adds nothing; a NaN
// or inf in a masked row of v does poison the output, as softmax(..) @ v does in PyTorch).
// scale defaults (in OpRegistry) to float(1 / sqrt(double(d))).
#include <cstdint>

#include "GemmGolden.h"

namespace faultline::golden {

struct AttentionShape {
    int64_t batch = 1, heads = 1, sq = 0, sk = 0, d = 0, dv = 0;
};

// q, k, v, out contiguous as above.
void attentionGolden(const float* q, const float* k, const float* v, float* out, const AttentionShape& shape,
                     float scale, bool causal, const GemmRunOptions& run = {});

// The golden scaled, masked scores of `heads` consecutive (batch, head) pairs:
// scores [heads, sq, sk], masked entries -inf.
void attentionScores(const float* q, const float* k, float* scores, int64_t heads, int64_t sq, int64_t sk,
                     int64_t d, float scale, bool causal, const GemmRunOptions& run = {});

// The golden probabilities of `heads` consecutive (batch, head) pairs: p [heads, sq, sk].
void attentionProbabilities(const float* q, const float* k, float* p, int64_t heads, int64_t sq, int64_t sk,
                            int64_t d, float scale, bool causal, const GemmRunOptions& run = {});

}  // namespace faultline::golden
