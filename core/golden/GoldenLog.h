#pragma once
// The golden natural logarithm, FL_HD like GoldenMath.h's functions and for the same reason (libm's
// and CUDA's logf differ in the last bits): only the correctly rounded operations of GoldenOrder.h
// and bit manipulation, so every IEEE-754 implementation computes the same bits.
//
// Method (the classic fdlibm/musl logf reduction): x = 2^k (1 + f) with 1 + f in
// [sqrt(2)/2, sqrt(2)); s = f / (2 + f); log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)) with
// R(z) = z (Lg1 + z^2 Lg3) + z^2 (Lg2 + z^2 Lg4); log x = k ln2_hi + (that + k ln2_lo).
// Subnormal x is scaled by 2^25 first. log(+0) = log(-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf.
// Accuracy (tests/core/test_golden_loss.cpp, dense sweep against double-precision log): <= 2 ulp,
// inside kGoldenFunctionUlp.
#include <cstdint>

#include "GoldenOrder.h"

namespace faultline::golden {

FL_HD float goldenLog(float x)
{
    if (isNanF(x)) return x + x;
    uint32_t ix = floatBits(x);
    if ((ix & 0x7FFFFFFFu) == 0) return floatFromBits(0xFF800000u);  // -inf
    if (ix >> 31) return floatFromBits(0x7FC00000u);                 // NaN
    if (ix == 0x7F800000u) return x;                                 // +inf
    int k = 0;
    if (ix < 0x00800000u) {  // subnormal: scale into the normal range
        k = -25;
        x = mulRn(x, 33554432.0f);
        ix = floatBits(x);
    }
    // 1 + f in [sqrt(2)/2, sqrt(2)), k the matching exponent.
    ix += 0x3F800000u - 0x3F3504F3u;
    k += int(ix >> 23) - 0x7F;
    ix = (ix & 0x007FFFFFu) + 0x3F3504F3u;
    const float f = floatFromBits(ix) - 1.0f;
    const float s = divRn(f, 2.0f + f);
    const float z = mulRn(s, s);
    const float w = mulRn(z, z);
    const float t1 = mulRn(w, fmaRn(w, 2.4279078841e-01f, 4.0000972152e-01f));  // w (Lg2 + w Lg4)
    const float t2 = mulRn(z, fmaRn(w, 2.8498786688e-01f, 6.6666662693e-01f));  // z (Lg1 + w Lg3)
    const float r = t2 + t1;
    const float hfsq = mulRn(mulRn(0.5f, f), f);
    const float dk = float(k);
    float y = fmaRn(s, hfsq + r, mulRn(dk, 9.0580006145e-06f));  // s (hfsq + R) + k ln2_lo
    y = y - hfsq;
    y = y + f;
    return fmaRn(dk, 6.9313812256e-01f, y);  // + k ln2_hi (exact product: ln2_hi has 16 bits)
}

}  // namespace faultline::golden
