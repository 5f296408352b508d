#pragma once
// Shared by the test_compare_* tests: synthetic tensors as raw bit patterns, generated with a
// seeded RNG, and a naive reference analysis written independently of core/compare (plain
// loops over every element, values decoded through FloatFormats.h and std::isnan/isinf, ulp
// distance through the radix-sort key instead of sign-magnitude arithmetic).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/DType.h"
#include "core/FloatFormats.h"
#include "core/compare/TensorComparer.h"

namespace fltest {

using faultline::DType;

struct Tensor {
    DType dtype = DType::Float32;
    std::vector<uint64_t> shape;
    std::vector<uint64_t> bits;  // one zero-extended bit pattern per element
    uint64_t rows() const { return shape.empty() ? 1 : bits.size() / std::max<uint64_t>(1, shape.back()); }
    uint64_t cols() const { return shape.empty() ? 1 : shape.back(); }
};

inline unsigned widthOf(DType t)
{
    return faultline::dtypeSize(t) * 8;
}
inline uint64_t maskOf(DType t)
{
    return widthOf(t) == 64 ? ~uint64_t(0) : (uint64_t(1) << widthOf(t)) - 1;
}

inline double decode(DType t, uint64_t b)
{
    using namespace faultline;
    switch (t) {
        case DType::Float64:
            return doubleFromBits(b);
        case DType::Float32:
            return floatFromBits(uint32_t(b));
        case DType::Float16:
            return halfToFloat(uint16_t(b));
        case DType::BFloat16:
            return bf16ToFloat(uint16_t(b));
        case DType::Float8E4M3FN:
            return fp8e4m3fnToFloat(uint8_t(b));
        case DType::Float8E5M2:
            return fp8e5m2ToFloat(uint8_t(b));
        case DType::Int8:
            return double(int8_t(uint8_t(b)));
        case DType::Int16:
            return double(int16_t(uint16_t(b)));
        case DType::Int32:
            return double(int32_t(uint32_t(b)));
        case DType::Int64:
            return double(int64_t(b));
        default:
            return double(b);
    }
}

inline uint64_t encode(DType t, double v)
{
    using namespace faultline;
    switch (t) {
        case DType::Float64:
            return doubleBits(v);
        case DType::Float32:
            return floatBits(float(v));
        case DType::Float16:
            return doubleToHalf(v);
        case DType::BFloat16:
            return doubleToBf16(v);
        case DType::Float8E4M3FN:
            return doubleToFp8e4m3fn(v);
        case DType::Float8E5M2:
            return doubleToFp8e5m2(v);
        default:
            return uint64_t(int64_t(v)) & maskOf(t);
    }
}

inline bool isNonFinite(DType t, uint64_t b)
{
    const double v = decode(t, b);
    return std::isnan(v) || std::isinf(v);
}

// Ulp distance via the radix-sort key: negative values complemented, positive ones offset by
// the sign bit; +0 and -0 get adjacent keys, so one step is taken off across signs.
inline uint64_t naiveUlp(DType t, uint64_t a, uint64_t b)
{
    if (!faultline::isFloatingPoint(t)) {
        const double da = decode(t, a), db = decode(t, b);
        if (t == DType::Int64 || t == DType::UInt64) {
            // doubles are not exact here; x87 long double has a 64-bit significand
            const long double x = t == DType::Int64 ? (long double)int64_t(a) : (long double)a;
            const long double y = t == DType::Int64 ? (long double)int64_t(b) : (long double)b;
            return uint64_t(x > y ? x - y : y - x);
        }
        return uint64_t(std::fabs(da - db));
    }
    const unsigned w = widthOf(t);
    const uint64_t sign = uint64_t(1) << (w - 1);
    const uint64_t mask = maskOf(t);
    auto key = [&](uint64_t x) { return (x & sign) ? (~x & mask) : (x | sign); };
    const uint64_t ka = key(a), kb = key(b);
    uint64_t d = ka > kb ? ka - kb : kb - ka;
    if ((a ^ b) & sign) d -= 1;
    return d;
}

inline std::vector<std::byte> pack(const Tensor& t)
{
    const unsigned size = faultline::dtypeSize(t.dtype);
    std::vector<std::byte> out(t.bits.size() * size);
    for (size_t i = 0; i < t.bits.size(); ++i)
        std::memcpy(out.data() + i * size, &t.bits[i], size);  // little-endian host
    return out;
}

// A tensor of `dtype` and `shape` whose elements are all zero bits.
inline Tensor zeroTensor(DType dtype, std::vector<uint64_t> shape)
{
    Tensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    uint64_t n = 1;
    for (uint64_t d : t.shape) n *= d;
    t.bits.resize(size_t(n));
    return t;
}

// Normal-ish random values: magnitudes in [0.25, 4), random signs (or positive only).
inline Tensor randomTensor(DType dtype, std::vector<uint64_t> shape, uint64_t seed, bool positiveOnly = false)
{
    Tensor t = zeroTensor(dtype, std::move(shape));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> mag(0.25, 4.0);
    std::uniform_int_distribution<int> ints(-1000, 1000);
    for (auto& b : t.bits) {
        if (faultline::isFloatingPoint(dtype)) {
            double v = mag(rng);
            if (!positiveOnly && (rng() & 1)) v = -v;
            b = encode(dtype, v);
        } else {
            b = encode(dtype, double(ints(rng)));
        }
    }
    return t;
}

// Moves `fraction` of the elements by ±1 or ±2 ulp (magnitude bits; values stay finite and keep
// their sign). Returns how many were changed.
inline uint64_t addRoundingNoise(Tensor& t, double fraction, uint64_t seed, unsigned maxUlp = 2)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    uint64_t changed = 0;
    for (auto& b : t.bits) {
        if (u(rng) >= fraction) continue;
        const uint64_t step = 1 + rng() % maxUlp;
        const uint64_t nb = (rng() & 1) ? b + step : b - step;
        if (isNonFinite(t.dtype, nb) || ((nb ^ b) >> (widthOf(t.dtype) - 1)) != 0) continue;
        if (decode(t.dtype, nb) == 0 || decode(t.dtype, b) == 0) continue;
        b = nb & maskOf(t.dtype);
        ++changed;
    }
    return changed;
}

inline faultline::Result<faultline::Divergence> compare(const Tensor& s, const Tensor& r,
                                                        faultline::CompareOptions options = {},
                                                        faultline::BoundProvider bounds = {})
{
    const std::vector<std::byte> ps = pack(s), pr = pack(r);
    faultline::TensorComparer c(options);
    if (bounds) c.setBoundProvider(std::move(bounds));
    return c.compare(s.dtype, s.shape, ps.data(), pr.data(), "t");
}

// The naive reference analysis.
struct NaiveTop {
    uint64_t index;
    bool nonFinite;
    double absErr;
    uint64_t ulp;
};

struct Naive {
    uint64_t mismatches = 0, beyond = 0;
    uint64_t nanIntroduced = 0, nanRemoved = 0, infIntroduced = 0, infRemoved = 0;
    int64_t firstMismatch = -1;
    std::vector<uint64_t> bits, toOne;
    std::vector<uint64_t> ulpHist = std::vector<uint64_t>(65, 0);
    uint64_t maxUlp = 0;
    double maxAbs = 0.0;
    double sumAbs = 0.0;
    uint64_t finitePairs = 0;
    uint64_t r0 = UINT64_MAX, r1 = 0, c0 = UINT64_MAX, c1 = 0;
    std::vector<NaiveTop> all;
};

// `within(i, s, r, ulp, absErr)` decides the tolerance for finite pairs.
template <class Within>
Naive naiveAnalysis(const Tensor& s, const Tensor& r, Within within, bool exact)
{
    Naive n;
    const unsigned w = widthOf(s.dtype);
    n.bits.assign(w, 0);
    n.toOne.assign(w, 0);
    const uint64_t cols = s.cols();
    for (size_t i = 0; i < s.bits.size(); ++i) {
        const uint64_t a = s.bits[i], b = r.bits[i];
        const double va = decode(s.dtype, a), vb = decode(s.dtype, b);
        const bool finite = std::isfinite(va) && std::isfinite(vb);
        if (finite) ++n.finitePairs;
        if (a == b) continue;
        ++n.mismatches;
        if (n.firstMismatch < 0) n.firstMismatch = int64_t(i);
        for (unsigned bit = 0; bit < w; ++bit) {
            if (((a >> bit) & 1) != ((b >> bit) & 1)) {
                ++n.bits[bit];
                if ((a >> bit) & 1) ++n.toOne[bit];
            }
        }
        const uint64_t row = i / cols, col = i % cols;
        n.r0 = std::min(n.r0, row);
        n.r1 = std::max(n.r1, row + 1);
        n.c0 = std::min(n.c0, col);
        n.c1 = std::max(n.c1, col + 1);
        if (std::isnan(va) && !std::isnan(vb)) ++n.nanIntroduced;
        if (std::isnan(vb) && !std::isnan(va)) ++n.nanRemoved;
        if (std::isinf(va) && !std::isinf(vb)) ++n.infIntroduced;
        if (std::isinf(vb) && !std::isinf(va)) ++n.infRemoved;
        if (!finite) {
            const bool bothNan = std::isnan(va) && std::isnan(vb);
            if (!bothNan || exact) ++n.beyond;
            n.all.push_back({uint64_t(i), true, 0.0, 0});
            continue;
        }
        const uint64_t ulp = naiveUlp(s.dtype, a, b);
        unsigned bin = 0;
        while (bin < 64 && (uint64_t(1) << bin) <= ulp) ++bin;  // bin k: [2^(k-1), 2^k)
        ++n.ulpHist[bin];
        n.maxUlp = std::max(n.maxUlp, ulp);
        const double err = std::fabs(va - vb);
        n.maxAbs = std::max(n.maxAbs, err);
        n.sumAbs += err;
        if (!within(i, va, vb, ulp, err)) ++n.beyond;
        n.all.push_back({uint64_t(i), false, err, ulp});
    }
    std::stable_sort(n.all.begin(), n.all.end(), [](const NaiveTop& x, const NaiveTop& y) {
        if (x.nonFinite != y.nonFinite) return x.nonFinite;
        if (x.nonFinite) return false;  // stable: index order
        if (x.absErr != y.absErr) return x.absErr > y.absErr;
        return x.ulp > y.ulp;  // stable keeps index order on full ties
    });
    return n;
}

}  // namespace fltest
