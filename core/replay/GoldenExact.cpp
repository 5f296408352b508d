#include "GoldenExact.h"

#include <cstring>

#include "../FloatFormats.h"

namespace faultline {

namespace {

// The magnitude (all bits but the sign) and exponent masks of a floating-point dtype.
struct FloatMasks {
    uint64_t mag, exp;
};

FloatMasks floatMasks(DType t)
{
    const BitLayout l = bitLayout(t);
    return {(uint64_t(1) << (l.exponentBits + l.mantissaBits)) - 1, ((uint64_t(1) << l.exponentBits) - 1)
                                                                        << l.mantissaBits};
}

}  // namespace

bool isNanBits(DType t, uint64_t bits)
{
    if (!isFloatingPoint(t)) return false;
    const FloatMasks m = floatMasks(t);
    return floatBitsAreNan(bits, m.mag, m.exp, t == DType::Float8E4M3FN);
}

bool isFiniteBits(DType t, uint64_t bits)
{
    if (!isFloatingPoint(t)) return true;
    const FloatMasks m = floatMasks(t);
    return !floatBitsAreNonFinite(bits, m.mag, m.exp, t == DType::Float8E4M3FN);
}

uint64_t goldenDifferingElements(const HostTensor& candidate, const HostTensor& golden)
{
    const uint64_t n = golden.elementCount();
    if (candidate.dtype != golden.dtype || candidate.elementCount() != n) return n;
    const unsigned size = dtypeSize(golden.dtype);
    if (std::memcmp(candidate.data.data(), golden.data.data(), n * size) == 0) return 0;
    uint64_t differing = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t a = elementBits(candidate, i), b = elementBits(golden, i);
        if (a != b && !(isNanBits(golden.dtype, a) && isNanBits(golden.dtype, b))) ++differing;
    }
    return differing;
}

}  // namespace faultline
