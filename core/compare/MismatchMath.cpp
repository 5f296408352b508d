// The block error arithmetic of the compare engine (MismatchMath.h), compiled once per Highway
// target by foreach_target.h (this file includes itself) and dispatched at run time.
#include "MismatchMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

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

// Pass 1 of blockErrors: the mismatching pairs of the `total` elements packed in position order
// into a/b (their bits, widened to 32), fa/fb (their float32 bits: float16 is converted here)
// and k, and where each 16-element group starts among them (groupStart). Returns false when any
// element is NaN or infinite.
template <MismatchFloat Kind>
HWY_INLINE bool packMismatches(const void* suspect, const void* reference, size_t total, uint32_t* pa,
                               uint32_t* pb, uint32_t* pfa, uint32_t* pfb, uint32_t* pk, uint32_t* groupStart,
                               unsigned& count)
{
    const hn::ScalableTag<uint32_t> d32;
    const hn::Rebind<uint16_t, decltype(d32)> d16;
    const hn::Rebind<hwy::float16_t, decltype(d32)> dh;
    const hn::Rebind<float, decltype(d32)> df;
    const size_t n = hn::Lanes(d32);
    static_assert(HWY_MAX_BYTES / sizeof(uint32_t) <= BlockErrors::kPad, "a vector must fit in the padding");
    constexpr uint32_t kExp = Kind == MismatchFloat::Float32    ? 0x7F800000u
                              : Kind == MismatchFloat::BFloat16 ? 0x7F80u
                                                                : 0x7C00u;
    const auto exp = hn::Set(d32, kExp);
    static_assert(BlockErrors::kGroup % (HWY_MAX_BYTES / sizeof(uint32_t)) == 0, "a vector within a group");
    unsigned m = 0;
    for (size_t k = 0; k < total; k += n) {
        if (k % BlockErrors::kGroup == 0) groupStart[k / BlockErrors::kGroup] = m;
        hn::Vec<decltype(d32)> a, b;
        hn::Vec<decltype(d16)> a16, b16;
        if constexpr (Kind == MismatchFloat::Float32) {
            a = hn::LoadU(d32, static_cast<const uint32_t*>(suspect) + k);
            b = hn::LoadU(d32, static_cast<const uint32_t*>(reference) + k);
        } else {
            a16 = hn::LoadU(d16, static_cast<const uint16_t*>(suspect) + k);
            b16 = hn::LoadU(d16, static_cast<const uint16_t*>(reference) + k);
            a = hn::PromoteTo(d32, a16);
            b = hn::PromoteTo(d32, b16);
        }
        const auto nonFinite = hn::Or(hn::Eq(hn::And(a, exp), exp), hn::Eq(hn::And(b, exp), exp));
        if (!hn::AllFalse(d32, nonFinite)) return false;
        const auto differs = hn::Ne(a, b);
        hn::StoreU(hn::Compress(a, differs), d32, pa + m);
        hn::StoreU(hn::Compress(b, differs), d32, pb + m);
        hn::StoreU(hn::Compress(hn::Iota(d32, uint32_t(k)), differs), d32, pk + m);
        if constexpr (Kind == MismatchFloat::Float16) {
            const auto fa = hn::BitCast(d32, hn::PromoteTo(df, hn::BitCast(dh, a16)));
            const auto fb = hn::BitCast(d32, hn::PromoteTo(df, hn::BitCast(dh, b16)));
            hn::StoreU(hn::Compress(fa, differs), d32, pfa + m);
            hn::StoreU(hn::Compress(fb, differs), d32, pfb + m);
        }
        m += unsigned(hn::CountTrue(d32, differs));
    }
    // Equal zero pairs past the last entry: pass 2 reads whole vectors, and these add nothing.
    hn::StoreU(hn::Zero(d32), d32, pa + m);
    hn::StoreU(hn::Zero(d32), d32, pb + m);
    hn::StoreU(hn::Zero(d32), d32, pk + m);
    if constexpr (Kind == MismatchFloat::Float16) {
        hn::StoreU(hn::Zero(d32), d32, pfa + m);
        hn::StoreU(hn::Zero(d32), d32, pfb + m);
    }
    groupStart[total / BlockErrors::kGroup] = m;
    count = m;
    return true;
}

// The decade histogram of values[0, m) (finite, >= 0; zeros from m up to the next whole vector)
// whose extremes are lo and hi, when it spans at most BlockErrors::kMaxSpan slots: one count of
// the values at or above each slot's start, instead of one lookup per value. span stays 0 else.
template <class D>
HWY_INLINE void binByDecade(D d, const DecadeSlots& decades, const double* values, size_t m, double lo,
                            double hi, unsigned& slotLo, unsigned& span, uint32_t* counts)
{
    const unsigned first = decades.of(lo), last = decades.of(hi);
    if (last - first >= BlockErrors::kMaxSpan) return;
    const size_t n = hn::Lanes(d);
    uint32_t atLeast = uint32_t(m);  // values at or above the start of slot s (s = first: all)
    for (unsigned s = first; s < last; ++s) {
        const auto from = hn::Set(d, decades.start[s + 1]);  // > 0: the zeros past m never count
        size_t c = 0;
        for (size_t i = 0; i < m; i += n) c += hn::CountTrue(d, hn::Ge(hn::Load(d, values + i), from));
        counts[s - first] = atLeast - uint32_t(c);
        atLeast = uint32_t(c);
    }
    counts[last - first] = atLeast;
    slotLo = first;
    span = last - first + 1;
}

template <MismatchFloat Kind>
HWY_INLINE bool blockErrors(const void* suspect, const void* reference, unsigned blocks,
                            const DecadeSlots& decades, BlockErrors& out)
{
    // Pass 1 packs the mismatches (a Compress to a register and a full store: on AVX-512 a
    // compressing store to memory is microcoded and slow on some CPUs).
    constexpr size_t kRoom = BlockErrors::kRoom;
    alignas(64) uint32_t pa[kRoom], pb[kRoom], pfa[Kind == MismatchFloat::Float16 ? kRoom : 1],
        pfb[Kind == MismatchFloat::Float16 ? kRoom : 1];
    unsigned m = 0;
    const size_t total = size_t(std::clamp(blocks, 1u, BlockErrors::kMaxBlocks)) * BlockErrors::kBlock;
    if (!packMismatches<Kind>(suspect, reference, total, pa, pb, pfa, pfb, out.k, out.groupStart, m))
        return false;
    out.count = m;

    const hn::ScalableTag<double> d;
    const hn::RebindToUnsigned<decltype(d)> du;
    const hn::Rebind<uint32_t, decltype(d)> d32;
    const hn::Rebind<float, decltype(d)> df;
    const size_t n = hn::Lanes(d);

    constexpr uint32_t kSign = Kind == MismatchFloat::Float32 ? 0x80000000u : 0x8000u;
    const auto sign = hn::Set(d32, kSign);
    const auto mag = hn::Set(d32, kSign - 1);
    const auto inf = hn::Set(d, std::numeric_limits<double>::infinity());
    const auto zero = hn::Zero(d);
    // 2^52: OR-ing an integer below 2^52 into its mantissa and subtracting it converts exactly.
    const auto two52Bits = hn::Set(du, uint64_t(0x4330000000000000ull));
    const auto two52 = hn::BitCast(d, two52Bits);

    auto maxAbs = zero, maxRel = zero, maxUlp = zero;
    auto minAbs = inf, minRel = inf, minUlp = inf;
    size_t relInfinite = 0;
    for (size_t i = 0; i < m; i += n) {
        const auto a = hn::LoadU(d32, pa + i), b = hn::LoadU(d32, pb + i);
        hn::Vec<decltype(df)> fa, fb;
        if constexpr (Kind == MismatchFloat::Float32) {
            fa = hn::BitCast(df, a);
            fb = hn::BitCast(df, b);
        } else if constexpr (Kind == MismatchFloat::BFloat16) {
            fa = hn::BitCast(df, hn::ShiftLeft<16>(a));
            fb = hn::BitCast(df, hn::ShiftLeft<16>(b));
        } else {
            fa = hn::BitCast(df, hn::LoadU(d32, pfa + i));
            fb = hn::BitCast(df, hn::LoadU(d32, pfb + i));
        }

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
        relInfinite += hn::CountTrue(d, hn::Not(relFinite));  // the zero pairs past m are finite

        hn::Store(absErr, d, out.absErr + i);
        hn::Store(hn::Mul(absErr, absErr), d, out.absSq + i);
        hn::Store(relErr, d, out.relErr + i);
        hn::Store(relAdd, d, out.relAdd + i);
        hn::Store(hn::Mul(relAdd, relAdd), d, out.relSq + i);
        hn::Store(ulp, du, out.ulp + i);
        hn::Store(ulpBin, du, out.ulpBin + i);
        // The zero pairs past m give zeros: no maximum changes; the minima leave them out.
        maxAbs = hn::Max(maxAbs, absErr);
        maxRel = hn::Max(maxRel, relAdd);
        maxUlp = hn::Max(maxUlp, ulpD);
        const auto entry = hn::FirstN(d, m - i);
        minAbs = hn::Min(minAbs, hn::IfThenElse(entry, absErr, inf));
        minRel = hn::Min(minRel, hn::IfThenElse(entry, relErr, inf));
        minUlp = hn::Min(minUlp, hn::IfThenElse(entry, ulpD, inf));
    }
    out.maxAbs = hn::GetLane(hn::MaxOfLanes(d, maxAbs));
    out.maxRel = hn::GetLane(hn::MaxOfLanes(d, maxRel));
    out.maxUlp = uint64_t(hn::GetLane(hn::MaxOfLanes(d, maxUlp)));
    out.minAbs = m != 0 ? hn::GetLane(hn::MinOfLanes(d, minAbs)) : 0.0;
    out.minRel = m != 0 ? hn::GetLane(hn::MinOfLanes(d, minRel)) : 0.0;
    out.minUlp = m != 0 ? uint64_t(hn::GetLane(hn::MinOfLanes(d, minUlp))) : 0;
    out.relInfinite = relInfinite;
    out.absSlotSpan = 0;
    out.relSlotSpan = 0;
    if (m != 0) {
        binByDecade(d, decades, out.absErr, m, out.minAbs, out.maxAbs, out.absSlotLo, out.absSlotSpan,
                    out.absSlotCount);
        if (relInfinite == 0)
            binByDecade(d, decades, out.relErr, m, out.minRel, out.maxRel, out.relSlotLo, out.relSlotSpan,
                        out.relSlotCount);
    }
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

// Adds weight x (number of lanes with bit q set) to out[q % Width] for every bit position q of
// the 32-bit lanes: Width 16 when each lane holds two 16-bit elements (bits q and q + 16 are the
// same position of two elements).
template <unsigned Width, class D, class V>
HWY_INLINE void addPositional(D d, V v, uint64_t weight, uint64_t* out)
{
    if (hn::AllTrue(d, hn::Eq(v, hn::Zero(d)))) return;
    for (unsigned q = 0; q < 32; ++q)
        out[q % Width] += weight * uint64_t(hn::CountTrue(d, hn::TestBit(v, hn::Set(d, uint32_t(1) << q))));
}

// The flips (x) and toOne (y) words at 32-bit word i: one float32 element per word, or two
// 16-bit elements (the bit operations do not care where an element ends).
template <class D, class V>
HWY_INLINE void loadBits(D d, const void* suspect, const void* reference, size_t i, V& x, V& y)
{
    const auto* s = static_cast<const unsigned char*>(suspect) + i * sizeof(uint32_t);
    const auto* r = static_cast<const unsigned char*>(reference) + i * sizeof(uint32_t);
    const V a = hn::LoadU(d, reinterpret_cast<const uint32_t*>(s));
    const V b = hn::LoadU(d, reinterpret_cast<const uint32_t*>(r));
    x = hn::Xor(a, b);
    y = hn::And(x, a);
}

// Bit-sliced partial counts (Harley-Seal state) of the flips (X) and toOne (Y) words.
template <class V>
struct SlicedCounts {
    V onesX, twosX, foursX, eightsX, onesY, twosY, foursY, eightsY;
};

// Eight vectors from element i into ones/twos/fours; their carry out (weight 8) in eX, eY.
template <class D, class V>
HWY_INLINE void addEight(D d, const void* s, const void* r, size_t i, SlicedCounts<V>& c, V& eX, V& eY)
{
    const size_t n = hn::Lanes(d);
    V x0, y0, x1, y1, tAX, tAY, tBX, tBY, fAX, fAY, fBX, fBY;
    loadBits(d, s, r, i, x0, y0);
    loadBits(d, s, r, i + n, x1, y1);
    csa(tAX, c.onesX, c.onesX, x0, x1);
    csa(tAY, c.onesY, c.onesY, y0, y1);
    loadBits(d, s, r, i + 2 * n, x0, y0);
    loadBits(d, s, r, i + 3 * n, x1, y1);
    csa(tBX, c.onesX, c.onesX, x0, x1);
    csa(tBY, c.onesY, c.onesY, y0, y1);
    csa(fAX, c.twosX, c.twosX, tAX, tBX);
    csa(fAY, c.twosY, c.twosY, tAY, tBY);
    loadBits(d, s, r, i + 4 * n, x0, y0);
    loadBits(d, s, r, i + 5 * n, x1, y1);
    csa(tAX, c.onesX, c.onesX, x0, x1);
    csa(tAY, c.onesY, c.onesY, y0, y1);
    loadBits(d, s, r, i + 6 * n, x0, y0);
    loadBits(d, s, r, i + 7 * n, x1, y1);
    csa(tBX, c.onesX, c.onesX, x0, x1);
    csa(tBY, c.onesY, c.onesY, y0, y1);
    csa(fBX, c.twosX, c.twosX, tAX, tBX);
    csa(fBY, c.twosY, c.twosY, tAY, tBY);
    csa(eX, c.foursX, c.foursX, fAX, fBX);
    csa(eY, c.foursY, c.foursY, fAY, fBY);
}

template <class D, class V>
HWY_INLINE void loadState(D d, const SegmentBitState& state, SlicedCounts<V>& c)
{
    V* parts[] = {&c.onesX, &c.twosX, &c.foursX, &c.eightsX, &c.onesY, &c.twosY, &c.foursY, &c.eightsY};
    for (unsigned j = 0; j < SegmentBitState::kCounters; ++j)
        *parts[j] = state.pending ? hn::Load(d, state.counters[j]) : hn::Zero(d);
}

template <class D, class V>
HWY_INLINE void storeState(D d, const SlicedCounts<V>& c, SegmentBitState& state)
{
    const V parts[] = {c.onesX, c.twosX, c.foursX, c.eightsX, c.onesY, c.twosY, c.foursY, c.eightsY};
    for (unsigned j = 0; j < SegmentBitState::kCounters; ++j) hn::Store(parts[j], d, state.counters[j]);
    state.pending = true;
}

template <MismatchFloat Kind>
HWY_INLINE void segmentBits(const void* suspect, const void* reference, size_t blocks, uint64_t* flipsOut,
                            uint64_t* toOneOut, SegmentBitState& state)
{
    using D = hn::ScalableTag<uint32_t>;
    using V = hn::Vec<D>;
    const D d;
    static_assert(HWY_MAX_BYTES / sizeof(uint32_t) <= SegmentBitState::kLanes, "the state holds a vector");
    const size_t n = hn::Lanes(d);
    // 32-bit words: a multiple of n either way.
    constexpr unsigned kWidth = Kind == MismatchFloat::Float32 ? 32 : 16;
    const size_t count = blocks * BlockErrors::kBlock * kWidth / 32;
    SlicedCounts<V> c;
    loadState(d, state, c);
    size_t i = 0;
    for (; i + 16 * n <= count; i += 16 * n) {
        V eAX, eAY, eBX, eBY, sX, sY;
        addEight(d, suspect, reference, i, c, eAX, eAY);
        addEight(d, suspect, reference, i + 8 * n, c, eBX, eBY);
        csa(sX, c.eightsX, c.eightsX, eAX, eBX);
        csa(sY, c.eightsY, c.eightsY, eAY, eBY);
        addPositional<kWidth>(d, sX, 16, flipsOut);
        addPositional<kWidth>(d, sY, 16, toOneOut);
    }
    for (; i < count; i += n) {
        V x, y;
        loadBits(d, suspect, reference, i, x, y);
        addPositional<kWidth>(d, x, 1, flipsOut);
        addPositional<kWidth>(d, y, 1, toOneOut);
    }
    storeState(d, c, state);
    state.width = kWidth;
}

void FlushSegmentBits(SegmentBitState& state, uint64_t* flipsOut, uint64_t* toOneOut)
{
    using D = hn::ScalableTag<uint32_t>;
    using V = hn::Vec<D>;
    const D d;
    if (!state.pending) return;
    SlicedCounts<V> c;
    loadState(d, state, c);
    const auto flush = [&](auto width) {
        constexpr unsigned kWidth = decltype(width)::value;
        addPositional<kWidth>(d, c.onesX, 1, flipsOut);
        addPositional<kWidth>(d, c.twosX, 2, flipsOut);
        addPositional<kWidth>(d, c.foursX, 4, flipsOut);
        addPositional<kWidth>(d, c.eightsX, 8, flipsOut);
        addPositional<kWidth>(d, c.onesY, 1, toOneOut);
        addPositional<kWidth>(d, c.twosY, 2, toOneOut);
        addPositional<kWidth>(d, c.foursY, 4, toOneOut);
        addPositional<kWidth>(d, c.eightsY, 8, toOneOut);
    };
    if (state.width == 16)
        flush(std::integral_constant<unsigned, 16>{});
    else
        flush(std::integral_constant<unsigned, 32>{});
    state.pending = false;
}

void SegmentBitsF32(const void* s, const void* r, size_t blocks, uint64_t* flips, uint64_t* toOne,
                    SegmentBitState& state)
{
    segmentBits<MismatchFloat::Float32>(s, r, blocks, flips, toOne, state);
}
void SegmentBitsU16(const void* s, const void* r, size_t blocks, uint64_t* flips, uint64_t* toOne,
                    SegmentBitState& state)
{
    segmentBits<MismatchFloat::BFloat16>(s, r, blocks, flips, toOne, state);
}

bool BlockErrorsF32(const void* s, const void* r, unsigned blocks, const DecadeSlots& decades,
                    BlockErrors& out)
{
    return blockErrors<MismatchFloat::Float32>(s, r, blocks, decades, out);
}
bool BlockErrorsBF16(const void* s, const void* r, unsigned blocks, const DecadeSlots& decades,
                     BlockErrors& out)
{
    return blockErrors<MismatchFloat::BFloat16>(s, r, blocks, decades, out);
}
bool BlockErrorsF16(const void* s, const void* r, unsigned blocks, const DecadeSlots& decades,
                    BlockErrors& out)
{
    return blockErrors<MismatchFloat::Float16>(s, r, blocks, decades, out);
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
HWY_EXPORT(FlushSegmentBits);

void countSegmentBits(MismatchFloat kind, const void* suspect, const void* reference, size_t blocks,
                      uint64_t* flips, uint64_t* toOne, SegmentBitState& state)
{
    if (kind == MismatchFloat::Float32)
        HWY_DYNAMIC_DISPATCH(SegmentBitsF32)(suspect, reference, blocks, flips, toOne, state);
    else
        HWY_DYNAMIC_DISPATCH(SegmentBitsU16)(suspect, reference, blocks, flips, toOne, state);
}

void flushSegmentBits(SegmentBitState& state, uint64_t* flips, uint64_t* toOne)
{
    HWY_DYNAMIC_DISPATCH(FlushSegmentBits)(state, flips, toOne);
}

const DecadeSlots& DecadeSlots::table()
{
    static const DecadeSlots t = [] {
        const DecadeHistogram::Table& d = DecadeHistogram::table();
        DecadeSlots s;
        for (size_t e = 1; e < 2047; ++e) {
            s.slot[e] = uint8_t(1 + d.bin[e]);
            s.nextFrom[e] = d.nextFrom[e];
        }
        s.slot[0] = 0;
        s.nextFrom[0] = std::numeric_limits<double>::denorm_min();
        s.slot[2047] = uint8_t(kDecadeSlots - 1);
        s.nextFrom[2047] = std::numeric_limits<double>::quiet_NaN();
        // Slot s + 1 starts where x first maps to it: the smallest binade start or in-binade
        // split of that slot (slots are monotonic in x).
        s.start.fill(std::numeric_limits<double>::infinity());
        s.start[0] = 0.0;
        s.start[1] = std::numeric_limits<double>::denorm_min();
        for (size_t e = 1; e < 2047; ++e) {
            const double lo = std::ldexp(1.0, int(e) - 1023);
            s.start[s.slot[e]] = std::min(s.start[s.slot[e]], lo);
            if (s.nextFrom[e] < std::numeric_limits<double>::infinity())
                s.start[s.slot[e] + 1u] = std::min(s.start[s.slot[e] + 1u], s.nextFrom[e]);
        }
        return s;
    }();
    return t;
}

bool computeBlockErrors(MismatchFloat kind, const void* suspect, const void* reference, unsigned blocks,
                        const DecadeSlots& decades, BlockErrors& out)
{
    switch (kind) {
        case MismatchFloat::Float32:
            return HWY_DYNAMIC_DISPATCH(BlockErrorsF32)(suspect, reference, blocks, decades, out);
        case MismatchFloat::BFloat16:
            return HWY_DYNAMIC_DISPATCH(BlockErrorsBF16)(suspect, reference, blocks, decades, out);
        case MismatchFloat::Float16:
            return HWY_DYNAMIC_DISPATCH(BlockErrorsF16)(suspect, reference, blocks, decades, out);
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
