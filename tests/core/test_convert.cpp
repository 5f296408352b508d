// Exact float-format conversions (core/FloatFormats.h).
//
// Every bit pattern of bf16, fp16, e4m3fn and e5m2 is decoded and compared with a decoder written
// here from the formats' definitions (sign, exponent, mantissa, std::ldexp). Encoding is checked
// against an oracle that rounds by searching the sorted table of representable values, against
// the compiler's _Float16 for fp16, and against hand-written values for the boundary cases.
// The bulk converters (core/Convert.h) are in test_convert_bulk.cpp.
#include "test_convert_support.h"

class TestConvert : public QObject {
    Q_OBJECT

private slots:
    void bitCasts();

    void codecs_data() { addCodecRows(); }
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
                      qPrintable(codec + " pattern " + hex(b) + ": got " + describe(got) + ", expected " +
                                 describe(expected)));
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
        CHECK_OR_FAIL(viaFloat == expected,
                      qPrintable(codec + " float round trip of " + hex(b) + " gave " + hex(viaFloat)));
        CHECK_OR_FAIL(viaDouble == expected,
                      qPrintable(codec + " double round trip of " + hex(b) + " gave " + hex(viaDouble)));
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
        const float f = (i % 2) ? faultline::floatFromBits(uint32_t(rng())) : float(randomDoubleNear(c, rng));
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
        {"bfloat16", 0x3F80, 1.0},         {"bfloat16", 0xC049, -3.140625},  {"bfloat16", 0x0001, 0x1p-133},
        {"bfloat16", 0x007F, 0x1.FCp-127}, {"bfloat16", 0x7F7F, 0x1.FEp127}, {"bfloat16", 0xFF80, -kInf},
        {"bfloat16", 0x8000, -0.0},        {"float16", 0x3C00, 1.0},         {"float16", 0x7BFF, 65504.0},
        {"float16", 0x0001, 0x1p-24},      {"float16", 0x03FF, 0x1.FF8p-15}, {"float16", 0x0400, 0x1p-14},
        {"float16", 0xC400, -4.0},         {"float16", 0x7C00, kInf},        {"float8_e4m3fn", 0x7E, 448.0},
        {"float8_e4m3fn", 0xFE, -448.0},   {"float8_e4m3fn", 0x78, 256.0},   {"float8_e4m3fn", 0x7F, kNaN},
        {"float8_e4m3fn", 0xFF, kNaN},     {"float8_e4m3fn", 0x01, 0x1p-9},  {"float8_e4m3fn", 0x08, 0x1p-6},
        {"float8_e4m3fn", 0x80, -0.0},     {"float8_e5m2", 0x7B, 57344.0},   {"float8_e5m2", 0x7C, kInf},
        {"float8_e5m2", 0xFC, -kInf},      {"float8_e5m2", 0x7D, kNaN},      {"float8_e5m2", 0x01, 0x1p-16},
        {"float8_e5m2", 0x3E, 1.5},
    };
    for (const Row& r : rows)
        QTest::addRow("%s 0x%x", r.codec, r.bits) << QString::fromLatin1(r.codec) << r.bits << r.expected;
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
        QTest::addRow("%s %s", codec, label) << QString::fromLatin1(codec) << v << direct << viaFloat;
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

QTEST_APPLESS_MAIN(TestConvert)
#include "test_convert.moc"
