#pragma once
// Shared by test_convert (scalar float formats) and test_convert_bulk (core/Convert.h): the
// format codecs under test, a decoder written from the formats' definitions, a rounding oracle.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/Convert.h"
#include "core/FloatFormats.h"

using faultline::DType;

Q_DECLARE_METATYPE(faultline::DType)

// Like QVERIFY2, but builds the message only on failure (the loops below run a million times).
#define CHECK_OR_FAIL(condition, message)                      \
    do {                                                       \
        if (!(condition)) QFAIL(qPrintable(QString(message))); \
    } while (0)

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One narrow format: its layout, the scalar functions under test and the values the header
// promises for NaN.
struct Codec {
    const char* name;
    DType dtype;
    int expBits;
    int manBits;
    bool fn;  // E4M3FN: no inf, only S.1111.111 is NaN
    uint32_t canonicalNaN;
    float (*decode)(uint32_t);
    uint32_t (*fromFloat)(float);
    uint32_t (*fromDouble)(double);

    int totalBits() const { return 1 + expBits + manBits; }
    uint32_t patternCount() const { return 1u << totalBits(); }
    uint32_t signBit() const { return 1u << (expBits + manBits); }
    // Largest positive finite pattern; the next pattern is the overflow result (inf or NaN).
    uint32_t maxFinite() const { return fn ? signBit() - 2 : (((1u << expBits) - 1) << manBits) - 1; }
};

const Codec kCodecs[] = {
    {"bfloat16", DType::BFloat16, 8, 7, false, 0x7FC0,
     [](uint32_t b) { return faultline::bf16ToFloat(uint16_t(b)); },
     [](float f) -> uint32_t { return faultline::floatToBf16(f); },
     [](double d) -> uint32_t { return faultline::doubleToBf16(d); }},
    {"float16", DType::Float16, 5, 10, false, 0x7E00,
     [](uint32_t b) { return faultline::halfToFloat(uint16_t(b)); },
     [](float f) -> uint32_t { return faultline::floatToHalf(f); },
     [](double d) -> uint32_t { return faultline::doubleToHalf(d); }},
    {"float8_e4m3fn", DType::Float8E4M3FN, 4, 3, true, 0x7F,
     [](uint32_t b) { return faultline::fp8e4m3fnToFloat(uint8_t(b)); },
     [](float f) -> uint32_t { return faultline::floatToFp8e4m3fn(f); },
     [](double d) -> uint32_t { return faultline::doubleToFp8e4m3fn(d); }},
    {"float8_e5m2", DType::Float8E5M2, 5, 2, false, 0x7E,
     [](uint32_t b) { return faultline::fp8e5m2ToFloat(uint8_t(b)); },
     [](float f) -> uint32_t { return faultline::floatToFp8e5m2(f); },
     [](double d) -> uint32_t { return faultline::doubleToFp8e5m2(d); }},
};

const Codec& codecNamed(const QString& name)
{
    for (const Codec& c : kCodecs)
        if (name == QLatin1String(c.name)) return c;
    qFatal("unknown codec");
}

// The reference decoder, straight from the definition of a binary floating-point format.
double referenceDecode(const Codec& c, uint32_t bits)
{
    const int bias = (1 << (c.expBits - 1)) - 1;
    const bool negative = (bits & c.signBit()) != 0;
    const uint32_t exp = (bits >> c.manBits) & ((1u << c.expBits) - 1);
    const uint32_t man = bits & ((1u << c.manBits) - 1);
    const uint32_t expMax = (1u << c.expBits) - 1;
    double magnitude;
    if (!c.fn && exp == expMax)
        magnitude = man == 0 ? kInf : kNaN;
    else if (c.fn && exp == expMax && man == (1u << c.manBits) - 1)
        magnitude = kNaN;
    else if (exp == 0)
        magnitude = std::ldexp(double(man), 1 - bias - c.manBits);
    else
        magnitude = std::ldexp(double(man + (1u << c.manBits)), int(exp) - bias - c.manBits);
    return negative ? -magnitude : magnitude;
}

// Round-to-nearest-even by search: values[k] is the value of positive pattern k for
// k <= maxFinite, and values[maxFinite + 1] is one ulp past the largest finite value (where the
// format would go on if its exponent range did not end), so reaching it means overflow.
struct Oracle {
    const Codec* codec;
    std::vector<double> values;

    explicit Oracle(const Codec& c) : codec(&c)
    {
        for (uint32_t k = 0; k <= c.maxFinite(); ++k) values.push_back(referenceDecode(c, k));
        const double top = values.back();
        values.push_back(top + (top - values[values.size() - 2]));
    }

    uint32_t encode(double x) const
    {
        const uint32_t sign = std::signbit(x) ? codec->signBit() : 0;
        if (std::isnan(x)) return sign | codec->canonicalNaN;
        const double a = std::fabs(x);
        const uint32_t overflow = codec->maxFinite() + 1;  // inf, or NaN for E4M3FN
        if (a >= values.back()) return sign | overflow;
        // First value > a; its predecessor is the largest value <= a.
        const auto it = std::upper_bound(values.begin(), values.end(), a);
        const uint32_t hi = uint32_t(it - values.begin());
        const uint32_t lo = hi - 1;
        if (values[lo] == a) return sign | lo;
        const double mid = (values[lo] + values[hi]) / 2;  // exact: few significant bits
        uint32_t k;
        if (a < mid)
            k = lo;
        else if (a > mid)
            k = hi;
        else
            k = (lo % 2 == 0) ? lo : hi;
        return sign | k;
    }
};

QString hex(uint64_t v)
{
    return QStringLiteral("0x%1").arg(v, 0, 16);
}

QString describe(double x)
{
    return QString::number(x, 'g', 17) + " (" + hex(faultline::doubleBits(x)) + ")";
}

bool sameValueOrBothNaN(double a, double b)
{
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return faultline::doubleBits(a) == faultline::doubleBits(b);  // tells -0 from +0
}

// A random double whose exponent is spread over the codec's range plus a margin on both sides
// (so underflow and overflow are hit), with a random mantissa and sign.
double randomDoubleNear(const Codec& c, std::mt19937_64& rng)
{
    const int bias = (1 << (c.expBits - 1)) - 1;
    std::uniform_int_distribution<int> expDist(1 - bias - c.manBits - 4, bias + 3);
    const uint64_t mantissa = rng() & ((uint64_t(1) << 52) - 1);
    const double unit = faultline::doubleFromBits((uint64_t(1023) << 52) | mantissa);  // [1, 2)
    const double x = std::ldexp(unit, expDist(rng));
    return (rng() & 1) ? -x : x;
}

// Bytes of a value in memory, for building bulk-conversion inputs.
template <class T>
void append(std::vector<unsigned char>& buf, T v)
{
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    buf.insert(buf.end(), b, b + sizeof(T));
}

}  // namespace

// One data row per codec (column "codec").
inline void addCodecRows()
{
    QTest::addColumn<QString>("codec");
    for (const Codec& c : kCodecs) QTest::newRow(c.name) << QString::fromLatin1(c.name);
}
