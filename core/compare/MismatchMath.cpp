// The block error arithmetic of the compare engine (MismatchMath.h), compiled once per Highway
// target by foreach_target.h (this file includes itself) and dispatched at run time.
#include "MismatchMath.h"

#include <limits>

// Every attainable target, the emulated 128-bit one included, so that tests can run the vector
// code on each instruction set the CPU has and on the emulation.
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
        maxAbs = hn::Max(maxAbs, absErr);
        maxRel = hn::Max(maxRel, relAdd);
        maxUlp = hn::Max(maxUlp, ulpD);
    }
    out.maxAbs = hn::GetLane(hn::MaxOfLanes(d, maxAbs));
    out.maxRel = hn::GetLane(hn::MaxOfLanes(d, maxRel));
    out.maxUlp = uint64_t(hn::GetLane(hn::MaxOfLanes(d, maxUlp)));
    out.relInfinite = relInfinite;
    return true;
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
