#pragma once
// Golden softmax over the last axis, float in and out. For each row of n values:
//   y_j = hasScale ? mulRn(scale, x_j) : x_j
//   m   = treeMax(y)                     (golden tree, goldenMax; -inf for an all -inf row)
//   e_j = goldenExp(y_j - m)
//   s   = treeSum(e)
//   p_j = e_j / s
// A row that is all -inf, or holds +inf or NaN, gives NaN (as numpy's and PyTorch's max-
// subtracting softmax do). Attention uses the same row function on its masked score rows
// (masked scores are -inf, so their e_j are +0 and, the tree's lanes being fixed, they change
// nothing).
#include <cstdint>

#include "GoldenMath.h"

namespace faultline::golden {

// In place: row[j] <- softmax of row (already scaled).
FL_HD void softmaxRowInPlace(float* row, int64_t n)
{
    const float m = treeMaxRow(row, n);
    for (int64_t j = 0; j < n; ++j) row[j] = goldenExp(row[j] - m);
    const float s = treeSumRow(row, n);
    for (int64_t j = 0; j < n; ++j) row[j] = divRn(row[j], s);
}

// x, y: rows x n, row-major (may be the same buffer).
void softmaxGolden(const float* x, float* y, int64_t rows, int64_t n, bool hasScale, float scale);

}  // namespace faultline::golden
