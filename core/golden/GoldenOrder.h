#pragma once
// The golden model's order of operations: ONE definition, shared by the CPU golden ops
// (core/golden/*.cpp) and the CUDA golden kernels (kernels/), so that both produce the same bits
// for the same inputs. Everything here is FL_HD (host and device) and uses only IEEE-754 binary32
// operations that every conforming implementation rounds identically: +, -, *, /, sqrt and fused
// multiply-add, each rounded to nearest-even, no flush-to-zero (the golden model assumes MXCSR
// FTZ/DAZ off on the host and -ftz=false, -prec-div=true, -prec-sqrt=true on the device; never
// build golden code with -ffast-math or --use_fast_math).
//
// Fusion is part of the definition. Compilers fuse `a * b + c` into an FMA on their own (GCC does
// so for C++ even in ISO mode, nvcc by default), which would change bits, so golden code never
// lets a plain `*` feed a `+`/`-`: an intended fused operation is written `fmaf`, an intended
// separate product is written `mulRn` (which neither compiler can fuse: an empty asm barrier on
// the host, __fmul_rn on the device). Plain `+`, `-` between values that are not raw products
// are safe and used as they are.
//
// The orders (tests/core/test_golden_*.cpp check that the code does exactly this):
// - Dot chain (GEMM, attention): out = 0.0f; for p = 0, 1, ..., k-1: out = fmaf(a_p, b_p, out).
//   One sequential FMA chain per output element, k ascending, starting from +0.0f. A blocked or
//   vectorised implementation may split k into blocks only if it carries the float accumulator
//   from block to block (never sums partial blocks separately).
// - GEMM epilogue: with C read (beta != 0 and C given): d = fmaf(alpha, acc, mulRn(beta, c));
//   otherwise d = mulRn(alpha, acc) (C is not read at all, as in BLAS). alpha and beta are
//   rounded (RNE) from the trace's double to float first.
// - Reduction tree (norms, softmax, attention's softmax): kTreeLanes = 32 lanes; lane l starts
//   at +0.0f and adds x[l], x[l+32], x[l+64], ... in that order; then the lanes are combined by
//   halving: for off = 16, 8, 4, 2, 1: lane[l] = lane[l] + lane[l+off] for l < off; the result
//   is lane[0]. (A CUDA warp: each lane loops over its strided elements, then
//   __shfl_down_sync with offsets 16..1.) Because the lane of x[i] is i mod 32 whatever n is,
//   appending zeros to a row of non-negative values does not change the tree's result.
// - Max/min reductions use the same tree starting from -inf/+inf with goldenMax/goldenMin.
// - Cross-rank reduction (all_reduce): acc = x_rank0; acc = acc (op) x_rank_r for r = 1, 2, ...
// - Narrow dtypes (bfloat16, float16, float8): inputs are widened to float exactly; all
//   arithmetic is float; each output element is rounded once (RNE, core/FloatFormats.h) to the
//   output dtype at the very end. Intermediates (attention's scores and probabilities) stay float.
//
// NaN: the contract fixes WHETHER a result is NaN, not WHICH NaN. The payload and sign bits of a
// NaN are not part of the golden definition: an operation that creates a NaN (inf - inf, 0 * inf,
// 0 / 0, sqrt(-1)) gives the default NaN of the hardware (x86 SSE: 0xFFC00000, NVIDIA GPUs:
// 0x7FFFFFFF), and one that propagates a NaN may keep its operand's payload or not. So golden
// implementations are bit-identical on every non-NaN result, and bit-exactness checks between
// them (tests/gpu, bench_gpu, scripts/gpu-check) compare with goldenSameResult below: identical
// bits, or NaN on both sides; nothing else is loosened (-0 vs +0, an inf vs a NaN, and a NaN vs a
// number all differ).
#include <cmath>
#include <cstdint>

#include "../FloatFormats.h"
#include "../HostDevice.h"

namespace faultline::golden {

// ---- elementary operations with a fixed rounding -----------------------------------------

// a * b rounded once, never fused into a neighbouring add.
FL_HD float mulRn(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    float p = a * b;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__("" : "+x"(p));  // opaque to the optimiser: the product cannot become part of an FMA
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__("" : "+w"(p));
#else
    volatile float v = p;
    p = v;
#endif
    return p;
#endif
}

// a * b + c rounded once.
FL_HD float fmaRn(float a, float b, float c)
{
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}

FL_HD float divRn(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}

FL_HD float sqrtRn(float a)
{
#if defined(__CUDA_ARCH__)
    return __fsqrt_rn(a);
#else
    return std::sqrt(a);
#endif
}

FL_HD bool isNanF(float x)
{
    return floatBitsAreNan(floatBits(x), 0x7FFFFFFFu, 0x7F800000u, false);
}

// The golden contract's equality of two results (see NaN above): identical bits, or both NaN.
FL_HD bool goldenSameResult(float a, float b)
{
    return floatBits(a) == floatBits(b) || (isNanF(a) && isNanF(b));
}

// max with NaN propagation (the first NaN operand wins) and max(+0, -0) = +0 in either order.
FL_HD float goldenMax(float a, float b)
{
    if (isNanF(a)) return a;
    if (isNanF(b)) return b;
    if (a > b) return a;
    if (b > a) return b;
    return floatFromBits(floatBits(a) & floatBits(b));  // equal: identical bits, or ±0 -> +0
}

// min with NaN propagation and min(+0, -0) = -0 in either order.
FL_HD float goldenMin(float a, float b)
{
    if (isNanF(a)) return a;
    if (isNanF(b)) return b;
    if (a < b) return a;
    if (b < a) return b;
    return floatFromBits(floatBits(a) | floatBits(b));
}

// ---- dot chain ----------------------------------------------------------------------------

// sum_p a[p*strideA] * b[p*strideB], as one FMA chain over p ascending from +0.0f.
FL_HD float dotChain(const float* a, int64_t strideA, const float* b, int64_t strideB, int64_t k)
{
    float acc = 0.0f;
    for (int64_t p = 0; p < k; ++p) acc = fmaRn(a[p * strideA], b[p * strideB], acc);
    return acc;
}

// d = alpha * acc + beta * c as the golden GEMM defines it (see the header comment).
FL_HD float gemmEpilogue(float acc, float alpha, float beta, float c, bool readC)
{
    return readC ? fmaRn(alpha, acc, mulRn(beta, c)) : mulRn(alpha, acc);
}

// ---- the fixed reduction tree -------------------------------------------------------------

inline constexpr int kTreeLanes = 32;

// Combines 32 lane partial sums by halving (offsets 16, 8, 4, 2, 1); lane[] is overwritten.
FL_HD float treeCombineSum(float* lane)
{
    for (int off = kTreeLanes / 2; off > 0; off /= 2)
        for (int l = 0; l < off; ++l) lane[l] = lane[l] + lane[l + off];
    return lane[0];
}

FL_HD float treeCombineMax(float* lane)
{
    for (int off = kTreeLanes / 2; off > 0; off /= 2)
        for (int l = 0; l < off; ++l) lane[l] = goldenMax(lane[l], lane[l + off]);
    return lane[0];
}

// Sum of load(0) .. load(n-1) in the golden tree order. `load(i)` returns element i as float.
template <class Load>
FL_HD float treeSum(Load load, int64_t n)
{
    float lane[kTreeLanes];
    for (int l = 0; l < kTreeLanes; ++l) lane[l] = 0.0f;
    // Row-major over blocks of 32: each lane still adds its own elements in ascending order.
    for (int64_t base = 0; base < n; base += kTreeLanes) {
        const int64_t left = n - base;
        const int count = left < kTreeLanes ? int(left) : kTreeLanes;
        for (int l = 0; l < count; ++l) lane[l] = lane[l] + load(base + l);
    }
    return treeCombineSum(lane);
}

// Maximum of load(0) .. load(n-1) in the golden tree order (-inf for n == 0).
template <class Load>
FL_HD float treeMax(Load load, int64_t n)
{
    float lane[kTreeLanes];
    for (int l = 0; l < kTreeLanes; ++l) lane[l] = floatFromBits(0xFF800000u);
    for (int64_t base = 0; base < n; base += kTreeLanes) {
        const int64_t left = n - base;
        const int count = left < kTreeLanes ? int(left) : kTreeLanes;
        for (int l = 0; l < count; ++l) lane[l] = goldenMax(lane[l], load(base + l));
    }
    return treeCombineMax(lane);
}

// Convenience overloads over a contiguous float row.
FL_HD float treeSumRow(const float* x, int64_t n)
{
    return treeSum([x](int64_t i) { return x[i]; }, n);
}

FL_HD float treeMaxRow(const float* x, int64_t n)
{
    return treeMax([x](int64_t i) { return x[i]; }, n);
}

}  // namespace faultline::golden
