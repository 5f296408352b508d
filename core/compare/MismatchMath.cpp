// The block error arithmetic of the compare engine (MismatchMath.h), compiled once per Highway
// target by foreach_target.h (this file includes itself) and dispatched at run time.
#include "MismatchMath.h"

#include <algorithm>
#include <limits>

// Every attainable target, the portable one (EMU128, or SCALAR with GCC 12) included, so that
// tests can run the vector code on each instruction set the CPU has and on the portable one.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/compare/MismatchMath.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace faultline {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <MismatchFloat Kind>
HWY_INLINE bool blockErrors(const void* suspect, const void* reference, BlockErrors& out)
{
    const hn::ScalableTag<double> d;
    const hn::RebindToUnsigned<decltype(d)> du;
    const hn::Rebind<uint32_t, decltype(d)> d32;
    const hn::Rebind<float, decltype(d)> df;
    const hn::Rebind<uint16_t, decltype(d)> d16;
    const hn::Rebind<hwy::float16_t, decltype(d)> dh;
    const size_t n = hn::Lanes(d);

    constexpr uint32_t kSign = Kind == MismatchFloat::Float32 ? 0x80000000u : 0x8000u;
    constexpr uint32_t kExp = Kind == MismatchFloat::Float32    ? 0x7F800000u
                              : Kind == MismatchFloat::BFloat16 ? 0x7F80u
                                                                : 0x7C00u;
    const auto sign = hn::Set(d32, kSign);
    const auto mag = hn::Set(d32, kSign - 1);
    const auto exp = hn::Set(d32, kExp);
    const auto inf = hn::Set(d, std::numeric_limits<double>::infinity());
    const auto zero = hn::Zero(d);
    // 2^52: OR-ing an integer below 2^52 into its mantissa and subtracting it converts exactly.
    const auto two52Bits = hn::Set(du, uint64_t(0x4330000000000000ull));
    const auto two52 = hn::BitCast(d, two52Bits);

    auto maxAbs = zero, maxRel = zero, maxUlp = zero;
    auto minAbs = inf, minRel = inf, minUlp = inf;
    auto groupMax = zero;  // maxAbs of the current group of BlockErrors::kGroup positions
    size_t relInfinite = 0;
    for (size_t k = 0; k < BlockErrors::kBlock; k += n) {
        hn::Vec<decltype(d32)> a, b;
        hn::Vec<decltype(df)> fa, fb;
        if constexpr (Kind == MismatchFloat::Float32) {
            a = hn::LoadU(d32, static_cast<const uint32_t*>(suspect) + k);
            b = hn::LoadU(d32, static_cast<const uint32_t*>(reference) + k);
            fa = hn::BitCast(df, a);
            fb = hn::BitCast(df, b);
        } else {
            const auto a16 = hn::LoadU(d16, static_cast<const uint16_t*>(suspect) + k);
            const auto b16 = hn::LoadU(d16, static_cast<const uint16_t*>(reference) + k);
            a = hn::PromoteTo(d32, a16);
            b = hn::PromoteTo(d32, b16);
            if constexpr (Kind == MismatchFloat::BFloat16) {
                fa = hn::BitCast(df, hn::ShiftLeft<16>(a));
                fb = hn::BitCast(df, hn::ShiftLeft<16>(b));
            } else {
                fa = hn::PromoteTo(df, hn::BitCast(dh, a16));
                fb = hn::PromoteTo(df, hn::BitCast(dh, b16));
            }
        }
        const auto nonFinite = hn::Or(hn::Eq(hn::And(a, exp), exp), hn::Eq(hn::And(b, exp), exp));
        if (!hn::AllFalse(d32, nonFinite)) return false;

        // ulp: |ma - mb| on the same side of zero, ma + mb across it (< 2^32, no overflow).
        const auto ma = hn::And(a, mag), mb = hn::And(b, mag);
        const auto sameSide = hn::Eq(hn::And(hn::Xor(a, b), sign), hn::Zero(d32));
        const auto ulp32 =
            hn::IfThenElse(sameSide, hn::Sub(hn::Max(ma, mb), hn::Min(ma, mb)), hn::Add(ma, mb));
        const auto ulp = hn::PromoteTo(du, ulp32);
        const auto ulpBits = hn::Or(ulp, two52Bits);
        const auto ulpD = hn::Sub(hn::BitCast(d, ulpBits), two52);
        // bit_width(ulp) = biased exponent of double(ulp) - 1022 for ulp > 0, 0 for ulp == 0.
        const auto ulpExp = hn::ShiftRight<52>(hn::BitCast(du, ulpD));
        const auto ulpBin =
            hn::IfThenZeroElse(hn::Eq(ulp, hn::Zero(du)), hn::Sub(ulpExp, hn::Set(du, uint64_t(1022))));

        const auto da = hn::PromoteTo(d, fa), db = hn::PromoteTo(d, fb);
        const auto absErr = hn::Abs(hn::Sub(da, db));
        const auto refZero = hn::Eq(db, zero);
        const auto quotient = hn::Div(absErr, hn::Abs(db));
        const auto relErr = hn::IfThenElse(refZero, hn::IfThenElseZero(hn::Ne(absErr, zero), inf), quotient);
        const auto relFinite = hn::Lt(relErr, inf);
        const auto relAdd = hn::IfThenElseZero(relFinite, relErr);
        relInfinite += hn::CountTrue(d, hn::Not(relFinite));

        hn::Store(absErr, d, out.absErr + k);
        hn::Store(hn::Mul(absErr, absErr), d, out.absSq + k);
        hn::Store(relErr, d, out.relErr + k);
        hn::Store(relAdd, d, out.relAdd + k);
        hn::Store(hn::Mul(relAdd, relAdd), d, out.relSq + k);
        hn::Store(ulp, du, out.ulp + k);
        hn::Store(ulpBin, du, out.ulpBin + k);
        maxRel = hn::Max(maxRel, relAdd);
        maxUlp = hn::Max(maxUlp, ulpD);
        const auto same = hn::RebindMask(d, hn::Eq(hn::PromoteTo(du, hn::Xor(a, b)), hn::Zero(du)));
        minAbs = hn::Min(minAbs, hn::IfThenElse(same, inf, absErr));
        minRel = hn::Min(minRel, hn::IfThenElse(same, inf, relErr));
        minUlp = hn::Min(minUlp, hn::IfThenElse(same, inf, ulpD));
        if (n <= BlockErrors::kGroup) {
            groupMax = hn::Max(groupMax, absErr);
            if ((k + n) % BlockErrors::kGroup == 0) {
                out.groupMaxAbs[k / BlockErrors::kGroup] = hn::GetLane(hn::MaxOfLanes(d, groupMax));
                maxAbs = hn::Max(maxAbs, groupMax);
                groupMax = zero;
            }
        } else {
            maxAbs = hn::Max(maxAbs, absErr);
        }
    }
    if (n > BlockErrors::kGroup) {  // vectors wider than a group (not on x86): from the stored errors
        for (unsigned g = 0; g < BlockErrors::kBlock / BlockErrors::kGroup; ++g) {
            double mx = 0.0;
            for (unsigned i = 0; i < BlockErrors::kGroup; ++i)
                mx = std::max(mx, out.absErr[g * BlockErrors::kGroup + i]);
            out.groupMaxAbs[g] = mx;
        }
    }
    out.minAbs = hn::GetLane(hn::MinOfLanes(d, minAbs));
    out.minRel = hn::GetLane(hn::MinOfLanes(d, minRel));
    const double minUlpD = hn::GetLane(hn::MinOfLanes(d, minUlp));
    out.minUlp = minUlpD < std::numeric_limits<double>::infinity() ? uint64_t(minUlpD) : 0;
    out.maxAbs = hn::GetLane(hn::MaxOfLanes(d, maxAbs));
    out.maxRel = hn::GetLane(hn::MaxOfLanes(d, maxRel));
    out.maxUlp = uint64_t(hn::GetLane(hn::MaxOfLanes(d, maxUlp)));
    out.relInfinite = relInfinite;
    return true;
}

// Carry-save adder: h:l = a + b + c, bit by bit.
template <class V>
HWY_INLINE void csa(V& h, V& l, V a, V b, V c)
{
    const V u = hn::Xor(a, b);
    h = hn::Or(hn::And(a, b), hn::And(u, c));
    l = hn::Xor(u, c);
}

// Adds weight x (number of lanes with bit q set) to out[q] for every bit position q.
template <class D, class V>
HWY_INLINE void addPositional(D d, V v, uint64_t weight, uint64_t* out)
{
    if (hn::AllTrue(d, hn::Eq(v, hn::Zero(d)))) return;
    for (unsigned q = 0; q < 32; ++q)
        out[q] += weight * uint64_t(hn::CountTrue(d, hn::TestBit(v, hn::Set(d, uint32_t(1) << q))));
}

// The flips (x) and toOne (y) words of the pairs at element i.
template <MismatchFloat Kind, class D, class V>
HWY_INLINE void loadBits(D d, const void* suspect, const void* reference, size_t i, V& x, V& y)
{
    V a, b;
    if constexpr (Kind == MismatchFloat::Float32) {
        a = hn::LoadU(d, static_cast<const uint32_t*>(suspect) + i);
        b = hn::LoadU(d, static_cast<const uint32_t*>(reference) + i);
    } else {
        const hn::Rebind<uint16_t, D> d16;
        a = hn::PromoteTo(d, hn::LoadU(d16, static_cast<const uint16_t*>(suspect) + i));
        b = hn::PromoteTo(d, hn::LoadU(d16, static_cast<const uint16_t*>(reference) + i));
    }
    x = hn::Xor(a, b);
    y = hn::And(x, a);
}

// Bit-sliced partial counts (Harley-Seal state) of the flips (X) and toOne (Y) words.
template <class V>
struct SlicedCounts {
    V onesX, twosX, foursX, eightsX, onesY, twosY, foursY, eightsY;
};

// Eight vectors from element i into ones/twos/fours; their carry out (weight 8) in eX, eY.
template <MismatchFloat Kind, class D, class V>
HWY_INLINE void addEight(D d, const void* s, const void* r, size_t i, SlicedCounts<V>& c, V& eX, V& eY)
{
    const size_t n = hn::Lanes(d);
    V x0, y0, x1, y1, tAX, tAY, tBX, tBY, fAX, fAY, fBX, fBY;
    loadBits<Kind>(d, s, r, i, x0, y0);
    loadBits<Kind>(d, s, r, i + n, x1, y1);
    csa(tAX, c.onesX, c.onesX, x0, x1);
    csa(tAY, c.onesY, c.onesY, y0, y1);
    loadBits<Kind>(d, s, r, i + 2 * n, x0, y0);
    loadBits<Kind>(d, s, r, i + 3 * n, x1, y1);
    csa(tBX, c.onesX, c.onesX, x0, x1);
    csa(tBY, c.onesY, c.onesY, y0, y1);
    csa(fAX, c.twosX, c.twosX, tAX, tBX);
    csa(fAY, c.twosY, c.twosY, tAY, tBY);
    loadBits<Kind>(d, s, r, i + 4 * n, x0, y0);
    loadBits<Kind>(d, s, r, i + 5 * n, x1, y1);
    csa(tAX, c.onesX, c.onesX, x0, x1);
    csa(tAY, c.onesY, c.onesY, y0, y1);
    loadBits<Kind>(d, s, r, i + 6 * n, x0, y0);
    loadBits<Kind>(d, s, r, i + 7 * n, x1, y1);
    csa(tBX, c.onesX, c.onesX, x0, x1);
    csa(tBY, c.onesY, c.onesY, y0, y1);
    csa(fBX, c.twosX, c.twosX, tAX, tBX);
    csa(fBY, c.twosY, c.twosY, tAY, tBY);
    csa(eX, c.foursX, c.foursX, fAX, fBX);
    csa(eY, c.foursY, c.foursY, fAY, fBY);
}

template <MismatchFloat Kind>
HWY_INLINE void segmentBits(const void* suspect, const void* reference, size_t blocks, uint64_t* flipsOut,
                            uint64_t* toOneOut)
{
    using D = hn::ScalableTag<uint32_t>;
    using V = hn::Vec<D>;
    const D d;
    const size_t n = hn::Lanes(d);
    const size_t count = blocks * BlockErrors::kBlock;  // a multiple of n
    const V zero = hn::Zero(d);
    SlicedCounts<V> c{zero, zero, zero, zero, zero, zero, zero, zero};
    size_t i = 0;
    for (; i + 16 * n <= count; i += 16 * n) {
        V eAX, eAY, eBX, eBY, sX, sY;
        addEight<Kind>(d, suspect, reference, i, c, eAX, eAY);
        addEight<Kind>(d, suspect, reference, i + 8 * n, c, eBX, eBY);
        csa(sX, c.eightsX, c.eightsX, eAX, eBX);
        csa(sY, c.eightsY, c.eightsY, eAY, eBY);
        addPositional(d, sX, 16, flipsOut);
        addPositional(d, sY, 16, toOneOut);
    }
    for (; i < count; i += n) {
        V x, y;
        loadBits<Kind>(d, suspect, reference, i, x, y);
        addPositional(d, x, 1, flipsOut);
        addPositional(d, y, 1, toOneOut);
    }
    addPositional(d, c.onesX, 1, flipsOut);
    addPositional(d, c.twosX, 2, flipsOut);
    addPositional(d, c.foursX, 4, flipsOut);
    addPositional(d, c.eightsX, 8, flipsOut);
    addPositional(d, c.onesY, 1, toOneOut);
    addPositional(d, c.twosY, 2, toOneOut);
    addPositional(d, c.foursY, 4, toOneOut);
    addPositional(d, c.eightsY, 8, toOneOut);
}

void SegmentBitsF32(const void* s, const void* r, size_t blocks, uint64_t* flips, uint64_t* toOne)
{
    segmentBits<MismatchFloat::Float32>(s, r, blocks, flips, toOne);
}
void SegmentBitsU16(const void* s, const void* r, size_t blocks, uint64_t* flips, uint64_t* toOne)
{
    segmentBits<MismatchFloat::BFloat16>(s, r, blocks, flips, toOne);
}

bool BlockErrorsF32(const void* s, const void* r, BlockErrors& out)
{
    return blockErrors<MismatchFloat::Float32>(s, r, out);
}
bool BlockErrorsBF16(const void* s, const void* r, BlockErrors& out)
{
    return blockErrors<MismatchFloat::BFloat16>(s, r, out);
}
bool BlockErrorsF16(const void* s, const void* r, BlockErrors& out)
{
    return blockErrors<MismatchFloat::Float16>(s, r, out);
}
int64_t ActiveTarget()
{
    return HWY_TARGET;
}

}  // namespace HWY_NAMESPACE
}  // namespace faultline
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace faultline {

HWY_EXPORT(BlockErrorsF32);
HWY_EXPORT(BlockErrorsBF16);
HWY_EXPORT(BlockErrorsF16);
HWY_EXPORT(ActiveTarget);
HWY_EXPORT(SegmentBitsF32);
HWY_EXPORT(SegmentBitsU16);

void countSegmentBits(MismatchFloat kind, const void* suspect, const void* reference, size_t blocks,
                      uint64_t* flips, uint64_t* toOne)
{
    if (kind == MismatchFloat::Float32)
        HWY_DYNAMIC_DISPATCH(SegmentBitsF32)(suspect, reference, blocks, flips, toOne);
    else
        HWY_DYNAMIC_DISPATCH(SegmentBitsU16)(suspect, reference, blocks, flips, toOne);
}

bool computeBlockErrors(MismatchFloat kind, const void* suspect, const void* reference, BlockErrors& out)
{
    switch (kind) {
        case MismatchFloat::Float32:
            return HWY_DYNAMIC_DISPATCH(BlockErrorsF32)(suspect, reference, out);
        case MismatchFloat::BFloat16:
            return HWY_DYNAMIC_DISPATCH(BlockErrorsBF16)(suspect, reference, out);
        case MismatchFloat::Float16:
            return HWY_DYNAMIC_DISPATCH(BlockErrorsF16)(suspect, reference, out);
    }
    return false;
}

std::vector<int64_t> mismatchMathTargets()
{
    return hwy::SupportedAndGeneratedTargets();
}

std::string mismatchMathTargetName(int64_t target)
{
    return hwy::TargetName(target);
}

int64_t mismatchMathActiveTarget()
{
    return HWY_DYNAMIC_DISPATCH(ActiveTarget)();
}

void restrictMismatchMathTargets(int64_t target)
{
    hwy::SetSupportedTargetsForTest(target);
}

}  // namespace faultline
#endif  // HWY_ONCE
