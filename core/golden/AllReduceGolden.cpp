#include "AllReduceGolden.h"

#include "GoldenOrder.h"

namespace faultline::golden {

std::optional<ReduceOp> parseReduceOp(std::string_view name)
{
    if (name == "sum") return ReduceOp::Sum;
    if (name == "max") return ReduceOp::Max;
    if (name == "min") return ReduceOp::Min;
    return std::nullopt;
}

void allReduceGolden(ReduceOp op, std::span<const float* const> ranks, float* out, int64_t count)
{
    if (ranks.empty()) return;
    for (int64_t i = 0; i < count; ++i) {
        float acc = ranks[0][i];
        for (size_t r = 1; r < ranks.size(); ++r) {
            const float x = ranks[r][i];
            switch (op) {
                case ReduceOp::Sum:
                    acc = acc + x;
                    break;
                case ReduceOp::Max:
                    acc = goldenMax(acc, x);
                    break;
                case ReduceOp::Min:
                    acc = goldenMin(acc, x);
                    break;
            }
        }
        out[i] = acc;
    }
}

}  // namespace faultline::golden
