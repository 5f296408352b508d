// Exact float-format conversions (core/FloatFormats.h) and the bulk converters (core/Convert.h).
//
// Every bit pattern of bf16, fp16, e4m3fn and e5m2 is decoded and compared with a decoder written
// here from the formats' definitions (sign, exponent, mantissa, std::ldexp). Encoding is checked
// against an oracle that rounds by searching the sorted table of representable values, against
// the compiler's _Float16 for fp16, and against hand-written values for the boundary cases.
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
#define CHECK_OR_FAIL(condition, message)                   \
    do {                                                    \
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
    uint32_t maxFinite() const
    {
        return fn ? signBit() - 2 : (((1u << expBits) - 1) << manBits) - 1;
    }
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

class TestConvert : public QObject {
    Q_OBJECT

private slots:
    void bitCasts();

    void codecs_data();
    void decodeEveryPattern_data() { codecs_data(); }
    void decodeEveryPattern();
    void roundTripEveryPattern_data() { codecs_data(); }
    void roundTripEveryPattern();
    void midpointsRoundToEven_data() { codecs_data(); }
    void midpointsRoundToEven();
    void randomValuesMatchOracle_data() { codecs_data(); }
    void randomValuesMatchOracle();
    void nanInputs_data() { codecs_data(); }
    void nanInputs();

    void halfMatchesCompilerFloat16();

    void knownEncodings_data();
    void knownEncodings();
    void knownDecodings_data();
    void knownDecodings();
    void doubleRoundingAvoided_data();
    void doubleRoundingAvoided();
    void widenedNaNKeepsPayload();

    void bulkFloatFormatsMatchScalar_data() { codecs_data(); }
    void bulkFloatFormatsMatchScalar();
    void bulkWideFloats();
    void bulkIntegersToFloating();
    void bulkToInteger_data();
    void bulkToInteger();
    void bulkUnalignedSource();
    void bulkInvalidDType();
    void loadBitsZeroExtends();
};

void TestConvert::bitCasts()
{
    QCOMPARE(faultline::floatBits(1.0f), 0x3F800000u);
    QCOMPARE(faultline::floatBits(-0.0f), 0x80000000u);
    QCOMPARE(faultline::floatFromBits(0xC0000000u), -2.0f);
    QCOMPARE(faultline::floatFromBits(0x00000001u), std::numeric_limits<float>::denorm_min());
    QCOMPARE(faultline::doubleBits(1.0), uint64_t(0x3FF0000000000000));
    QCOMPARE(faultline::doubleBits(-0.0), uint64_t(0x8000000000000000));
    QCOMPARE(faultline::doubleFromBits(0x4008000000000000), 3.0);
    QVERIFY(std::isnan(faultline::doubleFromBits(0x7FF0000000000001)));
}

void TestConvert::codecs_data()
{
    QTest::addColumn<QString>("codec");
    for (const Codec& c : kCodecs) QTest::newRow(c.name) << QString::fromLatin1(c.name);
}

void TestConvert::decodeEveryPattern()
{
    QFETCH(QString, codec);
    const Codec& c = codecNamed(codec);
    int nanCount = 0;
    for (uint32_t b = 0; b < c.patternCount(); ++b) {
        const double expected = referenceDecode(c, b);
        const float got = c.decode(b);
        if (std::isnan(expected)) {
            ++nanCount;
            CHECK_OR_FAIL(std::isnan(got), codec + " pattern " + hex(b) + " should be NaN");
            QCOMPARE(std::signbit(got), (b & c.signBit()) != 0);
            continue;
        }
        CHECK_OR_FAIL(double(float(expected)) == expected, "reference value not exact in float");
        CHECK_OR_FAIL(faultline::floatBits(got) == faultline::floatBits(float(expected)),
                 qPrintable(codec + " pattern " + hex(b) + ": got " + describe(got) +
                            ", expected " + describe(expected)));
    }
    // NaN patterns per format: 2 * (2^m - 1) for IEEE-like formats, 2 for E4M3FN.
    QCOMPARE(nanCount, c.fn ? 2 : 2 * ((1 << c.manBits) - 1));
}

void TestConvert::roundTripEveryPattern()
{
    QFETCH(QString, codec);
    const Codec& c = codecNamed(codec);
    for (uint32_t b = 0; b < c.patternCount(); ++b) {
        const float f = c.decode(b);
        const uint32_t expected = std::isnan(f) ? (b & c.signBit()) | c.canonicalNaN : b;
        const uint32_t viaFloat = c.fromFloat(f);
        const uint32_t viaDouble = c.fromDouble(double(f));
        CHECK_OR_FAIL(viaFloat == expected, qPrintable(codec + " float round trip of " + hex(b) +
                                                  " gave " + hex(viaFloat)));
        CHECK_OR_FAIL(viaDouble == expected, qPrintable(codec + " double round trip of " + hex(b) +
                                                   " gave " + hex(viaDouble)));
    }
}

void TestConvert::midpointsRoundToEven()
{
    QFETCH(QString, codec);
    const Codec& c = codecNamed(codec);
    const Oracle oracle(c);
    // Every pair of adjacent positive patterns k, k+1 up to the overflow pattern, mirrored for
    // negative values: the midpoint goes to the even pattern, anything off it to the nearer one.
    for (uint32_t k = 0; k <= c.maxFinite(); ++k) {
        const double lo = oracle.values[k];
        const double hi = oracle.values[k + 1];
        const double mid = (lo + hi) / 2;
        QVERIFY(mid > lo && mid < hi);
        const uint32_t even = (k % 2 == 0) ? k : k + 1;
        struct Probe {
            double x;
            uint32_t expected;
        };
        const Probe probes[] = {
            {mid, even},
            {std::nextafter(mid, kInf), k + 1},
            {std::nextafter(mid, 0.0), k},
        };
        for (const Probe& p : probes) {
            for (int s = 0; s < 2; ++s) {
                const double x = s ? -p.x : p.x;
                const uint32_t expected = p.expected | (s ? c.signBit() : 0);
                const uint32_t gotDouble = c.fromDouble(x);
                CHECK_OR_FAIL(gotDouble == expected,
                         qPrintable(codec + " fromDouble(" + describe(x) + ") = " + hex(gotDouble) +
                                    ", expected " + hex(expected)));
            }
        }
        // The float path, with the float neighbours of the midpoint (the midpoint itself is
        // exact in float for every one of these formats).
        const float midF = float(mid);
        QVERIFY(double(midF) == mid);
        const Probe floatProbes[] = {
            {double(midF), even},
            {double(std::nextafter(midF, std::numeric_limits<float>::infinity())), k + 1},
            {double(std::nextafter(midF, 0.0f)), k},
        };
        for (const Probe& p : floatProbes) {
            for (int s = 0; s < 2; ++s) {
                const float x = float(s ? -p.x : p.x);
                const uint32_t expected = p.expected | (s ? c.signBit() : 0);
                const uint32_t gotFloat = c.fromFloat(x);
                CHECK_OR_FAIL(gotFloat == expected,
                         qPrintable(codec + " fromFloat(" + describe(x) + ") = " + hex(gotFloat) +
                                    ", expected " + hex(expected)));
            }
        }
    }
}

void TestConvert::randomValuesMatchOracle()
{
    QFETCH(QString, codec);
    const Codec& c = codecNamed(codec);
    const Oracle oracle(c);
    std::mt19937_64 rng(20240611);
    for (int i = 0; i < 200000; ++i) {
        double x = randomDoubleNear(c, rng);
        if (i % 4 == 1) {
            // Land very close to a midpoint: a representable value plus about half an ulp,
            // nudged by a few double ulps either way.
            const uint32_t k = uint32_t(rng() % c.maxFinite());
            double mid = (oracle.values[k] + oracle.values[k + 1]) / 2;
            for (int steps = int(rng() % 7) - 3; steps != 0; steps += steps > 0 ? -1 : 1)
                mid = std::nextafter(mid, steps > 0 ? kInf : 0.0);
            x = (rng() & 1) ? -mid : mid;
        }
        const uint32_t expectedDouble = oracle.encode(x);
        const uint32_t gotDouble = c.fromDouble(x);
        CHECK_OR_FAIL(gotDouble == expectedDouble,
                 qPrintable(codec + " fromDouble(" + describe(x) + ") = " + hex(gotDouble) +
                            ", expected " + hex(expectedDouble)));
        const float xf = float(x);
        const uint32_t expectedFloat = oracle.encode(double(xf));
        const uint32_t gotFloat = c.fromFloat(xf);
        CHECK_OR_FAIL(gotFloat == expectedFloat,
                 qPrintable(codec + " fromFloat(" + describe(xf) + ") = " + hex(gotFloat) +
                            ", expected " + hex(expectedFloat)));
    }
    // Far outside the range, and the extremes of float and double.
    const double extremes[] = {1e300,
                               std::numeric_limits<double>::max(),
                               std::numeric_limits<double>::denorm_min(),
                               std::numeric_limits<double>::min(),
                               double(std::numeric_limits<float>::max()),
                               double(std::numeric_limits<float>::denorm_min()),
                               double(std::numeric_limits<float>::min()),
                               1e-300,
                               kInf,
                               0.0};
    for (double e : extremes) {
        for (double x : {e, -e}) {
            QCOMPARE(hex(c.fromDouble(x)), hex(oracle.encode(x)));
            QCOMPARE(hex(c.fromFloat(float(x))), hex(oracle.encode(double(float(x)))));
        }
    }
}

void TestConvert::nanInputs()
{
    QFETCH(QString, codec);
    const Codec& c = codecNamed(codec);
    const uint32_t floatNaNs[] = {0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0x7FC12345, 0x7FA00000};
    for (uint32_t bits : floatNaNs) {
        QCOMPARE(hex(c.fromFloat(faultline::floatFromBits(bits))), hex(c.canonicalNaN));
        QCOMPARE(hex(c.fromFloat(faultline::floatFromBits(bits | 0x80000000u))),
                 hex(c.canonicalNaN | c.signBit()));
    }
    const uint64_t doubleNaNs[] = {0x7FF8000000000000, 0x7FF0000000000001, 0x7FFFFFFFFFFFFFFF,
                                   0x7FF0000000010000, 0x7FF4000000000000};
    for (uint64_t bits : doubleNaNs) {
        QCOMPARE(hex(c.fromDouble(faultline::doubleFromBits(bits))), hex(c.canonicalNaN));
        QCOMPARE(hex(c.fromDouble(faultline::doubleFromBits(bits | 0x8000000000000000))),
                 hex(c.canonicalNaN | c.signBit()));
    }
    QVERIFY(std::isnan(c.decode(c.canonicalNaN)));
}

void TestConvert::halfMatchesCompilerFloat16()
{
#if defined(__FLT16_MAX__)
    for (uint32_t b = 0; b < 65536; ++b) {
        const uint16_t h = uint16_t(b);
        _Float16 native;
        std::memcpy(&native, &h, sizeof h);
        const float expected = float(native);
        const float got = faultline::halfToFloat(h);
        if (std::isnan(expected)) {
            QVERIFY(std::isnan(got));
            continue;
        }
        CHECK_OR_FAIL(faultline::floatBits(got) == faultline::floatBits(expected),
                 qPrintable("pattern " + hex(b)));
    }
    auto nativeBits = [](_Float16 v) {
        uint16_t out;
        std::memcpy(&out, &v, sizeof out);
        return uint32_t(out);
    };
    std::mt19937_64 rng(7);
    const Codec& c = codecNamed(QStringLiteral("float16"));
    for (int i = 0; i < 300000; ++i) {
        // Random float bit patterns over the whole float range, and values near fp16's range.
        const float f = (i % 2) ? faultline::floatFromBits(uint32_t(rng()))
                                : float(randomDoubleNear(c, rng));
        if (std::isnan(f)) continue;
        CHECK_OR_FAIL(faultline::floatToHalf(f) == nativeBits(_Float16(f)),
                 qPrintable("floatToHalf(" + describe(f) + ")"));
        const double d = randomDoubleNear(c, rng);
        CHECK_OR_FAIL(faultline::doubleToHalf(d) == nativeBits(_Float16(d)),
                 qPrintable("doubleToHalf(" + describe(d) + ")"));
    }
#else
    QSKIP("this compiler has no _Float16");
#endif
}

void TestConvert::knownEncodings_data()
{
    QTest::addColumn<QString>("codec");
    QTest::addColumn<double>("value");
    QTest::addColumn<uint>("expected");
    auto row = [](const char* codec, const char* label, double v, uint expected) {
        QTest::addRow("%s %s", codec, label) << QString::fromLatin1(codec) << v << expected;
    };
    // bfloat16: 1.8.7, bias 127.
    row("bfloat16", "1", 1.0, 0x3F80);
    row("bfloat16", "-2", -2.0, 0xC000);
    row("bfloat16", "pi", 3.14159265358979, 0x4049);
    row("bfloat16", "max finite", 0x1.FEp127, 0x7F7F);
    row("bfloat16", "overflow midpoint", 0x1.FFp127, 0x7F80);
    row("bfloat16", "below overflow midpoint", 0x1.FEFFFFFFFFFFFp127, 0x7F7F);
    row("bfloat16", "min subnormal", 0x1p-133, 0x0001);
    row("bfloat16", "half min subnormal", 0x1p-134, 0x0000);
    row("bfloat16", "above half min subnormal", 0x1.0000000000001p-134, 0x0001);
    row("bfloat16", "-tiny", -1e-300, 0x8000);
    row("bfloat16", "inf", kInf, 0x7F80);
    row("bfloat16", "-inf", -kInf, 0xFF80);
    // float16: 1.5.10, bias 15.
    row("float16", "1", 1.0, 0x3C00);
    row("float16", "-2", -2.0, 0xC000);
    row("float16", "max finite", 65504.0, 0x7BFF);
    row("float16", "overflow midpoint", 65520.0, 0x7C00);
    row("float16", "below overflow midpoint", 65519.99, 0x7BFF);
    row("float16", "1e5", 1e5, 0x7C00);
    row("float16", "min normal", 0x1p-14, 0x0400);
    row("float16", "max subnormal", 0x1.FF8p-15, 0x03FF);
    row("float16", "min subnormal", 0x1p-24, 0x0001);
    row("float16", "half min subnormal", 0x1p-25, 0x0000);
    row("float16", "1.5 min subnormal", 0x1.8p-24, 0x0002);
    row("float16", "-half min subnormal", -0x1p-25, 0x8000);
    row("float16", "1 + 1/1024 + 1/2048 (tie up to even)", 1.0 + 0x1p-10 + 0x1p-11, 0x3C02);
    row("float16", "-inf", -kInf, 0xFC00);
    // float8_e4m3fn: 1.4.3, bias 7, max 448, no inf.
    row("float8_e4m3fn", "1", 1.0, 0x38);
    row("float8_e4m3fn", "256", 256.0, 0x78);
    row("float8_e4m3fn", "240", 240.0, 0x77);
    row("float8_e4m3fn", "448", 448.0, 0x7E);
    row("float8_e4m3fn", "464 ties down to 448", 464.0, 0x7E);
    row("float8_e4m3fn", "464.0001 is NaN", 464.0001, 0x7F);
    row("float8_e4m3fn", "480 is NaN", 480.0, 0x7F);
    row("float8_e4m3fn", "-500 is -NaN", -500.0, 0xFF);
    row("float8_e4m3fn", "1e300 is NaN", 1e300, 0x7F);
    row("float8_e4m3fn", "inf is NaN", kInf, 0x7F);
    row("float8_e4m3fn", "-inf is -NaN", -kInf, 0xFF);
    row("float8_e4m3fn", "min subnormal", 0x1p-9, 0x01);
    row("float8_e4m3fn", "half min subnormal", 0x1p-10, 0x00);
    row("float8_e4m3fn", "max subnormal", 0x1.Cp-7, 0x07);
    row("float8_e4m3fn", "min normal", 0x1p-6, 0x08);
    row("float8_e4m3fn", "-0", -0.0, 0x80);
    // float8_e5m2: 1.5.2, bias 15, max 57344.
    row("float8_e5m2", "1", 1.0, 0x3C);
    row("float8_e5m2", "max finite", 57344.0, 0x7B);
    row("float8_e5m2", "overflow midpoint", 61440.0, 0x7C);
    row("float8_e5m2", "below overflow midpoint", 61439.0, 0x7B);
    row("float8_e5m2", "inf", kInf, 0x7C);
    row("float8_e5m2", "-inf", -kInf, 0xFC);
    row("float8_e5m2", "min subnormal", 0x1p-16, 0x01);
    row("float8_e5m2", "min normal", 0x1p-14, 0x04);
    row("float8_e5m2", "1.125 ties down", 1.125, 0x3C);
    row("float8_e5m2", "1.375 ties up", 1.375, 0x3E);
}

void TestConvert::knownEncodings()
{
    QFETCH(QString, codec);
    QFETCH(double, value);
    QFETCH(uint, expected);
    const Codec& c = codecNamed(codec);
    QCOMPARE(hex(c.fromDouble(value)), hex(expected));
    if (std::isinf(value) || double(float(value)) == value)
        QCOMPARE(hex(c.fromFloat(float(value))), hex(expected));
}

void TestConvert::knownDecodings_data()
{
    QTest::addColumn<QString>("codec");
    QTest::addColumn<uint>("bits");
    QTest::addColumn<double>("expected");
    struct Row {
        const char* codec;
        uint bits;
        double expected;
    };
    const Row rows[] = {
        {"bfloat16", 0x3F80, 1.0}, {"bfloat16", 0xC049, -3.140625}, {"bfloat16", 0x0001, 0x1p-133},
        {"bfloat16", 0x007F, 0x1.FCp-127}, {"bfloat16", 0x7F7F, 0x1.FEp127},
        {"bfloat16", 0xFF80, -kInf}, {"bfloat16", 0x8000, -0.0},
        {"float16", 0x3C00, 1.0}, {"float16", 0x7BFF, 65504.0}, {"float16", 0x0001, 0x1p-24},
        {"float16", 0x03FF, 0x1.FF8p-15}, {"float16", 0x0400, 0x1p-14}, {"float16", 0xC400, -4.0},
        {"float16", 0x7C00, kInf},
        {"float8_e4m3fn", 0x7E, 448.0}, {"float8_e4m3fn", 0xFE, -448.0},
        {"float8_e4m3fn", 0x78, 256.0}, {"float8_e4m3fn", 0x7F, kNaN},
        {"float8_e4m3fn", 0xFF, kNaN}, {"float8_e4m3fn", 0x01, 0x1p-9},
        {"float8_e4m3fn", 0x08, 0x1p-6}, {"float8_e4m3fn", 0x80, -0.0},
        {"float8_e5m2", 0x7B, 57344.0}, {"float8_e5m2", 0x7C, kInf}, {"float8_e5m2", 0xFC, -kInf},
        {"float8_e5m2", 0x7D, kNaN}, {"float8_e5m2", 0x01, 0x1p-16}, {"float8_e5m2", 0x3E, 1.5},
    };
    for (const Row& r : rows)
        QTest::addRow("%s 0x%x", r.codec, r.bits)
            << QString::fromLatin1(r.codec) << r.bits << r.expected;
}

void TestConvert::knownDecodings()
{
    QFETCH(QString, codec);
    QFETCH(uint, bits);
    QFETCH(double, expected);
    const double got = codecNamed(codec).decode(bits);
    CHECK_OR_FAIL(sameValueOrBothNaN(got, expected), qPrintable(describe(got)));
}

void TestConvert::doubleRoundingAvoided_data()
{
    QTest::addColumn<QString>("codec");
    QTest::addColumn<double>("value");
    QTest::addColumn<uint>("direct");    // correctly rounded once from the double
    QTest::addColumn<uint>("viaFloat");  // what rounding to float first would give
    auto row = [](const char* codec, const char* label, double v, uint direct, uint viaFloat) {
        QTest::addRow("%s %s", codec, label)
            << QString::fromLatin1(codec) << v << direct << viaFloat;
    };
    // Each value lies just off a midpoint of the narrow format, closer to it than half a float
    // ulp: rounding to float lands exactly on the midpoint, which then ties to even the wrong way.
    row("bfloat16", "above midpoint", 1.0 + 0x1p-8 + 0x1p-30, 0x3F81, 0x3F80);
    row("bfloat16", "below midpoint", 1.0 + 0x1p-7 + 0x1p-8 - 0x1p-30, 0x3F81, 0x3F82);
    row("bfloat16", "negative", -(1.0 + 0x1p-8 + 0x1p-30), 0xBF81, 0xBF80);
    row("bfloat16", "subnormal", 0x1p-134 + 0x1p-160, 0x0001, 0x0000);
    row("bfloat16", "overflow", 0x1.FFp127 - 0x1p90, 0x7F7F, 0x7F80);
    row("float16", "above midpoint", 1.0 + 0x1p-11 + 0x1p-40, 0x3C01, 0x3C00);
    row("float16", "below midpoint", 1.0 + 0x1p-10 + 0x1p-11 - 0x1p-40, 0x3C01, 0x3C02);
    row("float16", "subnormal", 0x1p-25 + 0x1p-60, 0x0001, 0x0000);
    row("float16", "overflow", 65520.0 - 0x1p-20, 0x7BFF, 0x7C00);
    row("float8_e4m3fn", "above midpoint", 1.0 + 0x1p-4 + 0x1p-30, 0x39, 0x38);
    row("float8_e4m3fn", "just over 464 is NaN", 464.0 + 0x1p-30, 0x7F, 0x7E);
    row("float8_e5m2", "above midpoint", 1.0 + 0x1p-3 + 0x1p-30, 0x3D, 0x3C);
    row("float8_e5m2", "overflow", 61440.0 - 0x1p-20, 0x7B, 0x7C);
}

void TestConvert::doubleRoundingAvoided()
{
    QFETCH(QString, codec);
    QFETCH(double, value);
    QFETCH(uint, direct);
    QFETCH(uint, viaFloat);
    const Codec& c = codecNamed(codec);
    QVERIFY(double(float(value)) != value);  // the case really needs two roundings to go wrong
    QCOMPARE(hex(c.fromFloat(float(value))), hex(viaFloat));
    QCOMPARE(hex(c.fromDouble(value)), hex(direct));
}

void TestConvert::widenedNaNKeepsPayload()
{
    // Sign and mantissa bits go to the top of the float mantissa; signalling NaNs stay so.
    QCOMPARE(hex(faultline::floatBits(faultline::bf16ToFloat(0xFF81))), hex(0xFF810000u));
    QCOMPARE(hex(faultline::floatBits(faultline::bf16ToFloat(0x7FC5))), hex(0x7FC50000u));
    QCOMPARE(hex(faultline::floatBits(faultline::halfToFloat(0x7C01))), hex(0x7F802000u));
    QCOMPARE(hex(faultline::floatBits(faultline::halfToFloat(0xFE00))), hex(0xFFC00000u));
    QCOMPARE(hex(faultline::floatBits(faultline::fp8e5m2ToFloat(0x7D))), hex(0x7FA00000u));
    QCOMPARE(hex(faultline::floatBits(faultline::fp8e5m2ToFloat(0xFF))), hex(0xFFE00000u));
    QCOMPARE(hex(faultline::floatBits(faultline::fp8e4m3fnToFloat(0x7F))), hex(0x7FF00000u));
    QCOMPARE(hex(faultline::floatBits(faultline::fp8e4m3fnToFloat(0xFF))), hex(0xFFF00000u));
}

void TestConvert::bulkFloatFormatsMatchScalar()
{
    QFETCH(QString, codec);
    const Codec& c = codecNamed(codec);
    const size_t width = size_t(c.totalBits() / 8);

    // Every pattern, then a length that leaves a tail after the 16-element blocks.
    for (size_t n : {size_t(c.patternCount()), size_t(37)}) {
        std::vector<unsigned char> src;
        for (size_t i = 0; i < n; ++i) {
            const uint32_t b = uint32_t((i * 40503u + 11u) % c.patternCount());
            if (width == 1)
                append(src, uint8_t(b));
            else
                append(src, uint16_t(b));
        }
        std::vector<double> asDouble(n);
        std::vector<float> asFloat(n);
        faultline::convertToDouble(c.dtype, src.data(), asDouble.data(), n);
        faultline::convertToFloat(c.dtype, src.data(), asFloat.data(), n);
        for (size_t i = 0; i < n; ++i) {
            const uint32_t b = uint32_t(faultline::loadBits(c.dtype, src.data(), i));
            const double expected = referenceDecode(c, b);
            CHECK_OR_FAIL(sameValueOrBothNaN(asDouble[i], expected), qPrintable(hex(b)));
            CHECK_OR_FAIL(sameValueOrBothNaN(asFloat[i], expected), qPrintable(hex(b)));
        }
    }

    // Encoding: random floats/doubles around the format's range, specials, an odd length.
    std::mt19937_64 rng(99);
    std::vector<double> d;
    for (int i = 0; i < 1003; ++i) d.push_back(randomDoubleNear(c, rng));
    for (double s : {0.0, -0.0, kInf, -kInf, kNaN, -kNaN, 1e300, -1e-300}) d.push_back(s);
    std::vector<float> f(d.begin(), d.end());
    const size_t n = d.size();
    std::vector<unsigned char> fromD(n * width), fromF(n * width);
    faultline::convertFromDouble(c.dtype, d.data(), fromD.data(), n);
    faultline::convertFromFloat(c.dtype, f.data(), fromF.data(), n);
    for (size_t i = 0; i < n; ++i) {
        QCOMPARE(hex(faultline::loadBits(c.dtype, fromD.data(), i)), hex(c.fromDouble(d[i])));
        QCOMPARE(hex(faultline::loadBits(c.dtype, fromF.data(), i)), hex(c.fromFloat(f[i])));
    }
}

void TestConvert::bulkWideFloats()
{
    const std::vector<double> d = {1.0,   -0.0, 0x1p-1074, 0x1.0000001p0, 0x1.FFFFFFp127,
                                   1e300, kInf, -kInf,     0.1,           -2.5,
                                   1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-50};
    // Float64 -> float rounds to nearest even; written out by hand.
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> expected = {1.0f, -0.0f, 0.0f, 1.0f, inf, inf, inf, -inf, 0.1f,
                                         -2.5f, 1.0f, 1.0f + 0x1p-23f};
    const size_t n = d.size();
    std::vector<float> f(n);
    faultline::convertToFloat(DType::Float64, d.data(), f.data(), n);
    for (size_t i = 0; i < n; ++i)
        QCOMPARE(hex(faultline::floatBits(f[i])), hex(faultline::floatBits(expected[i])));
    std::vector<float> f2(n);
    faultline::convertFromDouble(DType::Float32, d.data(), f2.data(), n);
    QCOMPARE(std::memcmp(f.data(), f2.data(), n * sizeof(float)), 0);

    std::vector<double> back(n), copy(n);
    faultline::convertToDouble(DType::Float32, f.data(), back.data(), n);
    for (size_t i = 0; i < n; ++i) QVERIFY(sameValueOrBothNaN(back[i], double(f[i])));
    faultline::convertFromFloat(DType::Float64, f.data(), copy.data(), n);
    QCOMPARE(std::memcmp(back.data(), copy.data(), n * sizeof(double)), 0);

    // Identity copies keep NaN payloads bit for bit.
    std::vector<double> nanD = {faultline::doubleFromBits(0x7FF0000000000123)};
    std::vector<double> outD(1);
    faultline::convertToDouble(DType::Float64, nanD.data(), outD.data(), 1);
    QCOMPARE(hex(faultline::doubleBits(outD[0])), hex(0x7FF0000000000123));
    faultline::convertFromDouble(DType::Float64, nanD.data(), outD.data(), 1);
    QCOMPARE(hex(faultline::doubleBits(outD[0])), hex(0x7FF0000000000123));
    std::vector<float> nanF = {faultline::floatFromBits(0xFF800123)}, outF(1);
    faultline::convertToFloat(DType::Float32, nanF.data(), outF.data(), 1);
    QCOMPARE(hex(faultline::floatBits(outF[0])), hex(0xFF800123u));
    faultline::convertFromFloat(DType::Float32, nanF.data(), outF.data(), 1);
    QCOMPARE(hex(faultline::floatBits(outF[0])), hex(0xFF800123u));
}

void TestConvert::bulkIntegersToFloating()
{
    struct Case {
        DType type;
        std::vector<unsigned char> bytes;
        std::vector<double> asDouble;  // expected, written by hand
        std::vector<float> asFloat;
    };
    std::vector<Case> cases;
    auto make = [&](DType t, auto values, std::vector<double> dd, std::vector<float> ff) {
        Case c{t, {}, std::move(dd), std::move(ff)};
        for (auto v : values) append(c.bytes, v);
        cases.push_back(std::move(c));
    };
    make(DType::Int8, std::vector<int8_t>{-128, -1, 0, 127}, {-128, -1, 0, 127},
         {-128, -1, 0, 127});
    make(DType::UInt8, std::vector<uint8_t>{0, 1, 200, 255}, {0, 1, 200, 255}, {0, 1, 200, 255});
    make(DType::Int16, std::vector<int16_t>{-32768, -2, 32767}, {-32768, -2, 32767},
         {-32768, -2, 32767});
    make(DType::UInt16, std::vector<uint16_t>{0, 65535}, {0, 65535}, {0, 65535});
    make(DType::Int32, std::vector<int32_t>{INT32_MIN, 16777217, 16777219, INT32_MAX},
         {-2147483648.0, 16777217.0, 16777219.0, 2147483647.0},
         {-2147483648.0f, 16777216.0f, 16777220.0f, 2147483648.0f});
    make(DType::UInt32, std::vector<uint32_t>{0, 33554435u, UINT32_MAX},
         {0.0, 33554435.0, 4294967295.0}, {0.0f, 33554436.0f, 4294967296.0f});
    make(DType::Int64,
         std::vector<int64_t>{INT64_MIN, (int64_t(1) << 53) + 1, (int64_t(1) << 53) + 3,
                              INT64_MAX, -5},
         {-0x1p63, 0x1p53, 0x1p53 + 4, 0x1p63, -5.0},
         {-0x1p63f, 0x1p53f, 0x1p53f, 0x1p63f, -5.0f});
    make(DType::UInt64, std::vector<uint64_t>{0, UINT64_MAX, (uint64_t(1) << 63) + 1024},
         {0.0, 0x1p64, 0x1p63}, {0.0f, 0x1p64f, 0x1p63f});
    // Bool: any non-zero byte is true.
    make(DType::Bool, std::vector<uint8_t>{0, 1, 2, 255}, {0, 1, 1, 1}, {0, 1, 1, 1});

    for (const Case& c : cases) {
        const size_t n = c.asDouble.size();
        std::vector<double> d(n);
        std::vector<float> f(n);
        faultline::convertToDouble(c.type, c.bytes.data(), d.data(), n);
        faultline::convertToFloat(c.type, c.bytes.data(), f.data(), n);
        for (size_t i = 0; i < n; ++i) {
            const QString where = QString::fromLatin1(faultline::dtypeName(c.type).data()) + " #" +
                                  QString::number(i);
            CHECK_OR_FAIL(d[i] == c.asDouble[i], qPrintable(where + " double " + describe(d[i])));
            CHECK_OR_FAIL(f[i] == c.asFloat[i], qPrintable(where + " float " + describe(f[i])));
        }
    }
}

void TestConvert::bulkToInteger_data()
{
    QTest::addColumn<DType>("type");
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("expected");  // decimal
    struct Row {
        DType type;
        double value;
        const char* expected;
    };
    using enum DType;
    const Row rows[] = {
        {Int8, 127.4, "127"},
        {Int8, 127.5, "127"},  // rounds to 128, saturates
        {Int8, 126.5, "126"}, {Int8, -128.5, "-128"}, {Int8, -129.0, "-128"}, {Int8, 1e10, "127"},
        {Int8, kInf, "127"}, {Int8, -kInf, "-128"}, {Int8, kNaN, "0"}, {Int8, -kNaN, "0"},
        {Int8, -0.0, "0"}, {Int8, 0.5, "0"}, {Int8, 1.5, "2"}, {Int8, 2.5, "2"}, {Int8, 3.5, "4"},
        {Int8, -2.5, "-2"}, {Int8, -3.5, "-4"}, {Int8, -0.5, "0"}, {Int8, 0.49999999999999994, "0"},
        {Int8, 2.5000000000000004, "3"},
        {UInt8, 255.4, "255"}, {UInt8, 255.5, "255"}, {UInt8, 254.5, "254"}, {UInt8, -0.5, "0"},
        {UInt8, -0.7, "0"}, {UInt8, -1.0, "0"}, {UInt8, 300.0, "255"}, {UInt8, -kInf, "0"},
        {UInt8, kNaN, "0"},
        {Int16, 32767.5, "32767"}, {Int16, -32768.5, "-32768"}, {Int16, 40000.0, "32767"},
        {Int16, -1234.5, "-1234"},
        {UInt16, 65535.5, "65535"}, {UInt16, 65534.5, "65534"}, {UInt16, 70000.0, "65535"},
        {Int32, 2147483647.0, "2147483647"}, {Int32, 2147483647.5, "2147483647"},
        {Int32, 2147483646.5, "2147483646"}, {Int32, 2147483648.0, "2147483647"},
        {Int32, -2147483648.0, "-2147483648"}, {Int32, -2147483648.5, "-2147483648"},
        {Int32, -2147483649.0, "-2147483648"}, {Int32, 1e20, "2147483647"},
        {Int32, 8388607.5, "8388608"}, {Int32, 8388606.5, "8388606"},
        {Int32, -8388607.5, "-8388608"}, {Int32, 16777216.0, "16777216"},
        {UInt32, 4294967295.5, "4294967295"}, {UInt32, 4294967294.5, "4294967294"},
        {UInt32, 4294967296.0, "4294967295"}, {UInt32, -1.0, "0"},
        {UInt32, 3000000000.0, "3000000000"},
        {Int64, 9.3e18, "9223372036854775807"}, {Int64, 0x1p63, "9223372036854775807"},
        {Int64, -0x1p63, "-9223372036854775808"}, {Int64, -1e19, "-9223372036854775808"},
        {Int64, 9223372036854774784.0, "9223372036854774784"},  // 2^63 - 1024
        {Int64, 4503599627370495.5, "4503599627370496"},  // 2^52 - 0.5: tie to even
        {Int64, 4503599627370494.5, "4503599627370494"},
        {Int64, -4503599627370495.5, "-4503599627370496"},
        {Int64, 4503599627370497.0, "4503599627370497"}, {Int64, kInf, "9223372036854775807"},
        {Int64, kNaN, "0"},
        {UInt64, 0x1p64, "18446744073709551615"},
        {UInt64, 18446744073709549568.0, "18446744073709549568"},  // 2^64 - 2048
        {UInt64, 18446742974197923840.0, "18446742974197923840"},  // 2^64 - 2^40 (float)
        {UInt64, 0x1p63, "9223372036854775808"}, {UInt64, -0.7, "0"}, {UInt64, -1e30, "0"},
        {UInt64, 1e30, "18446744073709551615"}, {UInt64, 1.5, "2"},
        {Bool, 0.0, "0"}, {Bool, -0.0, "0"}, {Bool, kNaN, "1"}, {Bool, 1e-300, "1"},
        {Bool, -kInf, "1"}, {Bool, 0.5, "1"}, {Bool, -3.0, "1"},
    };
    for (const Row& r : rows)
        QTest::addRow("%s %.17g", faultline::dtypeName(r.type).data(), r.value)
            << r.type << r.value << QString::fromLatin1(r.expected);
}

void TestConvert::bulkToInteger()
{
    QFETCH(DType, type);
    QFETCH(double, value);
    QFETCH(QString, expected);
    const unsigned width = faultline::dtypeSize(type);
    auto asText = [&](const unsigned char* p) {
        const uint64_t bits = faultline::loadBits(type, p, 0);
        if (!faultline::isSignedInteger(type)) return QString::number(qulonglong(bits));
        const unsigned shift = 64 - 8 * width;  // sign-extend the zero-extended pattern
        return QString::number(qlonglong(int64_t(bits << shift) >> shift));
    };
    // Place the value in the middle of a block-sized run so the vector path handles it too.
    const size_t n = 35, at = 17;
    std::vector<double> d(n, 1.0);
    d[at] = value;
    std::vector<unsigned char> out(n * width, 0xAA);
    faultline::convertFromDouble(type, d.data(), out.data(), n);
    QCOMPARE(asText(out.data() + at * width), expected);
    QCOMPARE(asText(out.data()), QStringLiteral("1"));

    const float vf = float(value);
    if (double(vf) == value || std::isnan(value)) {
        std::vector<float> f(n, 1.0f);
        f[at] = vf;
        std::vector<unsigned char> outF(n * width, 0xAA);
        faultline::convertFromFloat(type, f.data(), outF.data(), n);
        QCOMPARE(asText(outF.data() + at * width), expected);
        QCOMPARE(asText(outF.data() + (n - 1) * width), QStringLiteral("1"));
    }
}

void TestConvert::bulkUnalignedSource()
{
    // Tensor data may start at any byte offset inside a read buffer.
    std::vector<unsigned char> buf(1 + 20 * 4);
    buf[0] = 0xEE;
    for (int i = 0; i < 20; ++i) {
        const int32_t v = i * 1000 - 7;
        std::memcpy(buf.data() + 1 + i * 4, &v, 4);
    }
    std::vector<double> d(20);
    faultline::convertToDouble(DType::Int32, buf.data() + 1, d.data(), 20);
    for (int i = 0; i < 20; ++i) QCOMPARE(d[i], double(i * 1000 - 7));
    std::vector<float> f(20);
    faultline::convertToFloat(DType::Int32, buf.data() + 1, f.data(), 20);
    for (int i = 0; i < 20; ++i) QCOMPARE(f[i], float(i * 1000 - 7));
    QCOMPARE(faultline::loadBits(DType::Int32, buf.data() + 1, 1), uint64_t(993));

    std::vector<unsigned char> out(1 + 20 * 2);
    std::vector<float> src(20, 1.0f);
    faultline::convertFromFloat(DType::Float16, src.data(), out.data() + 1, 20);
    for (size_t i = 0; i < 20; ++i)
        QCOMPARE(faultline::loadBits(DType::Float16, out.data() + 1, i), uint64_t(0x3C00));
}

void TestConvert::bulkInvalidDType()
{
    const auto bad = static_cast<DType>(200);
    const unsigned char src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    double d[2] = {1, 1};
    float f[2] = {1, 1};
    faultline::convertToDouble(bad, src, d, 2);
    faultline::convertToFloat(bad, src, f, 2);
    QVERIFY(std::isnan(d[0]) && std::isnan(d[1]));
    QVERIFY(std::isnan(f[0]) && std::isnan(f[1]));
    unsigned char out[8] = {9, 9, 9, 9, 9, 9, 9, 9};
    faultline::convertFromDouble(bad, d, out, 2);
    faultline::convertFromFloat(bad, f, out, 2);
    QCOMPARE(int(out[0]), 9);
    QCOMPARE(faultline::loadBits(bad, src, 0), uint64_t(0));
}

void TestConvert::loadBitsZeroExtends()
{
    unsigned char buf[16];
    for (int i = 0; i < 16; ++i) buf[i] = uint8_t(i + 1);
    buf[2] = 0xFF;
    QCOMPARE(hex(faultline::loadBits(DType::Int8, buf, 2)), hex(0xFF));  // not sign-extended
    QCOMPARE(hex(faultline::loadBits(DType::UInt8, buf, 3)), hex(0x04));
    QCOMPARE(hex(faultline::loadBits(DType::Bool, buf, 0)), hex(0x01));
    QCOMPARE(hex(faultline::loadBits(DType::Float8E4M3FN, buf, 15)), hex(0x10));
    QCOMPARE(hex(faultline::loadBits(DType::Float8E5M2, buf, 2)), hex(0xFF));
    QCOMPARE(hex(faultline::loadBits(DType::Int16, buf, 1)), hex(0x04FF));
    QCOMPARE(hex(faultline::loadBits(DType::UInt16, buf, 0)), hex(0x0201));
    QCOMPARE(hex(faultline::loadBits(DType::Float16, buf, 7)), hex(0x100F));
    QCOMPARE(hex(faultline::loadBits(DType::BFloat16, buf, 1)), hex(0x04FF));
    QCOMPARE(hex(faultline::loadBits(DType::Int32, buf, 0)), hex(0x04FF0201));
    QCOMPARE(hex(faultline::loadBits(DType::Float32, buf, 3)), hex(0x100F0E0D));
    QCOMPARE(hex(faultline::loadBits(DType::UInt32, buf, 2)), hex(0x0C0B0A09));
    QCOMPARE(hex(faultline::loadBits(DType::Int64, buf, 1)), hex(0x100F0E0D0C0B0A09));
    QCOMPARE(hex(faultline::loadBits(DType::Float64, buf, 0)), hex(0x0807060504FF0201));

    const int16_t minus1 = -1;
    QCOMPARE(hex(faultline::loadBits(DType::Int16, &minus1, 0)), hex(0xFFFF));
    const float one = 1.0f;
    QCOMPARE(hex(faultline::loadBits(DType::Float32, &one, 0)), hex(0x3F800000));
    const double mone = -1.0;
    QCOMPARE(hex(faultline::loadBits(DType::Float64, &mone, 0)), hex(0xBFF0000000000000));
}

QTEST_APPLESS_MAIN(TestConvert)
#include "test_convert.moc"
