#pragma once
// Golden all_reduce: the element-wise reduction of every rank's tensor, in rank order, in float:
//   acc = x_rank0[i]; for r = 1, 2, ...: acc = acc (op) x_rank_r[i]
// sum: acc + x; max/min: goldenMax/goldenMin (NaN propagates, max(+0,-0) = +0, min = -0).
// Narrow dtypes accumulate in float and round once at the end (OpRegistry).
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace faultline::golden {

enum class ReduceOp { Sum, Max, Min };

std::optional<ReduceOp> parseReduceOp(std::string_view name);  // "sum", "max", "min"

void allReduceGolden(ReduceOp op, std::span<const float* const> ranks, float* out, int64_t count);

}  // namespace faultline::golden
