#include "SoftmaxGolden.h"

namespace faultline::golden {

void softmaxGolden(const float* x, float* y, int64_t rows, int64_t n, bool hasScale, float scale)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        for (int64_t j = 0; j < n; ++j) yr[j] = hasScale ? mulRn(scale, xr[j]) : xr[j];
        softmaxRowInPlace(yr, n);
    }
}

}  // namespace faultline::golden
