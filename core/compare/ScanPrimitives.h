#pragma once
// Internal to the compare engine (ChunkScanner.cpp): what the scan knows of each dtype's bits, and
// the small pieces of its block path (which elements of a block differ, running maxima by
// 16-column group, the running sums of a block's mismatches).
#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../FloatFormats.h"
#include "Divergence.h"
#include "MismatchMath.h"
#include "UlpDistance.h"

namespace faultline::scan {

// ---- per-dtype bit semantics ----

// IEEE-style binary format with E exponent bits and M mantissa bits stored in B. Fn: OCP
// E4M3FN rules (no infinities, only S.1111.111 is NaN).
template <class B, unsigned E, unsigned M, bool Fn, double (*ToDouble)(B)>
struct FloatTraits {
    using Bits = B;
    static constexpr bool kFloat = true;
    static constexpr unsigned kWidth = 1 + E + M;
    static constexpr B kSign = B(B(1) << (E + M));
    static constexpr B kMag = B(kSign - 1);
    static constexpr B kExp = B(((B(1) << E) - 1) << M);

    static bool nonFinite(B b) { return floatBitsAreNonFinite(b, kMag, kExp, Fn); }
    static bool isNan(B b) { return floatBitsAreNan(b, kMag, kExp, Fn); }
    static bool isInf(B b) { return floatBitsAreInf(b, kMag, kExp, Fn); }
    static double toDouble(B b) { return ToDouble(b); }
    // Distance of the sign-magnitude patterns mapped onto a monotonic integer line (±0 -> 0).
    static uint64_t ulp(B a, B b) { return signMagnitudeUlp(a, b, kSign); }
};

template <class B, bool Signed>
struct IntTraits {
    using Bits = B;
    using S = std::make_signed_t<B>;
    static constexpr bool kFloat = false;
    static constexpr unsigned kWidth = sizeof(B) * 8;
    static constexpr B kSign = 0;  // no sign-magnitude sign bit
    static constexpr B kExp = 0;
    static bool nonFinite(B) { return false; }
    static bool isNan(B) { return false; }
    static bool isInf(B) { return false; }
    static double toDouble(B b)
    {
        if constexpr (Signed)
            return double(S(b));
        else
            return double(b);
    }
    static uint64_t ulp(B a, B b) { return integerUlp<B, Signed>(a, b); }
};

inline double f64ToDouble(uint64_t b)
{
    return doubleFromBits(b);
}
inline double f32ToDouble(uint32_t b)
{
    return double(floatFromBits(b));
}
inline double f16ToDouble(uint16_t b)
{
    return double(halfToFloat(b));
}
inline double bf16ToDouble(uint16_t b)
{
    return double(bf16ToFloat(b));
}
inline double e4m3ToDouble(uint8_t b)
{
    return double(fp8e4m3fnToFloat(b));
}
inline double e5m2ToDouble(uint8_t b)
{
    return double(fp8e5m2ToFloat(b));
}

using F64 = FloatTraits<uint64_t, 11, 52, false, f64ToDouble>;
using F32 = FloatTraits<uint32_t, 8, 23, false, f32ToDouble>;
using F16 = FloatTraits<uint16_t, 5, 10, false, f16ToDouble>;
using BF16 = FloatTraits<uint16_t, 8, 7, false, bf16ToDouble>;
using E4M3 = FloatTraits<uint8_t, 4, 3, true, e4m3ToDouble>;
using E5M2 = FloatTraits<uint8_t, 5, 2, false, e5m2ToDouble>;

inline void addSlots(DecadeHistogram& h, const std::array<uint64_t, kDecadeSlots>& slots)
{
    h.zero += slots[0];
    for (size_t d = 0; d < h.decades.size(); ++d) h.decades[d] += slots[1 + d];
    h.infinite += slots[kDecadeSlots - 1];
}

// Bit k set when a[k] != b[k], for 64 consecutive elements: SSE2 compares where the element
// width has them (every x86-64 CPU), a plain loop otherwise.
template <class B>
inline uint64_t differingMask(const B* a, const B* b)
{
#if defined(__SSE2__)
    if constexpr (sizeof(B) == 4 || sizeof(B) == 2 || sizeof(B) == 1) {
        constexpr unsigned kPerVector = 16 / sizeof(B);
        uint64_t equal = 0;
        for (unsigned k = 0; k < 64; k += 2 * kPerVector) {
            const __m128i a0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k));
            const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k));
            const __m128i a1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k + kPerVector));
            const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k + kPerVector));
            uint64_t bits;
            if constexpr (sizeof(B) == 4) {
                const unsigned lo = unsigned(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(a0, b0))));
                const unsigned hi = unsigned(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(a1, b1))));
                bits = lo | (hi << 4);
            } else if constexpr (sizeof(B) == 2) {
                bits = unsigned(
                    _mm_movemask_epi8(_mm_packs_epi16(_mm_cmpeq_epi16(a0, b0), _mm_cmpeq_epi16(a1, b1))));
            } else {
                const unsigned lo = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(a0, b0)));
                const unsigned hi = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(a1, b1)));
                bits = lo | (uint64_t(hi) << 16);
            }
            equal |= bits << k;
        }
        return ~equal;
    }
#endif
    uint64_t mask = 0;
    for (unsigned k = 0; k < 64; ++k) mask |= uint64_t(a[k] != b[k]) << k;
    return mask;
}

// The running maximum of consecutive values >= 0 (not NaN) by group, groups ascending: add(g, x)
// stores the maximum so far of group g's values to out[g]. The maximum stays in a register,
// cleared by a mask where the group changes, and is stored at every value (the last store of a
// group is its maximum), so consecutive values do not wait on each other through memory.
struct GroupRun {
#if defined(__SSE2__)
    __m128d run = _mm_setzero_pd();
    unsigned group = ~0u;
    [[gnu::always_inline]] inline void add(unsigned g, double x, double* out)
    {
        const __m128d keep = _mm_castsi128_pd(_mm_cvtsi64_si128(-int64_t(g == group)));
        run = _mm_max_sd(_mm_set_sd(x), _mm_and_pd(run, keep));  // x > kept ? x : kept
        group = g;
        _mm_store_sd(out + g, run);
    }
#else
    double run = 0.0;
    unsigned group = ~0u;
    void add(unsigned g, double x, double* out)
    {
        const double kept = g == group ? run : 0.0;
        run = x > kept ? x : kept;
        group = g;
        out[g] = run;
    }
#endif
};

// The running sums of a BlockErrors' entries in element order (sumRel over relAdd: +0 where the
// relative error is infinite), and its 16-column groups' maxima (GroupRun). A function of its
// own: inside the scanner's large body the compiler kept some of the sums in memory.
[[gnu::noinline]] inline void addSumsAndGroupMaxima(const BlockErrors& e, double& sumAbs, double& sumAbs2,
                                                    double& sumRel, double& sumRel2, double* groupMax)
{
    GroupRun run;
    double a = sumAbs, a2 = sumAbs2, r = sumRel, r2 = sumRel2;
    for (unsigned i = 0; i < e.count; ++i) {
        a += e.absErr[i];
        a2 += e.absSq[i];
        r += e.relAdd[i];
        r2 += e.relSq[i];
        run.add(e.k[i] / BlockErrors::kGroup, e.absErr[i], groupMax);
    }
    sumAbs = a;
    sumAbs2 = a2;
    sumRel = r;
    sumRel2 = r2;
}

// The larger of two doubles that are not NaN, by value: one maxsd. (std::max returns a reference,
// which in a loop over memory became a branch and a select of stack addresses.)
inline double maxOfNonNaN(double a, double b)
{
    return b > a ? b : a;
}

}  // namespace faultline::scan
