#include "PointwiseSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace faultline::golden {

BroadcastOperand::BroadcastOperand(const HostTensor& t, std::span<const uint64_t> outShape)
    : m_values(toFloatVector(t))
{
    if (!std::equal(t.shape.begin(), t.shape.end(), outShape.begin(), outShape.end()))
        m_index = broadcastIndex(t.shape, outShape);
}

FormulaRoundoff::FormulaRoundoff(const BoundOptions& options)
{
    if (options.intermediateUnitRoundoff > u) {
        ui = options.intermediateUnitRoundoff;
        us = options.intermediateUnitRoundoff;
    }
    etai = std::max(eta, options.intermediateAbsoluteRoundoff);
    faithfulSqrt = options.faithfulSqrt;
}

double formulaBound(double pre, double golden, DType out)
{
    if (pre == 0.0) return 0.0;
    if (!std::isfinite(golden) || !(pre >= 0.0) || std::isinf(pre))
        return std::numeric_limits<double>::infinity();
    double p = kBoundSafety * pre;
    if (out != DType::Float32) p += 2.0 * 0x1p-24 * std::fabs(golden);
    return p + ulpAt(out, std::fabs(golden) + p);
}

bool isMaskDType(DType t)
{
    return t == DType::Bool || t == DType::UInt8 || isGoldenDType(t);
}

Status checkMaskInput(std::string_view op, GoldenInputs in, size_t i, std::string_view role)
{
    const HostTensor& t = in[i];
    const std::string what = inputName(i) + " (" + std::string(role) + ")";
    if (!isMaskDType(t.dtype))
        return opError(op, what + " has dtype " + std::string(dtypeName(t.dtype)) +
                               "; a mask is bool, uint8, " + goldenDTypeList());
    if (isGoldenDType(t.dtype)) return checkGoldenInput(op, t, what);
    const uint64_t limit = uint64_t(std::numeric_limits<int64_t>::max()) / 8;
    uint64_t n = 1;
    for (uint64_t d : t.shape) {
        if (d != 0 && n > limit / d)
            return opError(op, what + " has shape " + shapeString(t.shape) + ", too many elements");
        n *= d;
    }
    if (n != t.data.size())
        return opError(op, what + " has shape " + shapeString(t.shape) + " (" + std::to_string(n) +
                               " bytes) but holds " + std::to_string(t.data.size()) + " bytes");
    return Status::success();
}

Status checkSameFloatInputs(std::string_view op, GoldenInputs in, std::span<const size_t> indices)
{
    for (size_t i : indices)
        if (Status s = checkGoldenInput(op, in[i], inputName(i)); !s) return s;
    for (size_t i : indices)
        if (in[i].dtype != in[indices[0]].dtype)
            return opError(op, inputName(i) + " is " + std::string(dtypeName(in[i].dtype)) + " but " +
                                   inputName(indices[0]) + " is " +
                                   std::string(dtypeName(in[indices[0]].dtype)) +
                                   ": the op computes in one dtype");
    return Status::success();
}

Result<std::vector<uint64_t>> broadcastInputs(std::string_view op, GoldenInputs in,
                                              std::span<const size_t> indices)
{
    std::vector<uint64_t> shape;
    for (size_t i : indices) {
        auto b = broadcastShapes(shape, in[i].shape);
        if (!b)
            return opError(op, inputName(i) + " has shape " + shapeString(in[i].shape) +
                                   ", which does not broadcast with " + shapeString(shape));
        shape = std::move(*b);
    }
    if (Status s = checkOutputSize(op, shape); !s) return s.error();
    return shape;
}

Result<std::optional<std::vector<int64_t>>> paramInts(std::string_view op, const OpParams& p,
                                                      const std::string& name)
{
    const auto it = p.find(name);
    if (it == p.end()) return std::optional<std::vector<int64_t>>();
    if (const auto* iv = std::get_if<std::vector<int64_t>>(&it->second))
        return std::optional<std::vector<int64_t>>(*iv);
    Result<int64_t> one = paramInt(op, p, name, std::nullopt);
    if (!one)
        return opError(
            op, "parameter " + name + "=" + attrValueToString(it->second) + " is not a list of integers");
    return std::optional<std::vector<int64_t>>(std::vector<int64_t>{*one});
}

Result<size_t> wrapDim(std::string_view op, const std::string& what, int64_t dim, size_t rank)
{
    const int64_t r = int64_t(std::max<size_t>(rank, 1));
    if (dim < -r || dim >= r)
        return opError(op, what + "=" + std::to_string(dim) + " is out of range for " + std::to_string(rank) +
                               " dimension(s)");
    return size_t(dim < 0 ? dim + r : dim);
}

std::vector<double> zeroBound(std::string_view op, const OutputSpec& out, const HostTensor& golden,
                              Status& status)
{
    status = checkGolden(op, out, golden);
    return std::vector<double>(status ? size_t(golden.elementCount()) : 0, 0.0);
}

}  // namespace faultline::golden
