// The bulk converters of core/Convert.h: every float format against the scalar conversions of
// core/FloatFormats.h, wide floats, integers both ways (saturation, NaN), unaligned sources,
// invalid dtypes.
#include "test_convert_support.h"

class TestConvertBulk : public QObject {
    Q_OBJECT

private slots:
    void bulkFloatFormatsMatchScalar_data() { addCodecRows(); }
    void bulkFloatFormatsMatchScalar();
    void bulkWideFloats();
    void bulkIntegersToFloating();
    void bulkToInteger_data();
    void bulkToInteger();
    void bulkUnalignedSource();
    void bulkInvalidDType();
    void loadBitsZeroExtends();
};

void TestConvertBulk::bulkFloatFormatsMatchScalar()
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

void TestConvertBulk::bulkWideFloats()
{
    const std::vector<double> d = {1.0,   -0.0, 0x1p-1074, 0x1.0000001p0, 0x1.FFFFFFp127,         1e300, kInf,
                                   -kInf, 0.1,  -2.5,      1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-50};
    // Float64 -> float rounds to nearest even; written out by hand.
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> expected = {1.0f, -0.0f, 0.0f, 1.0f,  inf,  inf,
                                         inf,  -inf,  0.1f, -2.5f, 1.0f, 1.0f + 0x1p-23f};
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

void TestConvertBulk::bulkIntegersToFloating()
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
    make(DType::Int8, std::vector<int8_t>{-128, -1, 0, 127}, {-128, -1, 0, 127}, {-128, -1, 0, 127});
    make(DType::UInt8, std::vector<uint8_t>{0, 1, 200, 255}, {0, 1, 200, 255}, {0, 1, 200, 255});
    make(DType::Int16, std::vector<int16_t>{-32768, -2, 32767}, {-32768, -2, 32767}, {-32768, -2, 32767});
    make(DType::UInt16, std::vector<uint16_t>{0, 65535}, {0, 65535}, {0, 65535});
    make(DType::Int32, std::vector<int32_t>{INT32_MIN, 16777217, 16777219, INT32_MAX},
         {-2147483648.0, 16777217.0, 16777219.0, 2147483647.0},
         {-2147483648.0f, 16777216.0f, 16777220.0f, 2147483648.0f});
    make(DType::UInt32, std::vector<uint32_t>{0, 33554435u, UINT32_MAX}, {0.0, 33554435.0, 4294967295.0},
         {0.0f, 33554436.0f, 4294967296.0f});
    make(DType::Int64,
         std::vector<int64_t>{INT64_MIN, (int64_t(1) << 53) + 1, (int64_t(1) << 53) + 3, INT64_MAX, -5},
         {-0x1p63, 0x1p53, 0x1p53 + 4, 0x1p63, -5.0}, {-0x1p63f, 0x1p53f, 0x1p53f, 0x1p63f, -5.0f});
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
            const QString where =
                QString::fromLatin1(faultline::dtypeName(c.type).data()) + " #" + QString::number(i);
            CHECK_OR_FAIL(d[i] == c.asDouble[i], qPrintable(where + " double " + describe(d[i])));
            CHECK_OR_FAIL(f[i] == c.asFloat[i], qPrintable(where + " float " + describe(f[i])));
        }
    }
}

void TestConvertBulk::bulkToInteger_data()
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
        {Int8, 126.5, "126"},
        {Int8, -128.5, "-128"},
        {Int8, -129.0, "-128"},
        {Int8, 1e10, "127"},
        {Int8, kInf, "127"},
        {Int8, -kInf, "-128"},
        {Int8, kNaN, "0"},
        {Int8, -kNaN, "0"},
        {Int8, -0.0, "0"},
        {Int8, 0.5, "0"},
        {Int8, 1.5, "2"},
        {Int8, 2.5, "2"},
        {Int8, 3.5, "4"},
        {Int8, -2.5, "-2"},
        {Int8, -3.5, "-4"},
        {Int8, -0.5, "0"},
        {Int8, 0.49999999999999994, "0"},
        {Int8, 2.5000000000000004, "3"},
        {UInt8, 255.4, "255"},
        {UInt8, 255.5, "255"},
        {UInt8, 254.5, "254"},
        {UInt8, -0.5, "0"},
        {UInt8, -0.7, "0"},
        {UInt8, -1.0, "0"},
        {UInt8, 300.0, "255"},
        {UInt8, -kInf, "0"},
        {UInt8, kNaN, "0"},
        {Int16, 32767.5, "32767"},
        {Int16, -32768.5, "-32768"},
        {Int16, 40000.0, "32767"},
        {Int16, -1234.5, "-1234"},
        {UInt16, 65535.5, "65535"},
        {UInt16, 65534.5, "65534"},
        {UInt16, 70000.0, "65535"},
        {Int32, 2147483647.0, "2147483647"},
        {Int32, 2147483647.5, "2147483647"},
        {Int32, 2147483646.5, "2147483646"},
        {Int32, 2147483648.0, "2147483647"},
        {Int32, -2147483648.0, "-2147483648"},
        {Int32, -2147483648.5, "-2147483648"},
        {Int32, -2147483649.0, "-2147483648"},
        {Int32, 1e20, "2147483647"},
        {Int32, 8388607.5, "8388608"},
        {Int32, 8388606.5, "8388606"},
        {Int32, -8388607.5, "-8388608"},
        {Int32, 16777216.0, "16777216"},
        {UInt32, 4294967295.5, "4294967295"},
        {UInt32, 4294967294.5, "4294967294"},
        {UInt32, 4294967296.0, "4294967295"},
        {UInt32, -1.0, "0"},
        {UInt32, 3000000000.0, "3000000000"},
        {Int64, 9.3e18, "9223372036854775807"},
        {Int64, 0x1p63, "9223372036854775807"},
        {Int64, -0x1p63, "-9223372036854775808"},
        {Int64, -1e19, "-9223372036854775808"},
        {Int64, 9223372036854774784.0, "9223372036854774784"},  // 2^63 - 1024
        {Int64, 4503599627370495.5, "4503599627370496"},        // 2^52 - 0.5: tie to even
        {Int64, 4503599627370494.5, "4503599627370494"},
        {Int64, -4503599627370495.5, "-4503599627370496"},
        {Int64, 4503599627370497.0, "4503599627370497"},
        {Int64, kInf, "9223372036854775807"},
        {Int64, kNaN, "0"},
        {UInt64, 0x1p64, "18446744073709551615"},
        {UInt64, 18446744073709549568.0, "18446744073709549568"},  // 2^64 - 2048
        {UInt64, 18446742974197923840.0, "18446742974197923840"},  // 2^64 - 2^40 (float)
        {UInt64, 0x1p63, "9223372036854775808"},
        {UInt64, -0.7, "0"},
        {UInt64, -1e30, "0"},
        {UInt64, 1e30, "18446744073709551615"},
        {UInt64, 1.5, "2"},
        {Bool, 0.0, "0"},
        {Bool, -0.0, "0"},
        {Bool, kNaN, "1"},
        {Bool, 1e-300, "1"},
        {Bool, -kInf, "1"},
        {Bool, 0.5, "1"},
        {Bool, -3.0, "1"},
    };
    for (const Row& r : rows)
        QTest::addRow("%s %.17g", faultline::dtypeName(r.type).data(), r.value)
            << r.type << r.value << QString::fromLatin1(r.expected);
}

void TestConvertBulk::bulkToInteger()
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

void TestConvertBulk::bulkUnalignedSource()
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

void TestConvertBulk::bulkInvalidDType()
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

void TestConvertBulk::loadBitsZeroExtends()
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

QTEST_APPLESS_MAIN(TestConvertBulk)
#include "test_convert_bulk.moc"
