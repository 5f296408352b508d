#pragma once
// Golden layernorm and rmsnorm over the last axis, float in and out (OpRegistry widens and
// rounds). Order, with every sum in the golden tree (GoldenOrder.h) and n the row length:
//   layernorm: mean = treeSum(x) / n;  d_i = x_i - mean;  var = treeSum(mulRn(d_i, d_i)) / n;
//              rstd = 1 / sqrt(var + eps);  y_i = fma(mulRn(d_i, rstd), gamma_i, beta_i)
//   rmsnorm:   ms = treeSum(mulRn(x_i, x_i)) / n;  rstd = 1 / sqrt(ms + eps);
//              y_i = mulRn(mulRn(x_i, rstd), gamma_i)
// (n as float is exact for n < 2^24; division and sqrt are the correctly rounded ones.)
#include <cstdint>

#include "GoldenOrder.h"

namespace faultline::golden {

// Row statistics as the golden layernorm computes them.
struct LayerNormStats {
    float mean;
    float rstd;
};

FL_HD LayerNormStats layerNormRowStats(const float* x, int64_t n, float eps)
{
    const float count = float(n);
    const float mean = divRn(treeSumRow(x, n), count);
    const float sq = treeSum(
        [x, mean](int64_t i) {
            const float d = x[i] - mean;
            return mulRn(d, d);
        },
        n);
    const float var = divRn(sq, count);
    return {mean, divRn(1.0f, sqrtRn(var + eps))};
}

FL_HD float rmsNormRowRstd(const float* x, int64_t n, float eps)
{
    const float sq = treeSum([x](int64_t i) { return mulRn(x[i], x[i]); }, n);
    return divRn(1.0f, sqrtRn(divRn(sq, float(n)) + eps));
}

// x, y: rows x n, row-major; gamma, beta: n.
void layerNormGolden(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t n,
                     float eps);
void rmsNormGolden(const float* x, const float* gamma, float* y, int64_t rows, int64_t n, float eps);

}  // namespace faultline::golden
