// DType names, aliases, sizes and bit layouts (core/DType.h). The expected values are written
// out here from the formats' definitions, not taken from DType.cpp.
#include <QtTest>

#include <set>
#include <string>

#include "core/DType.h"

using faultline::DType;

Q_DECLARE_METATYPE(faultline::DType)

class TestDType : public QObject {
    Q_OBJECT

private slots:
    void canonicalNames_data();
    void canonicalNames();
    void everyDTypeListedOnce();
    void aliases_data();
    void aliases();
    void unknownNames_data();
    void unknownNames();
    void bitFieldNames_data();
    void bitFieldNames();
};

void TestDType::canonicalNames_data()
{
    QTest::addColumn<DType>("type");
    QTest::addColumn<QString>("name");
    QTest::addColumn<unsigned>("size");
    QTest::addColumn<unsigned>("exponentBits");
    QTest::addColumn<unsigned>("mantissaBits");
    QTest::addColumn<bool>("hasSign");
    QTest::addColumn<bool>("floating");
    QTest::addColumn<bool>("signedInteger");

    auto row = [](DType t, const char* name, unsigned size, unsigned e, unsigned m, bool sign, bool floating,
                  bool signedInt) {
        QTest::newRow(name) << t << QString::fromLatin1(name) << size << e << m << sign << floating
                            << signedInt;
    };
    row(DType::Float64, "float64", 8, 11, 52, true, true, false);
    row(DType::Float32, "float32", 4, 8, 23, true, true, false);
    row(DType::Float16, "float16", 2, 5, 10, true, true, false);
    row(DType::BFloat16, "bfloat16", 2, 8, 7, true, true, false);
    row(DType::Float8E4M3FN, "float8_e4m3fn", 1, 4, 3, true, true, false);
    row(DType::Float8E5M2, "float8_e5m2", 1, 5, 2, true, true, false);
    row(DType::Int8, "int8", 1, 0, 0, true, false, true);
    row(DType::Int16, "int16", 2, 0, 0, true, false, true);
    row(DType::Int32, "int32", 4, 0, 0, true, false, true);
    row(DType::Int64, "int64", 8, 0, 0, true, false, true);
    row(DType::UInt8, "uint8", 1, 0, 0, false, false, false);
    row(DType::UInt16, "uint16", 2, 0, 0, false, false, false);
    row(DType::UInt32, "uint32", 4, 0, 0, false, false, false);
    row(DType::UInt64, "uint64", 8, 0, 0, false, false, false);
    row(DType::Bool, "bool", 1, 0, 0, false, false, false);
}

void TestDType::canonicalNames()
{
    QFETCH(DType, type);
    QFETCH(QString, name);
    QFETCH(unsigned, size);
    QFETCH(unsigned, exponentBits);
    QFETCH(unsigned, mantissaBits);
    QFETCH(bool, hasSign);
    QFETCH(bool, floating);
    QFETCH(bool, signedInteger);

    const std::string n = name.toStdString();
    QCOMPARE(std::string(faultline::dtypeName(type)), n);
    QCOMPARE(faultline::parseDTypeName(n), std::optional<DType>(type));
    // Case does not matter when parsing.
    QCOMPARE(faultline::parseDTypeName(name.toUpper().toStdString()), std::optional<DType>(type));

    QCOMPARE(faultline::dtypeSize(type), size);
    QCOMPARE(faultline::isFloatingPoint(type), floating);
    QCOMPARE(faultline::isSignedInteger(type), signedInteger);

    const faultline::BitLayout l = faultline::bitLayout(type);
    QCOMPARE(l.totalBits, size * 8);
    QCOMPARE(l.exponentBits, exponentBits);
    QCOMPARE(l.mantissaBits, mantissaBits);
    QCOMPARE(l.hasSign, hasSign);
    if (floating) QCOMPARE(l.exponentBits + l.mantissaBits + 1, l.totalBits);
}

void TestDType::everyDTypeListedOnce()
{
    std::set<int> seen;
    std::set<std::string> names;
    for (DType t : faultline::kAllDTypes) {
        seen.insert(int(t));
        names.insert(std::string(faultline::dtypeName(t)));
    }
    QCOMPARE(seen.size(), size_t(15));
    QCOMPARE(names.size(), size_t(15));
    QCOMPARE(*seen.begin(), int(DType::Float64));
    QCOMPARE(*seen.rbegin(), int(DType::Bool));
}

void TestDType::aliases_data()
{
    QTest::addColumn<QString>("alias");
    QTest::addColumn<DType>("type");
    QTest::newRow("double") << "double" << DType::Float64;
    QTest::newRow("f64") << "f64" << DType::Float64;
    QTest::newRow("float") << "float" << DType::Float32;
    QTest::newRow("f32") << "F32" << DType::Float32;
    QTest::newRow("half") << "half" << DType::Float16;
    QTest::newRow("f16") << "f16" << DType::Float16;
    QTest::newRow("bf16") << "bf16" << DType::BFloat16;
    QTest::newRow("BF16") << "BF16" << DType::BFloat16;
    QTest::newRow("float8_e4m3") << "float8_e4m3" << DType::Float8E4M3FN;
    QTest::newRow("f8_e4m3") << "f8_e4m3" << DType::Float8E4M3FN;
    QTest::newRow("F8_E4M3FN") << "F8_E4M3FN" << DType::Float8E4M3FN;
    QTest::newRow("e4m3") << "e4m3" << DType::Float8E4M3FN;
    QTest::newRow("F8_E5M2") << "F8_E5M2" << DType::Float8E5M2;
    QTest::newRow("e5m2") << "e5m2" << DType::Float8E5M2;
    QTest::newRow("i8") << "i8" << DType::Int8;
    QTest::newRow("i16") << "i16" << DType::Int16;
    QTest::newRow("i32") << "i32" << DType::Int32;
    QTest::newRow("I64") << "I64" << DType::Int64;
    QTest::newRow("u8") << "u8" << DType::UInt8;
    QTest::newRow("u16") << "u16" << DType::UInt16;
    QTest::newRow("u32") << "u32" << DType::UInt32;
    QTest::newRow("u64") << "u64" << DType::UInt64;
    QTest::newRow("bool_") << "bool_" << DType::Bool;
    QTest::newRow("boolean") << "boolean" << DType::Bool;
}

void TestDType::aliases()
{
    QFETCH(QString, alias);
    QFETCH(DType, type);
    QCOMPARE(faultline::parseDTypeName(alias.toStdString()), std::optional<DType>(type));
}

void TestDType::unknownNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("empty") << "";
    QTest::newRow("float128") << "float128";
    QTest::newRow("bfloat") << "bfloat";
    QTest::newRow("int4") << "int4";
    QTest::newRow("leading space") << " float32";
    QTest::newRow("trailing space") << "float32 ";
    QTest::newRow("e5m2fn") << "float8_e5m2fn";
    QTest::newRow("complex64") << "complex64";
}

void TestDType::unknownNames()
{
    QFETCH(QString, name);
    QVERIFY(!faultline::parseDTypeName(name.toStdString()).has_value());
}

void TestDType::bitFieldNames_data()
{
    QTest::addColumn<DType>("type");
    // One character per bit, most significant first: s = sign, e = exponent, m = mantissa,
    // v = value.
    QTest::addColumn<QString>("fields");
    QTest::newRow("float64") << DType::Float64 << "s" + QString(11, 'e') + QString(52, 'm');
    QTest::newRow("float32") << DType::Float32 << "s" + QString(8, 'e') + QString(23, 'm');
    QTest::newRow("float16") << DType::Float16 << "seeeeemmmmmmmmmm";
    QTest::newRow("bfloat16") << DType::BFloat16 << "seeeeeeeemmmmmmm";
    QTest::newRow("float8_e4m3fn") << DType::Float8E4M3FN << "seeeemmm";
    QTest::newRow("float8_e5m2") << DType::Float8E5M2 << "seeeeemm";
    QTest::newRow("int8") << DType::Int8 << QString(8, 'v');
    QTest::newRow("int32") << DType::Int32 << QString(32, 'v');
    QTest::newRow("uint64") << DType::UInt64 << QString(64, 'v');
    QTest::newRow("bool") << DType::Bool << QString(8, 'v');
}

void TestDType::bitFieldNames()
{
    QFETCH(DType, type);
    QFETCH(QString, fields);
    QCOMPARE(unsigned(fields.size()), faultline::bitLayout(type).totalBits);
    for (unsigned bit = 0; bit < unsigned(fields.size()); ++bit) {
        const QChar c = fields.at(fields.size() - 1 - int(bit));
        const char* expected = c == 's' ? "sign" : c == 'e' ? "exponent" : c == 'm' ? "mantissa" : "value";
        QCOMPARE(std::string(faultline::bitFieldName(type, bit)), std::string(expected));
    }
}

QTEST_APPLESS_MAIN(TestDType)
#include "test_dtype.moc"
