#include "GoldenSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../Convert.h"

namespace faultline::golden {

bool isGoldenDType(DType t)
{
    switch (t) {
        case DType::Float32:
        case DType::BFloat16:
        case DType::Float16:
        case DType::Float8E4M3FN:
        case DType::Float8E5M2:
            return true;
        default:
            return false;
    }
}

std::string goldenDTypeList()
{
    return "float32, bfloat16, float16, float8_e4m3fn, float8_e5m2";
}

Error opError(std::string_view op, const std::string& message)
{
    return Error{"op " + std::string(op) + ": " + message, ErrorCode::Format};
}

std::string shapeString(std::span<const uint64_t> shape)
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

std::vector<float> toFloatVector(const HostTensor& t)
{
    std::vector<float> v(size_t(t.elementCount()));
    convertToFloat(t.dtype, t.data.data(), v.data(), v.size());
    return v;
}

HostTensor fromFloatVector(DType dtype, std::vector<uint64_t> shape, std::span<const float> values)
{
    HostTensor t(dtype, std::move(shape));
    convertFromFloat(dtype, values.data(), t.data.data(), values.size());
    return t;
}

std::vector<double> toDoubleVector(const HostTensor& t)
{
    std::vector<double> v(size_t(t.elementCount()));
    convertToDouble(t.dtype, t.data.data(), v.data(), v.size());
    return v;
}

Status checkGoldenInput(std::string_view op, const HostTensor& t, std::string_view what)
{
    if (!isGoldenDType(t.dtype))
        return opError(op, std::string(what) + " has dtype " + std::string(dtypeName(t.dtype)) +
                               "; the golden model reads " + goldenDTypeList());
    return checkMovedInput(op, t, what);
}

Status checkMovedInput(std::string_view op, const HostTensor& t, std::string_view what)
{
    // Overflow-safe element count: every dimension must fit what the bytes can hold.
    const uint64_t limit = uint64_t(std::numeric_limits<int64_t>::max()) / 8;
    uint64_t n = 1;
    for (uint64_t d : t.shape) {
        if (d != 0 && n > limit / d)
            return opError(op,
                           std::string(what) + " has shape " + shapeString(t.shape) + ", too many elements");
        n *= d;
    }
    if (n * dtypeSize(t.dtype) != t.data.size())
        return opError(op, std::string(what) + " has shape " + shapeString(t.shape) + " of " +
                               std::string(dtypeName(t.dtype)) + " (" +
                               std::to_string(n * dtypeSize(t.dtype)) + " bytes) but holds " +
                               std::to_string(t.data.size()) + " bytes");
    return Status::success();
}

namespace {

std::string paramPrefix(const std::string& name, const AttrValue& v)
{
    return "parameter " + name + "=" + attrValueToString(v);
}

}  // namespace

bool gemmFlag(const OpParams& p, const char* name)
{
    const Result<bool> v = paramBool("gemm", p, name, false);
    return v && *v;
}

Result<bool> paramBool(std::string_view op, const OpParams& p, const std::string& name,
                       std::optional<bool> fallback)
{
    auto it = p.find(name);
    if (it == p.end()) {
        if (fallback) return *fallback;
        return opError(op, "missing parameter " + name);
    }
    const AttrValue& v = it->second;
    if (const auto* i = std::get_if<int64_t>(&v); i && (*i == 0 || *i == 1)) return *i == 1;
    if (const auto* d = std::get_if<double>(&v); d && (*d == 0.0 || *d == 1.0)) return *d == 1.0;
    if (const auto* s = std::get_if<std::string>(&v)) {
        if (*s == "true" || *s == "True" || *s == "1") return true;
        if (*s == "false" || *s == "False" || *s == "0") return false;
    }
    if (const auto* iv = std::get_if<std::vector<int64_t>>(&v);
        iv && iv->size() == 1 && ((*iv)[0] == 0 || (*iv)[0] == 1))
        return (*iv)[0] == 1;
    return opError(op, paramPrefix(name, v) + " is not a boolean (0/1, true/false)");
}

Result<double> paramDouble(std::string_view op, const OpParams& p, const std::string& name,
                           std::optional<double> fallback)
{
    auto it = p.find(name);
    if (it == p.end()) {
        if (fallback) return *fallback;
        return opError(op, "missing parameter " + name);
    }
    const AttrValue& v = it->second;
    if (const auto* d = std::get_if<double>(&v)) return *d;
    if (const auto* i = std::get_if<int64_t>(&v)) return double(*i);
    if (const auto* dv = std::get_if<std::vector<double>>(&v); dv && dv->size() == 1) return (*dv)[0];
    if (const auto* iv = std::get_if<std::vector<int64_t>>(&v); iv && iv->size() == 1)
        return double((*iv)[0]);
    return opError(op, paramPrefix(name, v) + " is not a number");
}

Result<std::string> paramString(std::string_view op, const OpParams& p, const std::string& name,
                                std::optional<std::string> fallback)
{
    auto it = p.find(name);
    if (it == p.end()) {
        if (fallback) return *fallback;
        return opError(op, "missing parameter " + name);
    }
    if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
    if (const auto* sv = std::get_if<std::vector<std::string>>(&it->second); sv && sv->size() == 1)
        return (*sv)[0];
    return opError(op, paramPrefix(name, it->second) + " is not a string");
}

double unitRoundoff(DType t)
{
    const BitLayout l = bitLayout(t);
    if (l.mantissaBits == 0) return 0.5;
    return std::ldexp(1.0, -int(l.mantissaBits) - 1);
}

double ulpAt(DType t, double x)
{
    if (!std::isfinite(x)) return std::numeric_limits<double>::infinity();
    const BitLayout l = bitLayout(t);
    const int bias = (1 << (l.exponentBits - 1)) - 1;
    const int emin = 1 - bias;  // exponent of the smallest normal
    const double ax = std::fabs(x);
    int e = emin;
    if (ax > 0) {
        int fe = 0;
        std::frexp(ax, &fe);  // ax = f * 2^fe, f in [0.5, 1): leading bit 2^(fe - 1)
        e = std::max(fe - 1, emin);
    }
    return std::ldexp(1.0, e - int(l.mantissaBits));
}

std::optional<std::vector<uint64_t>> broadcastShapes(std::span<const uint64_t> a, std::span<const uint64_t> b)
{
    const size_t rank = std::max(a.size(), b.size());
    std::vector<uint64_t> out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const uint64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const uint64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da != db && da != 1 && db != 1) return std::nullopt;
        out[i] = da == 1 ? db : da;
    }
    return out;
}

bool broadcastsTo(std::span<const uint64_t> src, std::span<const uint64_t> dst)
{
    if (src.size() > dst.size()) return false;
    const size_t lead = dst.size() - src.size();
    for (size_t i = 0; i < src.size(); ++i)
        if (src[i] != 1 && src[i] != dst[lead + i]) return false;
    return true;
}

uint64_t elementCountOf(std::span<const uint64_t> shape)
{
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    return n;
}

std::vector<int64_t> broadcastIndex(std::span<const uint64_t> src, std::span<const uint64_t> dst,
                                    int64_t innerBlock)
{
    const size_t rank = dst.size();
    const size_t lead = rank - src.size();
    // Element strides of src, aligned to dst's dimensions; 0 where src is stretched or absent.
    std::vector<int64_t> stride(rank, 0);
    int64_t s = 1;
    for (size_t i = src.size(); i-- > 0;) {
        stride[lead + i] = src[i] == 1 ? 0 : s;
        s *= int64_t(src[i]);
    }
    std::vector<int64_t> out(size_t(elementCountOf(dst)));
    std::vector<uint64_t> idx(rank, 0);
    int64_t at = 0;
    for (size_t e = 0; e < out.size(); ++e) {
        out[e] = at * innerBlock;
        for (size_t d = rank; d-- > 0;) {  // odometer increment
            if (++idx[d] < dst[d]) {
                at += stride[d];
                break;
            }
            at -= stride[d] * int64_t(dst[d] - 1);
            idx[d] = 0;
        }
    }
    return out;
}

double gammaN(double n, double u)
{
    const double nu = n * u;
    if (nu >= 1.0) return std::numeric_limits<double>::infinity();
    return nu / (1.0 - nu);
}

}  // namespace faultline::golden
