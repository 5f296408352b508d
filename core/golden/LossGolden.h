#pragma once
// Golden log_softmax (and its backward) over the last axis, nll_loss and its backward, and the
// embedding lookup and its dense backward: float in and out (the glue in LossOps.cpp widens and
// rounds once), every sum in the golden tree (GoldenOrder.h) unless said otherwise.
//
//   log_softmax           m = treeMax(x); z_j = x_j - m; s = treeSum(goldenExp(z_j));
//                         L = goldenLog(s); y_j = z_j - L
//   log_softmax_backward  S = treeSum(g); gi_j = g_j - goldenExp(y_j) S      (y: the forward's output)
//   nll_loss              term_i = -(w[t_i] x[i, t_i]) (0 where t_i = ignore_index; w = 1 without
//                         weights); none: out_i = term_i; sum: treeSum(term); mean: treeSum(term) / W
//   total weight          W = treeSum(w[t_i]) over the rows not ignored (their count without
//                         weights); 0 for reduction none (what PyTorch writes)
//   nll_loss_backward     zeros but gi[i, t_i] (rows not ignored): none: -(w[t_i] g_i);
//                         sum: w[t_i] (-g); mean: w[t_i] q with q = -(g / W) rounded to the output
//                         dtype first (PyTorch's scalar_t arithmetic, CPU and CUDA), w = 1 without
//                         weights
//   embedding             out[i, :] = weight[idx_i, :]
//   embedding_backward    gw[k, :] = sum over i with idx_i = k != padding_idx of g[i, :], added
//                         in ascending i from +0 (PyTorch's CPU order); scale_grad_by_freq:
//                         each g[i, :] times float(1 / count(k)), fused into the add. With
//                         `partials` narrow (cpu_order=1: what PyTorch 1.13 and 2.15's CPU kernel
//                         does in bf16/fp16, checked bit for bit) every partial sum is rounded to it
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../DType.h"

namespace faultline::golden {

enum class LossReduction { None, Mean, Sum };
// "none" | "mean" | "sum"; false for anything else.
bool parseLossReduction(std::string_view text, LossReduction& out);

void logSoftmaxGolden(const float* x, float* y, int64_t rows, int64_t n);
void logSoftmaxBackwardGolden(const float* g, const float* y, float* gi, int64_t rows, int64_t n);

// x: batch x classes; target: batch entries, each in [0, classes) or ignoreIndex; weight: classes
// values or null.
struct NllLossInput {
    const float* x = nullptr;
    const int64_t* target = nullptr;
    const float* weight = nullptr;
    int64_t batch = 0, classes = 0;
    int64_t ignoreIndex = -100;
    LossReduction reduction = LossReduction::Mean;
};
// none: batch values; mean and sum: one.
std::vector<float> nllLossGolden(const NllLossInput& in);
float nllLossTotalWeightGolden(const NllLossInput& in);
// grad: batch values (none) or one; gi: batch x classes, written whole. `out` is the output dtype
// (mean's intermediate quotient is rounded to it).
void nllLossBackwardGolden(const NllLossInput& in, const float* grad, float totalWeight, DType out,
                           float* gi);

// weight: rows x dim; idx: count entries in [0, rows); out: count x dim.
void embeddingGolden(const float* weight, int64_t dim, const int64_t* idx, int64_t count, float* out);
// grad: count x dim; out: numWeights x dim, written whole. padding < 0: none.
void embeddingBackwardGolden(const float* grad, const int64_t* idx, int64_t count, int64_t dim,
                             int64_t numWeights, int64_t padding, bool scaleByFrequency, float* out,
                             DType partials = DType::Float32);
// v rounded once to `t` and widened back (float32: v).
float roundToDType(DType t, float v);

}  // namespace faultline::golden
