#pragma once
// Exact conversions between float/double and the narrow floating-point formats Faultline reads
// (bfloat16, IEEE binary16, OCP float8 E4M3FN and E5M2). Header-only and FL_HD, so the CPU golden
// model and the CUDA kernels share one definition. Integer bit operations (plus one exact
// small-int -> float conversion), so results do not depend on flush-to-zero or rounding modes.
//
// Decisions (each one is a promise the tests check):
// - Widening (narrow -> float/double) is exact: ±0, subnormals, ±inf and every finite value map to
//   the identical value. NaN keeps its sign and its mantissa bits, which are placed at the top of
//   the float mantissa (quiet and signalling NaNs stay as they are; nothing is "quietened").
//   float8_e4m3fn's NaN (S.1111.111) therefore widens to ±0x7FF00000.
// - Narrowing (float/double -> narrow) rounds to nearest, ties to even, on the exact input value.
//   The double versions round once, straight from the double: they never go through float, so
//   there is no double rounding.
// - Results below the smallest normal become subnormals (gradual underflow), and values below half
//   the smallest subnormal become a zero with the input's sign.
// - Overflow: bf16, fp16 and e5m2 round to ±inf when the magnitude is at or above the midpoint
//   between the largest finite value and the next power of two (IEEE 754 semantics).
// - float8_e4m3fn (OCP E4M3FN) has no infinities; S.1111.111 (0x7F/0xFF) is its only NaN and 448
//   its largest finite value. A value whose correctly rounded magnitude exceeds 448 (i.e. anything
//   above 464; 464 itself ties to 448) becomes NaN, and so does ±inf: the non-saturating
//   behaviour of ml_dtypes/PyTorch. Saturation, when wanted, is the caller's business.
// - NaN inputs become the target's canonical quiet NaN with the input's sign: 0x7FC0 (bf16),
//   0x7E00 (fp16), 0x7E (e5m2), 0x7F (e4m3fn), with 0x8000/0x80 added for a negative sign. The
//   payload is not carried (numpy/ml_dtypes/PyTorch CPU produce the same patterns for the
//   default NaN; CUDA's __float2half/__float2bfloat16 produce 0x7FFF instead).
#include <cstdint>
#include <cstring>

#include "HostDevice.h"

namespace faultline {

// ---- NaN, infinity, finiteness by bits: the one definition ---------------------------------
// For an IEEE-style binary format whose bits (sign bit dropped) are `bits & mag`, with `exp` the
// all-ones exponent field. `fn`: OCP E4M3FN rules (no infinities; only S.1111.111 is NaN). Used by
// the compare scan (per dtype, with constant masks), the golden-exact judgement (per DType at run
// time) and the golden order's float NaN test.
FL_HD constexpr bool floatBitsAreNan(uint64_t bits, uint64_t mag, uint64_t exp, bool fn)
{
    return fn ? (bits & mag) == mag : (bits & mag) > exp;
}
FL_HD constexpr bool floatBitsAreInf(uint64_t bits, uint64_t mag, uint64_t exp, bool fn)
{
    return !fn && (bits & mag) == exp;
}
FL_HD constexpr bool floatBitsAreNonFinite(uint64_t bits, uint64_t mag, uint64_t exp, bool fn)
{
    return fn ? (bits & mag) == mag : (bits & exp) == exp;
}

FL_HD uint32_t floatBits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
#endif
}

FL_HD float floatFromBits(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

FL_HD uint64_t doubleBits(double d)
{
#if defined(__CUDA_ARCH__)
    return static_cast<uint64_t>(__double_as_longlong(d));
#else
    uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
#endif
}

FL_HD double doubleFromBits(uint64_t u)
{
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(u));
#else
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
#endif
}

namespace detail {

// Widens a narrow format with ExpBits exponent bits (<= 5) and ManBits mantissa bits to float
// bits. Finite values are exact (every such format's range lies inside float's normal range).
// Fn selects E4M3FN semantics: no infinities, S.1111.111 is NaN, other all-ones exponents are
// ordinary numbers.
template <int ExpBits, int ManBits, bool Fn>
FL_HD uint32_t narrowToFloatBits(uint32_t bits)
{
    constexpr uint32_t kExpMax = (1u << ExpBits) - 1;
    constexpr uint32_t kManMask = (1u << ManBits) - 1;
    constexpr int kBias = (1 << (ExpBits - 1)) - 1;
    const uint32_t sign = (bits >> (ExpBits + ManBits) & 1u) << 31;
    const uint32_t exp = bits >> ManBits & kExpMax;
    const uint32_t man = bits & kManMask;
    const bool special = Fn ? (exp == kExpMax && man == kManMask) : exp == kExpMax;
    // All three candidates are computed and one is picked with masks, not branches: the
    // int->float conversion may not be speculated under -ftrapping-math, and a branch would
    // keep g++ from vectorising the bulk loops.
    const uint32_t specialMag = 0x7F800000u | man << (23 - ManBits);
    const uint32_t normalMag = (exp + uint32_t(127 - kBias)) << 23 | man << (23 - ManBits);
    // Subnormal: man * 2^(1 - bias - ManBits). (float)man is exact and normal; lowering its
    // exponent field by (bias + ManBits - 1) scales it exactly, staying normal.
    const uint32_t subnormalMag = floatBits(float(int32_t(man))) - (uint32_t(kBias + ManBits - 1) << 23);
    const uint32_t normalMask = 0u - uint32_t(exp != 0);
    const uint32_t nonzeroMask = 0u - uint32_t(man != 0);
    const uint32_t specialMask = 0u - uint32_t(special);
    const uint32_t finiteMag = (normalMag & normalMask) | (subnormalMag & ~normalMask & nonzeroMask);
    const uint32_t mag = (specialMag & specialMask) | (finiteMag & ~specialMask);
    return sign | mag;
}

// Rounds an IEEE binary value (SrcExpBits/SrcManBits, bits in UInt) to a narrow format with
// ExpBits/ManBits, to nearest, ties to even, once. See the header comment for specials.
template <class UInt, int SrcExpBits, int SrcManBits, int ExpBits, int ManBits, bool Fn>
FL_HD uint32_t roundToNarrowBits(UInt bits)
{
    constexpr int kSrcBias = (1 << (SrcExpBits - 1)) - 1;
    constexpr UInt kSrcExpMax = (UInt(1) << SrcExpBits) - 1;
    constexpr UInt kSrcManMask = (UInt(1) << SrcManBits) - 1;
    constexpr int kBias = (1 << (ExpBits - 1)) - 1;
    constexpr uint32_t kSignBit = 1u << (ExpBits + ManBits);
    constexpr uint32_t kInf = ((1u << ExpBits) - 1) << ManBits;
    constexpr uint32_t kQuietNaN = Fn ? kSignBit - 1 : kInf | 1u << (ManBits - 1);
    constexpr uint32_t kMaxFinite = Fn ? kSignBit - 2 : kInf - 1;
    constexpr uint32_t kOverflow = Fn ? kQuietNaN : kInf;
    static_assert(SrcManBits > ManBits && SrcExpBits >= ExpBits, "narrowing only");

    const uint32_t sign = (bits >> (SrcExpBits + SrcManBits)) ? kSignBit : 0u;
    const int expField = int(bits >> SrcManBits & kSrcExpMax);
    const UInt man = bits & kSrcManMask;
    if (expField == int(kSrcExpMax)) return sign | (man != 0 ? kQuietNaN : kOverflow);

    // value = sig * 2^(e - kSrcBias - SrcManBits), where a subnormal source counts as e = 1.
    const UInt sig = expField != 0 ? (man | UInt(1) << SrcManBits) : man;
    const int e = expField != 0 ? expField : 1;
    // The result's last place is 2^(e - kSrcBias - ManBits), or the target's subnormal spacing
    // 2^(1 - kBias - ManBits) if that is larger. For a subnormal source the second always wins
    // (a wider or equal exponent range), so its true leading bit is never needed.
    const int underflow = kSrcBias + 1 - kBias - e;  // > 0: result is subnormal (or zero)
    int shift = (SrcManBits - ManBits) + (underflow > 0 ? underflow : 0);
    // sig < 2^(SrcManBits + 1): from this shift on the result is 0, so clamping is exact.
    if (shift > SrcManBits + 2) shift = SrcManBits + 2;
    const UInt q = sig >> shift;
    const UInt rem = sig & ((UInt(1) << shift) - 1);
    const UInt half = UInt(1) << (shift - 1);
    const UInt roundUp = (rem > half || (rem == half && (q & 1u) != 0)) ? 1u : 0u;
    // Biased exponent field of the last place's binade, minus one: adding q (which carries the
    // implicit bit) lands in the right field, including subnormal -> normal and carry to inf.
    const int fieldBase = underflow > 0 ? 0 : e - kSrcBias + kBias - 1;
    const uint32_t out = (uint32_t(fieldBase) << ManBits) + uint32_t(q + roundUp);
    return sign | (out > kMaxFinite ? kOverflow : out);
}

}  // namespace detail

// ---- bfloat16 (1.8.7) ----
FL_HD float bf16ToFloat(uint16_t b)
{
    return floatFromBits(uint32_t(b) << 16);
}

FL_HD uint16_t floatToBf16(float f)
{
    const uint32_t u = floatBits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16 & 0x8000u) | 0x7FC0u);
    // Same exponent layout as float: adding just under half an ulp (plus the even bit) rounds to
    // nearest even for finite values, subnormals included, and carries to inf on overflow.
    return uint16_t((u + 0x7FFFu + (u >> 16 & 1u)) >> 16);
}

FL_HD uint16_t doubleToBf16(double d)
{
    return uint16_t(detail::roundToNarrowBits<uint64_t, 11, 52, 8, 7, false>(doubleBits(d)));
}

// ---- IEEE binary16 (1.5.10) ----
FL_HD float halfToFloat(uint16_t h)
{
    return floatFromBits(detail::narrowToFloatBits<5, 10, false>(h));
}

FL_HD uint16_t floatToHalf(float f)
{
    return uint16_t(detail::roundToNarrowBits<uint32_t, 8, 23, 5, 10, false>(floatBits(f)));
}

FL_HD uint16_t doubleToHalf(double d)
{
    return uint16_t(detail::roundToNarrowBits<uint64_t, 11, 52, 5, 10, false>(doubleBits(d)));
}

// ---- OCP float8 E4M3FN (1.4.3, bias 7, no inf, NaN = S.1111.111, max 448) ----
FL_HD float fp8e4m3fnToFloat(uint8_t v)
{
    return floatFromBits(detail::narrowToFloatBits<4, 3, true>(v));
}

FL_HD uint8_t floatToFp8e4m3fn(float f)
{
    return uint8_t(detail::roundToNarrowBits<uint32_t, 8, 23, 4, 3, true>(floatBits(f)));
}

FL_HD uint8_t doubleToFp8e4m3fn(double d)
{
    return uint8_t(detail::roundToNarrowBits<uint64_t, 11, 52, 4, 3, true>(doubleBits(d)));
}

// ---- OCP float8 E5M2 (1.5.2, bias 15, IEEE-like inf/NaN, max 57344) ----
FL_HD float fp8e5m2ToFloat(uint8_t v)
{
    return floatFromBits(detail::narrowToFloatBits<5, 2, false>(v));
}

FL_HD uint8_t floatToFp8e5m2(float f)
{
    return uint8_t(detail::roundToNarrowBits<uint32_t, 8, 23, 5, 2, false>(floatBits(f)));
}

FL_HD uint8_t doubleToFp8e5m2(double d)
{
    return uint8_t(detail::roundToNarrowBits<uint64_t, 11, 52, 5, 2, false>(doubleBits(d)));
}

}  // namespace faultline
