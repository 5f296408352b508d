#include "NormGolden.h"

namespace faultline::golden {

void layerNormGolden(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t n,
                     float eps)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        const LayerNormStats s = layerNormRowStats(xr, n, eps);
        for (int64_t i = 0; i < n; ++i) yr[i] = fmaRn(mulRn(xr[i] - s.mean, s.rstd), gamma[i], beta[i]);
    }
}

void rmsNormGolden(const float* x, const float* gamma, float* y, int64_t rows, int64_t n, float eps)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        const float rstd = rmsNormRowRstd(xr, n, eps);
        for (int64_t i = 0; i < n; ++i) yr[i] = mulRn(mulRn(xr[i], rstd), gamma[i]);
    }
}

}  // namespace faultline::golden
