#include "Convert.h"

#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#include "FloatFormats.h"

namespace faultline {

static_assert(std::endian::native == std::endian::little,
              "Faultline reads little-endian tensor data with plain loads; add byte swaps for "
              "big-endian hosts");

namespace {

using Byte = unsigned char;

template <class T>
inline T loadAt(const Byte* p, size_t i)
{
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
}

template <class T>
inline void storeAt(Byte* p, size_t i, T v)
{
    std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

// Applies f to each element. The fixed-length inner loop lets g++ -O2 (whose "very cheap" cost
// model refuses loops that need a scalar epilogue) vectorise the bulk; the tail runs scalar.
constexpr size_t kBlock = 16;

template <class S, class D, class F>
void mapElements(const Byte* __restrict src, Byte* __restrict dst, size_t n, F f)
{
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
        for (size_t j = 0; j < kBlock; ++j) storeAt<D>(dst, i + j, f(loadAt<S>(src, i + j)));
    for (; i < n; ++i) storeAt<D>(dst, i, f(loadAt<S>(src, i)));
}

// Exact round-to-nearest-even of a finite F to an integral F, independent of the FPU rounding
// mode and without a libm call.
template <class F>
inline F roundHalfEven(F x)
{
    constexpr F kIntegral = F(uint64_t(1) << (std::numeric_limits<F>::digits - 1));
    if (!(x < kIntegral && x > -kIntegral)) return x;  // already integral (or inf)
    const int64_t t = int64_t(x);                      // truncates toward zero
    const F frac = x - F(t);                           // exact
    const int64_t odd = t & 1;
    int64_t r = t;
    if (frac > F(0.5) || (frac == F(0.5) && odd)) r = t + 1;
    if (frac < F(-0.5) || (frac == F(-0.5) && odd)) r = t - 1;
    return F(r);
}

// Round to nearest even, saturate to I's range, NaN -> 0.
template <class I, class F>
inline I roundSaturate(F x)
{
    using Limits = std::numeric_limits<I>;
    if (x != x) return 0;
    const F r = roundHalfEven(x);
    // 2^digits is the first value above the range (digits excludes the sign bit): exact in F.
    const F hi = F(2) * F(uint64_t(1) << (Limits::digits - 1));
    const F lo = Limits::is_signed ? -hi : F(0);
    if (r >= hi) return Limits::max();
    if (r <= lo) return Limits::min();
    return I(r);
}

template <class S>
void integerToDouble(const Byte* src, double* dst, size_t n)
{
    mapElements<S, double>(src, reinterpret_cast<Byte*>(dst), n, [](S v) { return double(v); });
}

template <class S>
void integerToFloat(const Byte* src, float* dst, size_t n)
{
    mapElements<S, float>(src, reinterpret_cast<Byte*>(dst), n, [](S v) { return float(v); });
}

template <class I, class F>
void toInteger(const F* src, Byte* dst, size_t n)
{
    mapElements<F, I>(reinterpret_cast<const Byte*>(src), dst, n, [](F v) { return roundSaturate<I>(v); });
}

template <class T>
void fill(T* dst, size_t n, T v)
{
    for (size_t i = 0; i < n; ++i) dst[i] = v;
}

}  // namespace

void convertToDouble(DType t, const void* srcv, double* dst, size_t n)
{
    const auto* src = static_cast<const Byte*>(srcv);
    auto* out = reinterpret_cast<Byte*>(dst);
    switch (t) {
        case DType::Float64:
            std::memcpy(dst, src, n * sizeof(double));
            return;
        case DType::Float32:
            mapElements<float, double>(src, out, n, [](float v) { return double(v); });
            return;
        case DType::Float16:
            mapElements<uint16_t, double>(src, out, n, [](uint16_t v) { return double(halfToFloat(v)); });
            return;
        case DType::BFloat16:
            mapElements<uint16_t, double>(src, out, n, [](uint16_t v) { return double(bf16ToFloat(v)); });
            return;
        case DType::Float8E4M3FN:
            mapElements<uint8_t, double>(src, out, n, [](uint8_t v) { return double(fp8e4m3fnToFloat(v)); });
            return;
        case DType::Float8E5M2:
            mapElements<uint8_t, double>(src, out, n, [](uint8_t v) { return double(fp8e5m2ToFloat(v)); });
            return;
        case DType::Int8:
            integerToDouble<int8_t>(src, dst, n);
            return;
        case DType::Int16:
            integerToDouble<int16_t>(src, dst, n);
            return;
        case DType::Int32:
            integerToDouble<int32_t>(src, dst, n);
            return;
        case DType::Int64:
            integerToDouble<int64_t>(src, dst, n);
            return;
        case DType::UInt8:
            integerToDouble<uint8_t>(src, dst, n);
            return;
        case DType::UInt16:
            integerToDouble<uint16_t>(src, dst, n);
            return;
        case DType::UInt32:
            integerToDouble<uint32_t>(src, dst, n);
            return;
        case DType::UInt64:
            integerToDouble<uint64_t>(src, dst, n);
            return;
        case DType::Bool:
            mapElements<uint8_t, double>(src, out, n, [](uint8_t v) { return v != 0 ? 1.0 : 0.0; });
            return;
    }
    fill(dst, n, std::numeric_limits<double>::quiet_NaN());  // invalid dtype value
}

void convertToFloat(DType t, const void* srcv, float* dst, size_t n)
{
    const auto* src = static_cast<const Byte*>(srcv);
    auto* out = reinterpret_cast<Byte*>(dst);
    switch (t) {
        case DType::Float64:
            mapElements<double, float>(src, out, n, [](double v) { return float(v); });
            return;
        case DType::Float32:
            std::memcpy(dst, src, n * sizeof(float));
            return;
        case DType::Float16:
            mapElements<uint16_t, float>(src, out, n, [](uint16_t v) { return halfToFloat(v); });
            return;
        case DType::BFloat16:
            mapElements<uint16_t, float>(src, out, n, [](uint16_t v) { return bf16ToFloat(v); });
            return;
        case DType::Float8E4M3FN:
            mapElements<uint8_t, float>(src, out, n, [](uint8_t v) { return fp8e4m3fnToFloat(v); });
            return;
        case DType::Float8E5M2:
            mapElements<uint8_t, float>(src, out, n, [](uint8_t v) { return fp8e5m2ToFloat(v); });
            return;
        case DType::Int8:
            integerToFloat<int8_t>(src, dst, n);
            return;
        case DType::Int16:
            integerToFloat<int16_t>(src, dst, n);
            return;
        case DType::Int32:
            integerToFloat<int32_t>(src, dst, n);
            return;
        case DType::Int64:
            integerToFloat<int64_t>(src, dst, n);
            return;
        case DType::UInt8:
            integerToFloat<uint8_t>(src, dst, n);
            return;
        case DType::UInt16:
            integerToFloat<uint16_t>(src, dst, n);
            return;
        case DType::UInt32:
            integerToFloat<uint32_t>(src, dst, n);
            return;
        case DType::UInt64:
            integerToFloat<uint64_t>(src, dst, n);
            return;
        case DType::Bool:
            mapElements<uint8_t, float>(src, out, n, [](uint8_t v) { return v != 0 ? 1.0f : 0.0f; });
            return;
    }
    fill(dst, n, std::numeric_limits<float>::quiet_NaN());  // invalid dtype value
}

void convertFromFloat(DType t, const float* src, void* dstv, size_t n)
{
    const auto* in = reinterpret_cast<const Byte*>(src);
    auto* dst = static_cast<Byte*>(dstv);
    switch (t) {
        case DType::Float64:
            mapElements<float, double>(in, dst, n, [](float v) { return double(v); });
            return;
        case DType::Float32:
            std::memcpy(dst, src, n * sizeof(float));
            return;
        case DType::Float16:
            mapElements<float, uint16_t>(in, dst, n, [](float v) { return floatToHalf(v); });
            return;
        case DType::BFloat16:
            mapElements<float, uint16_t>(in, dst, n, [](float v) { return floatToBf16(v); });
            return;
        case DType::Float8E4M3FN:
            mapElements<float, uint8_t>(in, dst, n, [](float v) { return floatToFp8e4m3fn(v); });
            return;
        case DType::Float8E5M2:
            mapElements<float, uint8_t>(in, dst, n, [](float v) { return floatToFp8e5m2(v); });
            return;
        case DType::Int8:
            toInteger<int8_t>(src, dst, n);
            return;
        case DType::Int16:
            toInteger<int16_t>(src, dst, n);
            return;
        case DType::Int32:
            toInteger<int32_t>(src, dst, n);
            return;
        case DType::Int64:
            toInteger<int64_t>(src, dst, n);
            return;
        case DType::UInt8:
            toInteger<uint8_t>(src, dst, n);
            return;
        case DType::UInt16:
            toInteger<uint16_t>(src, dst, n);
            return;
        case DType::UInt32:
            toInteger<uint32_t>(src, dst, n);
            return;
        case DType::UInt64:
            toInteger<uint64_t>(src, dst, n);
            return;
        case DType::Bool:
            mapElements<float, uint8_t>(in, dst, n, [](float v) { return uint8_t(v != 0.0f); });
            return;
    }
    // Invalid dtype value: the element size is unknown, so nothing is written.
}

void convertFromDouble(DType t, const double* src, void* dstv, size_t n)
{
    const auto* in = reinterpret_cast<const Byte*>(src);
    auto* dst = static_cast<Byte*>(dstv);
    switch (t) {
        case DType::Float64:
            std::memcpy(dst, src, n * sizeof(double));
            return;
        case DType::Float32:
            mapElements<double, float>(in, dst, n, [](double v) { return float(v); });
            return;
        case DType::Float16:
            mapElements<double, uint16_t>(in, dst, n, [](double v) { return doubleToHalf(v); });
            return;
        case DType::BFloat16:
            mapElements<double, uint16_t>(in, dst, n, [](double v) { return doubleToBf16(v); });
            return;
        case DType::Float8E4M3FN:
            mapElements<double, uint8_t>(in, dst, n, [](double v) { return doubleToFp8e4m3fn(v); });
            return;
        case DType::Float8E5M2:
            mapElements<double, uint8_t>(in, dst, n, [](double v) { return doubleToFp8e5m2(v); });
            return;
        case DType::Int8:
            toInteger<int8_t>(src, dst, n);
            return;
        case DType::Int16:
            toInteger<int16_t>(src, dst, n);
            return;
        case DType::Int32:
            toInteger<int32_t>(src, dst, n);
            return;
        case DType::Int64:
            toInteger<int64_t>(src, dst, n);
            return;
        case DType::UInt8:
            toInteger<uint8_t>(src, dst, n);
            return;
        case DType::UInt16:
            toInteger<uint16_t>(src, dst, n);
            return;
        case DType::UInt32:
            toInteger<uint32_t>(src, dst, n);
            return;
        case DType::UInt64:
            toInteger<uint64_t>(src, dst, n);
            return;
        case DType::Bool:
            mapElements<double, uint8_t>(in, dst, n, [](double v) { return uint8_t(v != 0.0); });
            return;
    }
    // Invalid dtype value: the element size is unknown, so nothing is written.
}

uint64_t loadBits(DType t, const void* srcv, size_t i)
{
    const auto* src = static_cast<const Byte*>(srcv);
    switch (dtypeSize(t)) {
        case 1:
            return loadAt<uint8_t>(src, i);
        case 2:
            return loadAt<uint16_t>(src, i);
        case 4:
            return loadAt<uint32_t>(src, i);
        case 8:
            return loadAt<uint64_t>(src, i);
        default:
            return 0;
    }
}

}  // namespace faultline
