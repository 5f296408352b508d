// Tolerance policies (core/compare/Tolerance.h): parsing of the text form with its errors, and
// each policy's boundary: exactly at the limit is within, one step further is beyond.
#include <QtTest>

#include "core/compare/Tolerance.h"
#include "test_compare_helpers.h"

using faultline::DType;
using faultline::Tolerance;
using faultline::ToleranceKind;
using namespace fltest;

Q_DECLARE_METATYPE(faultline::ToleranceKind)

class TestCompareTolerance : public QObject {
    Q_OBJECT

private slots:
    void parseGood_data();
    void parseGood();
    void parseBad_data();
    void parseBad();
    void roundTrip();
    void ulpBoundary_data();
    void ulpBoundary();
    void absBoundary();
    void relBoundary();
    void boundPolicy();
    void boundWithoutProvider();
    void boundProviderError();
    void nonFiniteAlwaysBeyond();
};

void TestCompareTolerance::parseGood_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<ToleranceKind>("kind");
    QTest::addColumn<quint64>("ulps");
    QTest::addColumn<double>("value");
    QTest::newRow("exact") << "exact" << ToleranceKind::Exact << quint64(0) << 0.0;
    QTest::newRow("EXACT blanks") << "  EXACT " << ToleranceKind::Exact << quint64(0) << 0.0;
    QTest::newRow("ulp:4") << "ulp:4" << ToleranceKind::Ulp << quint64(4) << 0.0;
    QTest::newRow("ulp:0") << "ulp:0" << ToleranceKind::Ulp << quint64(0) << 0.0;
    QTest::newRow("ulp max") << "ulp:18446744073709551615" << ToleranceKind::Ulp << quint64(UINT64_MAX)
                             << 0.0;
    QTest::newRow("abs:1e-5") << "abs:1e-5" << ToleranceKind::Abs << quint64(0) << 1e-5;
    QTest::newRow("abs:0") << "abs:0" << ToleranceKind::Abs << quint64(0) << 0.0;
    QTest::newRow("rel:0.01") << "Rel:0.01" << ToleranceKind::Rel << quint64(0) << 0.01;
    QTest::newRow("abs:-0") << "abs:-0" << ToleranceKind::Abs << quint64(0) << 0.0;
    QTest::newRow("bound") << "bound" << ToleranceKind::Bound << quint64(0) << 0.0;
}

void TestCompareTolerance::parseGood()
{
    QFETCH(QString, text);
    QFETCH(ToleranceKind, kind);
    QFETCH(quint64, ulps);
    QFETCH(double, value);
    auto t = faultline::parseTolerance(text.toStdString());
    QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
    QCOMPARE(t->kind, kind);
    QCOMPARE(quint64(t->ulps), ulps);
    QCOMPARE(t->value, value);
    QVERIFY(!std::signbit(t->value));
}

void TestCompareTolerance::parseBad_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("empty") << ""
                           << "empty";
    QTest::newRow("unknown") << "close"
                             << "unknown policy 'close'";
    QTest::newRow("ulp no value") << "ulp"
                                  << "needs a value";
    QTest::newRow("ulp empty value") << "ulp:"
                                     << "needs a value";
    QTest::newRow("ulp negative") << "ulp:-1"
                                  << "non-negative integer";
    QTest::newRow("ulp fraction") << "ulp:1.5"
                                  << "non-negative integer";
    QTest::newRow("ulp overflow") << "ulp:99999999999999999999"
                                  << "too large";
    QTest::newRow("abs text") << "abs:small"
                              << "not a number";
    QTest::newRow("abs trailing") << "abs:1e-5x"
                                  << "not a number";
    QTest::newRow("abs negative") << "abs:-1"
                                  << "negative";
    QTest::newRow("abs inf") << "abs:inf"
                             << "finite";
    QTest::newRow("rel nan") << "rel:nan"
                             << "finite";
    QTest::newRow("exact value") << "exact:1"
                                 << "takes no value";
    QTest::newRow("bound value") << "bound:1"
                                 << "takes no value";
}

void TestCompareTolerance::parseBad()
{
    QFETCH(QString, text);
    QFETCH(QString, mentions);
    auto t = faultline::parseTolerance(text.toStdString());
    QVERIFY(!t.ok());
    const QString msg = QString::fromStdString(t.message());
    QVERIFY2(msg.contains(mentions), qPrintable(msg));
    QVERIFY2(msg.startsWith("tolerance '" + text + "'"), qPrintable(msg));
}

void TestCompareTolerance::roundTrip()
{
    for (const Tolerance& t :
         {Tolerance::exact(), Tolerance::ulp(7), Tolerance::absolute(1e-5), Tolerance::relative(0.1),
          Tolerance::absolute(1.0 / 3.0), Tolerance::bound()}) {
        auto back = faultline::parseTolerance(t.toString());
        QVERIFY(back.ok());
        QVERIFY2(*back == t, t.toString().c_str());
    }
    QCOMPARE(Tolerance::ulp(4).toString(), std::string("ulp:4"));
    QCOMPARE(Tolerance::absolute(1e-5).toString(), std::string("abs:1e-05"));
}

namespace {

// A 1-D tensor pair: suspect[i] = reference[i] moved by steps[i] ulp (magnitude bits).
void ulpPair(DType t, const std::vector<uint64_t>& steps, Tensor& s, Tensor& r)
{
    r.dtype = s.dtype = t;
    r.shape = s.shape = {steps.size()};
    r.bits.clear();
    s.bits.clear();
    for (uint64_t k : steps) {
        const uint64_t base = encode(t, 1.25);
        r.bits.push_back(base);
        s.bits.push_back(base + k);
    }
}

}  // namespace

void TestCompareTolerance::ulpBoundary_data()
{
    QTest::addColumn<DType>("dtype");
    QTest::newRow("f32") << DType::Float32;
    QTest::newRow("bf16") << DType::BFloat16;
    QTest::newRow("f16") << DType::Float16;
    QTest::newRow("e4m3") << DType::Float8E4M3FN;
    QTest::newRow("e5m2") << DType::Float8E5M2;
    QTest::newRow("f64") << DType::Float64;
}

void TestCompareTolerance::ulpBoundary()
{
    QFETCH(DType, dtype);
    Tensor s, r;
    ulpPair(dtype, {0, 1, 2, 3, 4}, s, r);
    for (uint64_t n : {0u, 1u, 2u, 3u}) {
        faultline::CompareOptions o;
        o.tolerance = Tolerance::ulp(n);
        auto d = compare(s, r, o);
        QVERIFY(d.ok());
        QCOMPARE(d->mismatches, uint64_t(4));
        QCOMPARE(d->beyondTolerance, uint64_t(4 - n));  // steps n+1..4 are beyond
        QCOMPARE(d->maxUlp, uint64_t(4));
        QCOMPARE(d->firstBeyond.value_or(99), uint64_t(n + 1));
    }
    // ±0 are 0 ulp apart: within ulp:0, beyond exact.
    Tensor z1, z2;
    z1.dtype = z2.dtype = dtype;
    z1.shape = z2.shape = {1};
    z1.bits = {0};
    z2.bits = {uint64_t(1) << (widthOf(dtype) - 1)};
    faultline::CompareOptions o;
    o.tolerance = Tolerance::ulp(0);
    QCOMPARE(compare(z1, z2, o)->beyondTolerance, uint64_t(0));
    QCOMPARE(compare(z1, z2)->beyondTolerance, uint64_t(1));
    // Across zero: smallest positive vs smallest negative subnormal is 2 ulp.
    z1.bits = {1};
    z2.bits = {(uint64_t(1) << (widthOf(dtype) - 1)) | 1};
    o.tolerance = Tolerance::ulp(1);
    QCOMPARE(compare(z1, z2, o)->beyondTolerance, uint64_t(1));
    o.tolerance = Tolerance::ulp(2);
    QCOMPARE(compare(z1, z2, o)->beyondTolerance, uint64_t(0));
    QCOMPARE(compare(z1, z2, o)->maxUlp, uint64_t(2));
}

void TestCompareTolerance::absBoundary()
{
    Tensor s, r;
    s.dtype = r.dtype = DType::Float32;
    s.shape = r.shape = {3};
    r.bits = {encode(DType::Float32, 1.0), encode(DType::Float32, 1.0), encode(DType::Float32, -2.0)};
    s.bits = {encode(DType::Float32, 1.5), encode(DType::Float32, 1.25), encode(DType::Float32, -2.5)};
    faultline::CompareOptions o;
    o.tolerance = Tolerance::absolute(0.5);
    QCOMPARE(compare(s, r, o)->beyondTolerance, uint64_t(0));
    o.tolerance = Tolerance::absolute(std::nextafter(0.5, 0.0));
    QCOMPARE(compare(s, r, o)->beyondTolerance, uint64_t(2));
    o.tolerance = Tolerance::absolute(0.25);
    QCOMPARE(compare(s, r, o)->beyondTolerance, uint64_t(2));
}

void TestCompareTolerance::relBoundary()
{
    Tensor s, r;
    s.dtype = r.dtype = DType::Float32;
    s.shape = r.shape = {4};
    r.bits = {encode(DType::Float32, 2.0), encode(DType::Float32, -4.0), 0, 0};
    s.bits = {encode(DType::Float32, 3.0), encode(DType::Float32, -5.0), encode(DType::Float32, 1e-30),
              0x80000000u};  // last: -0 vs +0
    faultline::CompareOptions o;
    o.tolerance = Tolerance::relative(0.5);
    auto d = compare(s, r, o);
    QCOMPARE(d->mismatches, uint64_t(4));
    QCOMPARE(d->beyondTolerance, uint64_t(1));  // only 1e-30 vs 0: relative error is infinite
    QCOMPARE(d->relInfinite, uint64_t(1));
    o.tolerance = Tolerance::relative(0.4);
    QCOMPARE(compare(s, r, o)->beyondTolerance, uint64_t(2));  // 0.5 > 0.4, 0.25 <= 0.4
    o.tolerance = Tolerance::relative(1e9);
    QCOMPARE(compare(s, r, o)->beyondTolerance, uint64_t(1));  // never accepts r == 0 != s
}

void TestCompareTolerance::boundPolicy()
{
    // 3000 elements in chunks of 256: the provider must be asked for the right ranges.
    const size_t n = 3000;
    Tensor s, r;
    s.dtype = r.dtype = DType::Float32;
    s.shape = r.shape = {n};
    for (size_t i = 0; i < n; ++i) {
        r.bits.push_back(encode(DType::Float32, 1.0));
        s.bits.push_back(encode(DType::Float32, 1.0 + double(i % 4) * 0.25));  // error 0, .25, .5, .75
    }
    // bound[i] = 0.5 for even i, 0.25 for odd i: beyond are i%4 == 3 (odd, .75 > .25) and
    // i%4 == 1? (.25 <= .25: within). Even: i%4 == 2 (.5 <= .5 within).
    std::atomic<uint64_t> asked{0};
    faultline::BoundProvider provider = [&](uint64_t first, uint64_t count, double* b) {
        asked += count;
        for (uint64_t k = 0; k < count; ++k) b[k] = (first + k) % 2 == 0 ? 0.5 : 0.25;
        return faultline::Status::success();
    };
    faultline::CompareOptions o;
    o.tolerance = Tolerance::bound();
    o.chunkElements = 256;
    o.threads = 3;
    auto d = compare(s, r, o, provider);
    QVERIFY2(d.ok(), d.ok() ? "" : d.message().c_str());
    QCOMPARE(asked.load(), uint64_t(n));
    QCOMPARE(d->beyondTolerance, uint64_t(n / 4));
    QCOMPARE(d->firstBeyond.value_or(0), uint64_t(3));
}

void TestCompareTolerance::boundWithoutProvider()
{
    Tensor t = randomTensor(DType::Float32, {10}, 1);
    faultline::CompareOptions o;
    o.tolerance = Tolerance::bound();
    auto d = compare(t, t, o);
    QVERIFY(!d.ok());
    QVERIFY2(QString::fromStdString(d.message()).contains("bound"), d.message().c_str());
}

void TestCompareTolerance::boundProviderError()
{
    Tensor t = randomTensor(DType::Float32, {1000}, 1);
    faultline::CompareOptions o;
    o.tolerance = Tolerance::bound();
    o.chunkElements = 100;
    auto d = compare(t, t, o, [](uint64_t first, uint64_t, double*) {
        return first >= 500
                   ? faultline::Status(faultline::Error{"no bound for element " + std::to_string(first)})
                   : faultline::Status::success();
    });
    QVERIFY(!d.ok());
    QVERIFY2(QString::fromStdString(d.message()).contains("no bound for element 500"), d.message().c_str());
}

void TestCompareTolerance::nonFiniteAlwaysBeyond()
{
    Tensor s, r;
    s.dtype = r.dtype = DType::Float32;
    s.shape = r.shape = {3};
    r.bits = {encode(DType::Float32, 1.0), encode(DType::Float32, 1.0), 0x7f800000};
    s.bits = {0x7fc00000, 0x7f800000, 0xff800000};
    for (const Tolerance& t : {Tolerance::exact(), Tolerance::ulp(UINT64_MAX), Tolerance::absolute(1e300),
                               Tolerance::relative(1e300)}) {
        faultline::CompareOptions o;
        o.tolerance = t;
        QCOMPARE(compare(s, r, o)->beyondTolerance, uint64_t(3));
    }
}

QTEST_APPLESS_MAIN(TestCompareTolerance)
#include "test_compare_tolerance.moc"
