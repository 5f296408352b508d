#pragma once
// The golden model's transcendental functions and activation formulas, FL_HD so the CPU golden
// ops and the CUDA golden kernels share them bit for bit.
//
// Why not expf/erff/tanhf: glibc's and CUDA's versions differ in the last bits (each is only
// accurate to 1-2 ulp, and differently), so a golden model built on them could never be
// bit-identical across host and device. These are written out here with range reduction and
// polynomials using only the correctly rounded operations of GoldenOrder.h (fmaRn, mulRn, divRn,
// +, -) and bit manipulation, so every IEEE-754 implementation computes the same bits.
// Accuracy (measured against double-precision libm by tests/core/test_golden_math.cpp over
// dense sweeps): goldenExp <= 2 ulp, goldenErf <= 2 ulp, goldenTanh <= 3 ulp for normal
// results. ErrorBounds assumes at most kGoldenFunctionUlp (4) ulp for the golden functions and
// for the other implementations' library functions.
//
// Coefficients: exp uses the Taylor series to degree 7 on |r| <= ln2/2; erf and tanh use
// least-squares fits (Chebyshev nodes, weighted for relative error), rounded to float:
//   erf:  |x| <  0.921875   erf(x) = x + x * P(x^2)                      (P degree 6)
//         |x| <  4          erf(x) = 1 - exp(Q(|x|)), Q ~ ln(erfc)       (Q degree 8)
//         |x| >= 4          erf(x) = ±1
//   tanh: |x| <  2^-12      tanh(x) = x (keeps -0 and subnormals exact)
//         |x| <  0.625      tanh(x) = x + x^3 * T(x^2)                   (T degree 5)
//         |x| <  10         tanh(x) = 1 - 2 / (exp(2|x|) + 1)
//         |x| >= 10         tanh(x) = ±1
#include <cstdint>

#include "GoldenOrder.h"

namespace faultline::golden {

inline constexpr double kGoldenFunctionUlp = 4.0;

namespace detail {

FL_HD float withSignOf(float magnitude, float signSource)
{
    return floatFromBits((floatBits(magnitude) & 0x7FFFFFFFu) | (floatBits(signSource) & 0x80000000u));
}

FL_HD float absF(float x)
{
    return floatFromBits(floatBits(x) & 0x7FFFFFFFu);
}

// 2^e as a float for -126 <= e <= 127.
FL_HD float pow2(int e)
{
    return floatFromBits(uint32_t(e + 127) << 23);
}

}  // namespace detail

// e^x.
FL_HD float goldenExp(float x)
{
    if (isNanF(x)) return x + x;
    if (x > 89.0f) return floatFromBits(0x7F800000u);  // above ln(FLT_MAX) = 88.72...
    if (x < -104.0f) return 0.0f;                      // below ln(2^-150)
    // n = round(x / ln2): adding 1.5 * 2^23 leaves an integer in the low mantissa bits.
    const float kShift = 12582912.0f;
    const float t = fmaRn(x, 1.44269502e+00f, kShift);
    const float n = t - kShift;
    const int ni = int(int32_t(floatBits(t) - floatBits(kShift)));
    // r = x - n * ln2 in two steps (Cody-Waite); the first step is exact.
    float r = fmaRn(-n, 6.93147182e-01f, x);
    r = fmaRn(-n, -1.90465421e-09f, r);
    // e^r, Taylor series to degree 7.
    float p = 1.98412701e-04f;  // 1/7!
    p = fmaRn(p, r, 1.38888892e-03f);
    p = fmaRn(p, r, 8.33333377e-03f);
    p = fmaRn(p, r, 4.16666679e-02f);
    p = fmaRn(p, r, 1.66666672e-01f);
    p = fmaRn(p, r, 5.00000000e-01f);
    p = fmaRn(p, r, 1.0f);
    p = fmaRn(p, r, 1.0f);
    // p * 2^n with a single rounding (only a subnormal or overflowing result rounds).
    if (ni > 127) return mulRn(mulRn(p, detail::pow2(ni - 1)), 2.0f);
    if (ni < -125) return mulRn(mulRn(p, detail::pow2(ni + 100)), detail::pow2(-100));
    return mulRn(p, detail::pow2(ni));
}

// erf(x).
FL_HD float goldenErf(float x)
{
    if (isNanF(x)) return x + x;
    const float ax = detail::absF(x);
    if (ax < 0.921875f) {
        const float s = mulRn(x, x);
        float p = 8.392696327e-05f;
        p = fmaRn(p, s, -8.148506167e-04f);
        p = fmaRn(p, s, 5.201591644e-03f);
        p = fmaRn(p, s, -2.685964666e-02f);
        p = fmaRn(p, s, 1.128370017e-01f);
        p = fmaRn(p, s, -3.761263490e-01f);
        p = fmaRn(p, s, 1.283791661e-01f);
        return fmaRn(x, p, x);
    }
    if (ax < 4.0f) {
        float q = -2.730484425e-07f;
        q = fmaRn(q, ax, -1.769579831e-05f);
        q = fmaRn(q, ax, 4.163891135e-04f);
        q = fmaRn(q, ax, -4.117439967e-03f);
        q = fmaRn(q, ax, 2.502227947e-02f);
        q = fmaRn(q, ax, -1.081699803e-01f);
        q = fmaRn(q, ax, -6.334232092e-01f);
        q = fmaRn(q, ax, -1.129485369e+00f);
        q = fmaRn(q, ax, 1.697744010e-04f);
        return detail::withSignOf(1.0f - goldenExp(q), x);
    }
    return detail::withSignOf(1.0f, x);
}

// tanh(x).
FL_HD float goldenTanh(float x)
{
    if (isNanF(x)) return x + x;
    const float ax = detail::absF(x);
    if (ax < 2.44140625e-04f) return x;  // 2^-12
    if (ax < 0.625f) {
        const float s = mulRn(x, x);
        float p = 2.295840299e-03f;
        p = fmaRn(p, s, -8.346979506e-03f);
        p = fmaRn(p, s, 2.176996134e-02f);
        p = fmaRn(p, s, -5.395940691e-02f);
        p = fmaRn(p, s, 1.333330423e-01f);
        p = fmaRn(p, s, -3.333333433e-01f);
        return fmaRn(mulRn(s, x), p, x);
    }
    if (ax < 10.0f) {
        const float e = goldenExp(mulRn(2.0f, ax));
        return detail::withSignOf(1.0f - divRn(2.0f, e + 1.0f), x);
    }
    return detail::withSignOf(1.0f, x);
}

// ---- activations ----------------------------------------------------------------------------

// gelu(x), approximate = none: (x * 0.5) * (1 + erf(x * (1/sqrt 2))), PyTorch's formula.
FL_HD float geluErfGolden(float x)
{
    const float e = goldenErf(mulRn(x, 7.07106769e-01f));
    return mulRn(mulRn(x, 0.5f), 1.0f + e);
}

// gelu(x), approximate = tanh: (0.5 * x) * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), with
// x^3 = (x * x) * x and the inner sum one FMA, as PyTorch writes it.
FL_HD float geluTanhGolden(float x)
{
    const float x3 = mulRn(mulRn(x, x), x);
    const float inner = fmaRn(4.471499845e-02f, x3, x);
    const float t = goldenTanh(mulRn(7.978845834e-01f, inner));
    return mulRn(mulRn(0.5f, x), 1.0f + t);
}

// silu(x) = x / (1 + exp(-x)).
FL_HD float siluGolden(float x)
{
    return divRn(x, 1.0f + goldenExp(-x));
}

}  // namespace faultline::golden
