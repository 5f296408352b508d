// The golden model's elementary pieces (core/golden/GoldenOrder.h, GoldenMath.h): the exp/erf/
// tanh polynomials against double-precision libm, their special values, the no-fusion rule and
// the fixed reduction tree, with expected values worked out by hand.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/FloatFormats.h"
#include "core/golden/GoldenMath.h"
#include "core/golden/GoldenOrder.h"

using namespace faultline;
using namespace faultline::golden;

namespace {

// |got - want| in ulps of float at want.
double ulpError(float got, double want)
{
    if (std::isnan(want)) return std::isnan(got) ? 0.0 : 1e30;
    const float w = float(want);
    if (std::isinf(w) || std::isinf(got)) return got == w ? 0.0 : 1e30;
    double spacing = std::nextafter(std::fabs(w), INFINITY) - std::fabs(w);
    spacing = std::max(spacing, double(std::numeric_limits<float>::denorm_min()));
    return std::fabs(double(got) - want) / spacing;
}

template <class F, class G>
double worstUlp(F f, G reference, float lo, float hi, uint32_t step, float* where)
{
    double worst = 0;
    for (int sign = 0; sign < 2; ++sign) {
        for (uint32_t u = floatBits(lo); u <= floatBits(hi); u += step) {
            const float x = floatFromBits(u | (sign ? 0x80000000u : 0u));
            const double e = ulpError(f(x), reference(double(x)));
            if (e > worst) {
                worst = e;
                *where = x;
            }
        }
    }
    return worst;
}

}  // namespace

class TestGoldenMath : public QObject {
    Q_OBJECT

private slots:
    void accuracy_data()
    {
        QTest::addColumn<int>("function");
        QTest::addColumn<float>("lo");
        QTest::addColumn<float>("hi");
        QTest::addColumn<double>("maxUlp");
        // Ranges where the result is a normal float; limits are the documented accuracy.
        QTest::newRow("exp") << 0 << 1e-30f << 88.7f << 2.0;
        QTest::newRow("exp-subnormal-results") << 0 << 87.4f << 103.0f << 2.0;
        QTest::newRow("erf") << 1 << 1e-30f << 6.0f << 2.0;
        QTest::newRow("tanh") << 2 << 1e-30f << 12.0f << 3.0;
        QTest::newRow("silu-positive") << 3 << 1e-30f << 90.0f << 4.0;
    }
    void accuracy()
    {
        QFETCH(int, function);
        QFETCH(float, lo);
        QFETCH(float, hi);
        QFETCH(double, maxUlp);
        float where = 0;
        double worst = 0;
        const uint32_t step = 509;  // ~2 million points per sign over the full float range
        switch (function) {
            case 0:
                if (lo > 80.0f)  // exp of negative arguments only: the subnormal results
                    worst = worstUlp([](float x) { return goldenExp(-std::fabs(x)); },
                                     [](double x) { return std::exp(-std::fabs(x)); }, lo, hi, 7, &where);
                else
                    worst = worstUlp(
                        goldenExp, [](double x) { return std::exp(x); }, lo, hi, step, &where);
                break;
            case 1:
                worst = worstUlp(
                    goldenErf, [](double x) { return std::erf(x); }, lo, hi, step, &where);
                break;
            case 2:
                worst = worstUlp(
                    goldenTanh, [](double x) { return std::tanh(x); }, lo, hi, step, &where);
                break;
            case 3:
                worst = worstUlp([](float x) { return siluGolden(std::fabs(x)); },
                                 [](double x) { return std::fabs(x) / (1.0 + std::exp(-std::fabs(x))); }, lo,
                                 hi, step, &where);
                break;
        }
        if (function == 0 && lo > 80.0f) {
            // Subnormal results carry an absolute error of at most one subnormal step.
            QVERIFY2(worst <= 1.0, qPrintable(QStringLiteral("worst %1 ulp at %2").arg(worst).arg(where)));
            return;
        }
        QVERIFY2(worst <= maxUlp,
                 qPrintable(QStringLiteral("worst %1 ulp at %2").arg(worst).arg(double(where), 0, 'g', 9)));
        QVERIFY(worst <= kGoldenFunctionUlp);
    }

    void specialValues()
    {
        const float inf = std::numeric_limits<float>::infinity();
        const float nan = std::numeric_limits<float>::quiet_NaN();
        QCOMPARE(goldenExp(0.0f), 1.0f);
        QCOMPARE(goldenExp(-0.0f), 1.0f);
        QCOMPARE(goldenExp(-inf), 0.0f);
        QCOMPARE(goldenExp(inf), inf);
        QCOMPARE(goldenExp(88.8f), inf);            // e^88.8 > FLT_MAX
        QVERIFY(std::isfinite(goldenExp(88.72f)));  // e^88.72 = 3.38e38 < FLT_MAX
        QCOMPARE(goldenExp(-104.5f), 0.0f);
        QCOMPARE(goldenExp(1.0f), 2.71828183f);  // e rounded to float
        QVERIFY(std::isnan(goldenExp(nan)));
        QVERIFY(std::isnan(goldenErf(nan)));
        QVERIFY(std::isnan(goldenTanh(nan)));
        QCOMPARE(goldenErf(inf), 1.0f);
        QCOMPARE(goldenErf(-inf), -1.0f);
        QCOMPARE(goldenTanh(inf), 1.0f);
        QCOMPARE(goldenTanh(-inf), -1.0f);
        QCOMPARE(floatBits(goldenErf(-0.0f)), 0x80000000u);
        QCOMPARE(floatBits(goldenTanh(-0.0f)), 0x80000000u);
        QCOMPARE(floatBits(siluGolden(-0.0f)), 0x80000000u);
        QCOMPARE(floatBits(geluErfGolden(0.0f)), 0u);
        QCOMPARE(goldenTanh(1e-30f), 1e-30f);
        QCOMPARE(goldenErf(5.0f), 1.0f);
        QCOMPARE(geluErfGolden(10.0f), 10.0f);
        QCOMPARE(geluTanhGolden(10.0f), 10.0f);
        QCOMPARE(siluGolden(100.0f), 100.0f);
        QCOMPARE(floatBits(siluGolden(-200.0f)), 0x80000000u);  // -200 / inf
        // gelu(-inf) = -inf * 0.5 * (1 + erf(-inf)) = -inf * 0 = NaN, as PyTorch gives.
        QVERIFY(std::isnan(geluErfGolden(-inf)));
    }

    // mulRn must not be fused into a following add, fmaRn must be fused, whatever the compiler
    // would like to do with `a * b + c`.
    void noContraction()
    {
        const float a = 1.0f + 0x1p-12f;  // a*a = 1 + 2^-11 + 2^-24: the last bit needs fusion
        const float c = -(1.0f + 0x1p-11f);
        volatile float va = a, vc = c;          // keep the compiler from folding at compile time
        QCOMPARE(mulRn(va, va) + vc, 0.0f);     // a*a rounds to 1 + 2^-11 (tie to even)
        QCOMPARE(fmaRn(va, va, vc), 0x1p-24f);  // exact a*a - (1 + 2^-11)
        // The GEMM epilogue is fma(alpha, acc, beta * c): with acc = alpha = a, beta = 1, it
        // keeps the 2^-24 that alpha * acc + beta * c in two steps would lose.
        QCOMPARE(gemmEpilogue(va, va, 1.0f, vc, true), 0x1p-24f);
        QCOMPARE(gemmEpilogue(va, 2.0f, 0.0f, std::numeric_limits<float>::quiet_NaN(), false), 2.0f * a);
    }

    // Lane l adds x[l], x[l+32], ...; lanes combine by halving. Worked by hand:
    // x[0] = 2^24, x[1] = 1, x[33] = 1: lane 1 = 2, lane 0 = 2^24, final 2^24 + 2 exactly,
    // whereas a sequential sum loses both ones (2^24 + 1 ties to 2^24).
    void treeOrder()
    {
        std::vector<float> x(64, 0.0f);
        x[0] = 16777216.0f;
        x[1] = 1.0f;
        x[33] = 1.0f;
        QCOMPARE(treeSumRow(x.data(), 64), 16777218.0f);
        float sequential = 0.0f;
        for (float v : x) sequential += v;
        QCOMPARE(sequential, 16777216.0f);  // the order matters for this row
        // Halving, one element per lane: with 2^24 in lane 0 and ones in lanes 16 and 8, each
        // one meets 2^24 alone (levels 16 and 8) and is lost: 2^24. With ones in lanes 1 and 17
        // they meet each other first (level 16) and their 2 survives the final level: 2^24 + 2.
        std::vector<float> y(32, 0.0f);
        y[0] = 16777216.0f;
        y[16] = 1.0f;
        y[8] = 1.0f;
        QCOMPARE(treeSumRow(y.data(), 32), 16777216.0f);
        y[16] = 0.0f;
        y[8] = 0.0f;
        y[1] = 1.0f;
        y[17] = 1.0f;
        QCOMPARE(treeSumRow(y.data(), 32), 16777218.0f);
        // Zeros appended to a row of non-negative values change nothing (lanes are i mod 32).
        std::vector<float> z = x;
        z.resize(200, 0.0f);
        QCOMPARE(floatBits(treeSumRow(z.data(), 200)), floatBits(treeSumRow(x.data(), 64)));
        QCOMPARE(treeSumRow(x.data(), 0), 0.0f);
    }

    void maxMin()
    {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        QCOMPARE(floatBits(goldenMax(0.0f, -0.0f)), 0u);
        QCOMPARE(floatBits(goldenMax(-0.0f, 0.0f)), 0u);
        QCOMPARE(floatBits(goldenMin(0.0f, -0.0f)), 0x80000000u);
        QCOMPARE(floatBits(goldenMin(-0.0f, 0.0f)), 0x80000000u);
        QVERIFY(std::isnan(goldenMax(1.0f, nan)));
        QVERIFY(std::isnan(goldenMax(nan, 1.0f)));
        QVERIFY(std::isnan(goldenMin(nan, 1.0f)));
        QCOMPARE(goldenMax(-3.0f, 2.0f), 2.0f);
        QCOMPARE(goldenMin(-3.0f, 2.0f), -3.0f);
        const float row[] = {-5.0f, 3.0f, -std::numeric_limits<float>::infinity(), 7.5f, 1.0f};
        QCOMPARE(treeMaxRow(row, 5), 7.5f);
        QCOMPARE(treeMaxRow(row, 0), -std::numeric_limits<float>::infinity());
    }

    void dotChainIsAscendingFma()
    {
        // a0*b0 = -(1 + 2^-11) exactly, then fma(a1, b1, acc) keeps the 2^-24 that a separate
        // product would round away; descending order (a1*b1 first) would lose it too.
        const float a[] = {-(1.0f + 0x1p-11f), 1.0f + 0x1p-12f};
        const float b[] = {1.0f, 1.0f + 0x1p-12f};
        QCOMPARE(dotChain(a, 1, b, 1, 2), 0x1p-24f);
        const float ad[] = {a[1], a[0]};
        const float bd[] = {b[1], b[0]};
        QCOMPARE(dotChain(ad, 1, bd, 1, 2), 0.0f);
        QCOMPARE(floatBits(dotChain(a, 1, b, 1, 0)), 0u);  // empty chain: +0
    }
};

QTEST_APPLESS_MAIN(TestGoldenMath)
#include "test_golden_math.moc"
