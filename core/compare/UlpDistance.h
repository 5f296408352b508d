#pragma once
// The ulp distance of two elements' bit patterns: the one definition. The chunk scan's scalar
// path (ChunkScanner.cpp) uses these; its vector path (MismatchMath.cpp) computes the same, as
// test_compare_dispatch checks; readouts of single elements (the heatmap's) use ulpDistance.
#include <cstdint>
#include <optional>
#include <type_traits>

#include "../DType.h"

namespace faultline {

// Floats: the sign-magnitude patterns mapped onto a monotonic integer line (±0 -> 0): |ma - mb|
// on the same side of zero, ma + mb across it. `sign` is the sign bit's mask.
constexpr uint64_t signMagnitudeUlp(uint64_t a, uint64_t b, uint64_t sign)
{
    const uint64_t mag = sign - 1;
    const uint64_t ma = a & mag, mb = b & mag;
    if (((a ^ b) & sign) == 0) return ma > mb ? ma - mb : mb - ma;
    return ma + mb;
}

// Integers: |a - b| of the values, in the type's own width.
template <class B, bool Signed>
constexpr uint64_t integerUlp(B a, B b)
{
    bool aFirst;
    if constexpr (Signed)
        aFirst = std::make_signed_t<B>(a) >= std::make_signed_t<B>(b);
    else
        aFirst = a >= b;
    return aFirst ? uint64_t(B(a - b)) : uint64_t(B(b - a));
}

// The distance of two elements of `t` given as raw bits (loadBits); nullopt where a NaN or Inf
// is involved (no finite distance), as the comparison's "ulp" is null for such pairs.
std::optional<uint64_t> ulpDistance(DType t, uint64_t a, uint64_t b);

}  // namespace faultline
