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

// One codec per dtype: its storage type and its conversions to and from float and double. The
// conversions into integers round to nearest even and saturate (NaN -> 0).
template <class S>
struct IntegerCodec {
    using Storage = S;
    static double toDouble(S v) { return double(v); }
    static float toFloat(S v) { return float(v); }
    static S fromDouble(double v) { return roundSaturate<S>(v); }
    static S fromFloat(float v) { return roundSaturate<S>(v); }
};

struct Float64Codec {
    using Storage = double;
    static double toDouble(double v) { return v; }
    static float toFloat(double v) { return float(v); }
    static double fromDouble(double v) { return v; }
    static double fromFloat(float v) { return double(v); }
};

struct Float32Codec {
    using Storage = float;
    static double toDouble(float v) { return double(v); }
    static float toFloat(float v) { return v; }
    static float fromDouble(double v) { return float(v); }
    static float fromFloat(float v) { return v; }
};

// A float format narrower than float32, stored as S: to float exactly, from float and double
// rounded once (FloatFormats.h).
template <class S, float (*ToFloat)(S), S (*FromFloat)(float), S (*FromDouble)(double)>
struct NarrowFloatCodec {
    using Storage = S;
    static double toDouble(S v) { return double(ToFloat(v)); }
    static float toFloat(S v) { return ToFloat(v); }
    static S fromDouble(double v) { return FromDouble(v); }
    static S fromFloat(float v) { return FromFloat(v); }
};

struct BoolCodec {
    using Storage = uint8_t;
    static double toDouble(uint8_t v) { return v != 0 ? 1.0 : 0.0; }
    static float toFloat(uint8_t v) { return v != 0 ? 1.0f : 0.0f; }
    static uint8_t fromDouble(double v) { return uint8_t(v != 0.0); }
    static uint8_t fromFloat(float v) { return uint8_t(v != 0.0f); }
};

// Calls f with the codec of `t`; false for a value that is no dtype.
template <class F>
bool withCodec(DType t, F&& f)
{
    switch (t) {
        case DType::Float64:
            f(Float64Codec{});
            return true;
        case DType::Float32:
            f(Float32Codec{});
            return true;
        case DType::Float16:
            f(NarrowFloatCodec<uint16_t, halfToFloat, floatToHalf, doubleToHalf>{});
            return true;
        case DType::BFloat16:
            f(NarrowFloatCodec<uint16_t, bf16ToFloat, floatToBf16, doubleToBf16>{});
            return true;
        case DType::Float8E4M3FN:
            f(NarrowFloatCodec<uint8_t, fp8e4m3fnToFloat, floatToFp8e4m3fn, doubleToFp8e4m3fn>{});
            return true;
        case DType::Float8E5M2:
            f(NarrowFloatCodec<uint8_t, fp8e5m2ToFloat, floatToFp8e5m2, doubleToFp8e5m2>{});
            return true;
        case DType::Int8:
            f(IntegerCodec<int8_t>{});
            return true;
        case DType::Int16:
            f(IntegerCodec<int16_t>{});
            return true;
        case DType::Int32:
            f(IntegerCodec<int32_t>{});
            return true;
        case DType::Int64:
            f(IntegerCodec<int64_t>{});
            return true;
        case DType::UInt8:
            f(IntegerCodec<uint8_t>{});
            return true;
        case DType::UInt16:
            f(IntegerCodec<uint16_t>{});
            return true;
        case DType::UInt32:
            f(IntegerCodec<uint32_t>{});
            return true;
        case DType::UInt64:
            f(IntegerCodec<uint64_t>{});
            return true;
        case DType::Bool:
            f(BoolCodec{});
            return true;
    }
    return false;
}

// n elements of S converted by f into D; a copy when nothing changes.
template <class S, class D, class F>
void convertElements(const void* src, void* dst, size_t n, F f)
{
    if constexpr (std::is_same_v<S, D>)
        std::memcpy(dst, src, n * sizeof(S));
    else
        mapElements<S, D>(static_cast<const Byte*>(src), static_cast<Byte*>(dst), n, f);
}

template <class T>
void fill(T* dst, size_t n, T v)
{
    for (size_t i = 0; i < n; ++i) dst[i] = v;
}

}  // namespace

void convertToDouble(DType t, const void* src, double* dst, size_t n)
{
    const bool known = withCodec(t, [&](auto codec) {
        using C = decltype(codec);
        convertElements<typename C::Storage, double>(src, dst, n, [](auto v) { return C::toDouble(v); });
    });
    if (!known) fill(dst, n, std::numeric_limits<double>::quiet_NaN());
}

void convertToFloat(DType t, const void* src, float* dst, size_t n)
{
    const bool known = withCodec(t, [&](auto codec) {
        using C = decltype(codec);
        convertElements<typename C::Storage, float>(src, dst, n, [](auto v) { return C::toFloat(v); });
    });
    if (!known) fill(dst, n, std::numeric_limits<float>::quiet_NaN());
}

// For the two below, an invalid dtype value writes nothing: the element size is unknown.
void convertFromFloat(DType t, const float* src, void* dst, size_t n)
{
    withCodec(t, [&](auto codec) {
        using C = decltype(codec);
        convertElements<float, typename C::Storage>(src, dst, n, [](float v) { return C::fromFloat(v); });
    });
}

void convertFromDouble(DType t, const double* src, void* dst, size_t n)
{
    withCodec(t, [&](auto codec) {
        using C = decltype(codec);
        convertElements<double, typename C::Storage>(src, dst, n, [](double v) { return C::fromDouble(v); });
    });
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
