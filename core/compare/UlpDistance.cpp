#include "UlpDistance.h"

#include "../FloatFormats.h"

namespace faultline {

std::optional<uint64_t> ulpDistance(DType t, uint64_t a, uint64_t b)
{
    if (isFloatingPoint(t)) {
        const BitLayout l = bitLayout(t);
        const uint64_t sign = uint64_t(1) << (l.totalBits - 1);
        const uint64_t mag = sign - 1;
        const uint64_t exp = ((uint64_t(1) << l.exponentBits) - 1) << l.mantissaBits;
        const bool fn = t == DType::Float8E4M3FN;
        if (floatBitsAreNonFinite(a, mag, exp, fn) || floatBitsAreNonFinite(b, mag, exp, fn))
            return std::nullopt;
        return signMagnitudeUlp(a, b, sign);
    }
    switch (t) {
        case DType::Int8:
            return integerUlp<uint8_t, true>(uint8_t(a), uint8_t(b));
        case DType::Int16:
            return integerUlp<uint16_t, true>(uint16_t(a), uint16_t(b));
        case DType::Int32:
            return integerUlp<uint32_t, true>(uint32_t(a), uint32_t(b));
        case DType::Int64:
            return integerUlp<uint64_t, true>(a, b);
        case DType::UInt16:
            return integerUlp<uint16_t, false>(uint16_t(a), uint16_t(b));
        case DType::UInt32:
            return integerUlp<uint32_t, false>(uint32_t(a), uint32_t(b));
        case DType::UInt64:
            return integerUlp<uint64_t, false>(a, b);
        default:  // uint8, bool
            return integerUlp<uint8_t, false>(uint8_t(a), uint8_t(b));
    }
}

}  // namespace faultline
