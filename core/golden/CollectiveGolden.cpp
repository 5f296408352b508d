#include "CollectiveGolden.h"

#include <algorithm>
#include <cstring>

namespace faultline::golden {

bool isCollectiveOp(std::string_view op)
{
    return op == "all_reduce" || op == "reduce_scatter" || isDataMovementOp(op);
}

bool isDataMovementOp(std::string_view op)
{
    return op == "all_gather" || op == "broadcast";
}

std::vector<std::string> rankLabels(const OpParams& params)
{
    const auto it = params.find("ranks");
    if (it == params.end()) return {};
    if (const auto* labels = std::get_if<std::vector<std::string>>(&it->second)) return *labels;
    if (const auto* label = std::get_if<std::string>(&it->second)) return {*label};
    return {};
}

HostTensor concatenateRows(std::span<const HostTensor> parts)
{
    if (parts.empty()) return {};
    std::vector<uint64_t> shape = parts[0].shape;
    if (!shape.empty()) shape[0] *= parts.size();
    HostTensor out(parts[0].dtype, shape);
    size_t at = 0;
    for (const HostTensor& p : parts) {
        const size_t n = std::min(p.data.size(), out.data.size() - at);
        if (n) std::memcpy(out.data.data() + at, p.data.data(), n);
        at += n;
    }
    return out;
}

namespace {

uint64_t rowElements(std::span<const uint64_t> shape)
{
    uint64_t n = 1;
    for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
    return n;
}

}  // namespace

HostTensor rowsOf(const HostTensor& t, RowBlock rows)
{
    std::vector<uint64_t> shape = t.shape;
    if (shape.empty()) return t;
    shape[0] = rows.count;
    HostTensor out(t.dtype, shape);
    const size_t rowBytes = size_t(rowElements(t.shape)) * dtypeSize(t.dtype);
    const size_t from = size_t(rows.begin) * rowBytes;
    if (from + out.data.size() <= t.data.size() && !out.data.empty())
        std::memcpy(out.data.data(), t.data.data() + from, out.data.size());
    return out;
}

std::vector<double> rowsOf(std::span<const double> values, std::span<const uint64_t> shape, RowBlock rows)
{
    if (shape.empty()) return {values.begin(), values.end()};
    const size_t row = size_t(rowElements(shape));
    const size_t from = std::min(values.size(), size_t(rows.begin) * row);
    const size_t to = std::min(values.size(), from + size_t(rows.count) * row);
    return {values.begin() + ptrdiff_t(from), values.begin() + ptrdiff_t(to)};
}

Result<std::optional<RowBlock>> recordedRowsOf(std::string_view op, const OpParams& params,
                                               std::string_view label, std::span<const uint64_t> goldenShape)
{
    if (op != "reduce_scatter") return std::optional<RowBlock>();
    const std::vector<std::string> labels = rankLabels(params);
    const auto it = std::find(labels.begin(), labels.end(), label);
    if (it == labels.end())
        return opError(op, "device '" + std::string(label) +
                               "' is not one of the op's ranks, so which block it holds is unknown");
    if (goldenShape.empty() || goldenShape[0] % labels.size() != 0)
        return opError(op, "output shape " + shapeString(goldenShape) + " does not split into " +
                               std::to_string(labels.size()) + " blocks along dim 0");
    const uint64_t block = goldenShape[0] / labels.size();
    return std::optional<RowBlock>(RowBlock{uint64_t(it - labels.begin()) * block, block});
}

}  // namespace faultline::golden
