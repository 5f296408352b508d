#include "OpChecks.h"

#include <cmath>
#include <cstring>

namespace faultline::golden {

std::string inputName(size_t i)
{
    return "inputs[" + std::to_string(i) + "]";
}

Status checkCount(std::string_view op, GoldenInputs in, size_t lo, size_t hi, std::string_view what)
{
    if (in.size() >= lo && in.size() <= hi) return Status::success();
    return opError(op, "needs " + std::string(what) + ", got " + std::to_string(in.size()) + " input" +
                           (in.size() == 1 ? "" : "s"));
}

Status checkInputs(std::string_view op, GoldenInputs in)
{
    for (size_t i = 0; i < in.size(); ++i)
        if (Status s = checkGoldenInput(op, in[i], inputName(i)); !s) return s;
    return Status::success();
}

Status checkOutputSize(std::string_view op, std::span<const uint64_t> shape)
{
    uint64_t n = 1;
    for (uint64_t d : shape) {
        if (d != 0 && n > kMaxGoldenElements / d)
            return opError(op, "output shape " + shapeString(shape) + " has more than 2^31 elements");
        n *= d;
    }
    return Status::success();
}

Result<float> paramFloat(std::string_view op, const OpParams& p, const std::string& name,
                         std::optional<double> fallback)
{
    Result<double> d = paramDouble(op, p, name, fallback);
    if (!d) return d.error();
    return float(*d);  // RNE
}

Result<float> paramEps(std::string_view op, const OpParams& p, std::optional<double> fallback)
{
    Result<double> d = paramDouble(op, p, "eps", fallback);
    if (!d) return d.error();
    if (!std::isfinite(*d) || *d < 0)
        return opError(op, "parameter eps=" + std::to_string(*d) + " must be finite and >= 0");
    return float(*d);
}

Result<RowView> lastAxisRows(std::string_view op, const HostTensor& x, std::string_view what)
{
    if (x.shape.empty())
        return opError(op, std::string(what) + " has shape [] but needs at least one dimension");
    RowView v;
    v.n = int64_t(x.shape.back());
    v.rows = v.n == 0 ? 0 : int64_t(x.elementCount()) / v.n;
    return v;
}

Status checkVector(std::string_view op, GoldenInputs in, size_t i, std::string_view role, uint64_t n)
{
    if (in[i].shape.size() == 1 && in[i].shape[0] == n) return Status::success();
    return opError(op, inputName(i) + " (" + std::string(role) + ") has shape " + shapeString(in[i].shape) +
                           " but needs [" + std::to_string(n) + "] (the last dimension of inputs[0])");
}

bool isIndexDType(DType t)
{
    return t == DType::Int64 || t == DType::Int32;
}

Status checkIndexInput(std::string_view op, GoldenInputs in, size_t i, std::string_view role)
{
    const HostTensor& t = in[i];
    if (!isIndexDType(t.dtype))
        return opError(op, inputName(i) + " (" + std::string(role) + ") has dtype " +
                               std::string(dtypeName(t.dtype)) + " but needs int64 or int32");
    uint64_t n = 1;
    for (uint64_t d : t.shape) {
        if (d != 0 && n > kMaxGoldenElements / d)
            return opError(op, inputName(i) + " has shape " + shapeString(t.shape) + ", too many elements");
        n *= d;
    }
    if (n * dtypeSize(t.dtype) != t.data.size())
        return opError(op, inputName(i) + " has shape " + shapeString(t.shape) + " of " +
                               std::string(dtypeName(t.dtype)) + " but holds " +
                               std::to_string(t.data.size()) + " bytes");
    return Status::success();
}

Status checkFloatInput(std::string_view op, GoldenInputs in, size_t i)
{
    return checkGoldenInput(op, in[i], inputName(i));
}

std::vector<int64_t> indexVector(const HostTensor& t)
{
    std::vector<int64_t> v(size_t(t.elementCount()));
    for (size_t i = 0; i < v.size(); ++i) {
        if (t.dtype == DType::Int64) {
            std::memcpy(&v[i], t.data.data() + i * 8, 8);
        } else {
            int32_t x = 0;
            std::memcpy(&x, t.data.data() + i * 4, 4);
            v[i] = x;
        }
    }
    return v;
}

Result<int64_t> paramInt(std::string_view op, const OpParams& p, const std::string& name,
                         std::optional<int64_t> fallback)
{
    const auto it = p.find(name);
    if (it == p.end()) {
        if (fallback) return *fallback;
        return opError(op, "missing parameter " + name);
    }
    if (const auto* i = std::get_if<int64_t>(&it->second)) return *i;
    if (const auto* iv = std::get_if<std::vector<int64_t>>(&it->second); iv && iv->size() == 1)
        return (*iv)[0];
    if (const auto* d = std::get_if<double>(&it->second);
        d && std::nearbyint(*d) == *d && std::fabs(*d) < 9.0e15)
        return int64_t(*d);
    return opError(op, "parameter " + name + "=" + attrValueToString(it->second) + " is not an integer");
}

Status checkGolden(std::string_view op, const OutputSpec& spec, const HostTensor& golden)
{
    if (golden.dtype != spec.dtype || golden.shape != spec.shape)
        return opError(op, "golden output is " + std::string(dtypeName(golden.dtype)) + " " +
                               shapeString(golden.shape) + " but the op produces " +
                               std::string(dtypeName(spec.dtype)) + " " + shapeString(spec.shape));
    // Ops that move bytes (triu of a mask) produce what they read; arithmetic produces golden dtypes.
    return isGoldenDType(spec.dtype) ? checkGoldenInput(op, golden, "golden output")
                                     : checkMovedInput(op, golden, "golden output");
}

}  // namespace faultline::golden
