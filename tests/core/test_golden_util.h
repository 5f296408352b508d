#pragma once
// Helpers shared by the golden model's tests (tests/core/test_golden_*.cpp): tensors from float
// values, random data, bound checks, bit corruption.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/Convert.h"
#include "core/FloatFormats.h"
#include "core/HostTensor.h"
#include "core/golden/OpRegistry.h"

namespace goldentest {

using faultline::DType;
using faultline::HostTensor;
using faultline::golden::OpParams;

inline HostTensor tensor(DType t, std::vector<uint64_t> shape, const std::vector<float>& values)
{
    HostTensor h(t, std::move(shape));
    Q_ASSERT(h.elementCount() == values.size());
    faultline::convertFromFloat(t, values.data(), h.data.data(), values.size());
    return h;
}

inline std::vector<float> floats(const HostTensor& t)
{
    std::vector<float> v(size_t(t.elementCount()));
    faultline::convertToFloat(t.dtype, t.data.data(), v.data(), v.size());
    return v;
}

inline std::vector<double> doubles(const HostTensor& t)
{
    std::vector<double> v(size_t(t.elementCount()));
    faultline::convertToDouble(t.dtype, t.data.data(), v.data(), v.size());
    return v;
}

// Values already representable in `t` (so a tensor of them holds them exactly).
inline std::vector<float> representable(DType t, std::vector<float> v)
{
    std::vector<std::byte> bytes(v.size() * faultline::dtypeSize(t));
    faultline::convertFromFloat(t, v.data(), bytes.data(), v.size());
    faultline::convertToFloat(t, bytes.data(), v.data(), v.size());
    return v;
}

enum class Data { Uniform, Normal, Cancelling, WideRange };

inline std::vector<float> randomValues(size_t n, uint32_t seed, Data kind = Data::Normal, float scale = 1.0f)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        switch (kind) {
            case Data::Uniform:
                v[i] = uniform(rng);
                break;
            case Data::Normal:
                v[i] = normal(rng);
                break;
            case Data::Cancelling:
                // Pairs of nearly opposite large values plus small noise: sums cancel heavily.
                v[i] = (i % 2 == 0) ? 1000.0f * (1.0f + 0.01f * uniform(rng))
                                    : -1000.0f * (1.0f + 0.01f * uniform(rng));
                break;
            case Data::WideRange:
                v[i] = normal(rng) * std::exp2(float(int(rng() % 40) - 20));
                break;
        }
        v[i] *= scale;
    }
    return v;
}

inline faultline::golden::BoundCheck check(const std::vector<double>& candidate, const HostTensor& golden,
                                           const std::vector<double>& bound)
{
    return faultline::golden::checkWithinBound(candidate, doubles(golden), bound);
}

inline QString describe(const faultline::golden::BoundCheck& c, const std::vector<double>& candidate,
                        const HostTensor& golden, const std::vector<double>& bound)
{
    if (c.worstIndex < 0) return QStringLiteral("no difference");
    const auto g = doubles(golden);
    const size_t i = size_t(c.worstIndex);
    return QStringLiteral("%1/%2 violations; worst ratio %3 at %4: candidate %5 golden %6 bound %7")
        .arg(c.violations)
        .arg(c.checked)
        .arg(c.worstRatio)
        .arg(c.worstIndex)
        .arg(candidate[i], 0, 'g', 10)
        .arg(g[i], 0, 'g', 10)
        .arg(bound[i], 0, 'g', 4);
}

// Kinds of corruption a defective device shows, applied to a float32 value.
enum class Corruption { SignFlip, ExponentBitFlip, HighMantissaFlip, StuckBit20 };

inline float corrupt(float v, Corruption c)
{
    uint32_t u = faultline::floatBits(v);
    switch (c) {
        case Corruption::SignFlip:
            u ^= 0x80000000u;
            break;
        case Corruption::ExponentBitFlip:
            u ^= 1u << 23;
            break;
        case Corruption::HighMantissaFlip:
            u ^= 1u << 22;
            break;
        case Corruption::StuckBit20:
            u |= 1u << 20;
            break;
    }
    return faultline::floatFromBits(u);
}

// Fraction of the elements a corruption changes that the bound flags. Elements whose golden value
// is zero or not finite are skipped (a sign flip of 0 is no error).
inline double detectedFraction(const HostTensor& golden, const std::vector<double>& bound, Corruption c)
{
    const std::vector<float> g = floats(golden);
    size_t changed = 0, flagged = 0;
    for (size_t i = 0; i < g.size(); ++i) {
        if (!std::isfinite(g[i]) || g[i] == 0.0f) continue;
        const float bad = corrupt(g[i], c);
        if (bad == g[i]) continue;
        ++changed;
        if (!(std::fabs(double(bad) - double(g[i])) <= bound[i])) ++flagged;
    }
    return changed ? double(flagged) / double(changed) : 1.0;
}

inline OpParams params(std::initializer_list<std::pair<const std::string, faultline::AttrValue>> p)
{
    return OpParams(p);
}

}  // namespace goldentest
