// The golden GEMM: its documented order (one FMA chain per element, k ascending from +0), the
// same bits for every kernel and thread count, trans flags, batch broadcasting, the epilogue,
// narrow dtypes, and the error bound from both sides (other orders inside, corruption outside).
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/golden/GemmGolden.h"
#include "core/golden/GoldenOrder.h"
#include "test_golden_util.h"

using namespace faultline;
using namespace faultline::golden;
using namespace goldentest;

namespace {

// A plain description of one GEMM the tests compute by hand.
struct Case {
    std::vector<uint64_t> aBatch, bBatch;
    uint64_t m = 1, n = 1, k = 1;
    bool transA = false, transB = false;
};

std::vector<uint64_t> withMatrix(std::vector<uint64_t> batch, uint64_t r, uint64_t c)
{
    batch.push_back(r);
    batch.push_back(c);
    return batch;
}

uint64_t product(const std::vector<uint64_t>& s)
{
    uint64_t n = 1;
    for (uint64_t d : s) n *= d;
    return n;
}

// Test-side broadcast: the output batch shape and, per output batch, the A and B batch index.
struct BatchMap {
    std::vector<uint64_t> shape;
    std::vector<uint64_t> aIndex, bIndex;
};

BatchMap mapBatches(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b)
{
    BatchMap map;
    const size_t rank = std::max(a.size(), b.size());
    std::vector<uint64_t> pa(rank, 1), pb(rank, 1);
    std::copy(a.begin(), a.end(), pa.begin() + long(rank - a.size()));
    std::copy(b.begin(), b.end(), pb.begin() + long(rank - b.size()));
    for (size_t d = 0; d < rank; ++d) map.shape.push_back(std::max(pa[d], pb[d]));
    const uint64_t total = product(map.shape);
    for (uint64_t e = 0; e < total; ++e) {
        uint64_t rest = e, ai = 0, bi = 0, aStride = 1, bStride = 1;
        for (size_t d = rank; d-- > 0;) {
            const uint64_t idx = rest % map.shape[d];
            rest /= map.shape[d];
            ai += (pa[d] == 1 ? 0 : idx) * aStride;
            bi += (pb[d] == 1 ? 0 : idx) * bStride;
            aStride *= pa[d];
            bStride *= pb[d];
        }
        map.aIndex.push_back(ai);
        map.bIndex.push_back(bi);
    }
    return map;
}

// Element (i, p) of op(A) and (p, j) of op(B) for batch slices.
float aAt(const Case& c, const std::vector<float>& a, uint64_t batch, uint64_t i, uint64_t p)
{
    const uint64_t base = batch * c.m * c.k;
    return c.transA ? a[base + p * c.m + i] : a[base + i * c.k + p];
}

float bAt(const Case& c, const std::vector<float>& b, uint64_t batch, uint64_t p, uint64_t j)
{
    const uint64_t base = batch * c.k * c.n;
    return c.transB ? b[base + j * c.k + p] : b[base + p * c.n + j];
}

// Accumulates the products of one output element in the order `sum` chooses.
using Reducer = std::function<double(const std::vector<float>& a, const std::vector<float>& b)>;

std::vector<double> reference(const Case& c, const std::vector<float>& a, const std::vector<float>& b,
                              const Reducer& sum)
{
    const BatchMap map = mapBatches(c.aBatch, c.bBatch);
    std::vector<double> out;
    std::vector<float> ra(c.k), cb(c.k);
    for (size_t bt = 0; bt < map.aIndex.size(); ++bt)
        for (uint64_t i = 0; i < c.m; ++i)
            for (uint64_t j = 0; j < c.n; ++j) {
                for (uint64_t p = 0; p < c.k; ++p) {
                    ra[p] = aAt(c, a, map.aIndex[bt], i, p);
                    cb[p] = bAt(c, b, map.bIndex[bt], p, j);
                }
                out.push_back(sum(ra, cb));
            }
    return out;
}

// The documented order, written independently: acc = fma(a_p, b_p, acc), p ascending, from +0.
double ascendingChain(const std::vector<float>& a, const std::vector<float>& b)
{
    float acc = 0.0f;
    for (size_t p = 0; p < a.size(); ++p) acc = std::fma(a[p], b[p], acc);
    return acc;
}

double descendingChain(const std::vector<float>& a, const std::vector<float>& b)
{
    float acc = 0.0f;
    for (size_t p = a.size(); p-- > 0;) acc = std::fma(a[p], b[p], acc);
    return acc;
}

double exactDouble(const std::vector<float>& a, const std::vector<float>& b)
{
    long double acc = 0;  // products of floats are exact in double; sum in long double
    for (size_t p = 0; p < a.size(); ++p) acc += (long double)(double(a[p]) * double(b[p]));
    return double(acc);
}

double unfusedFloat(const std::vector<float>& a, const std::vector<float>& b)
{
    float acc = 0.0f;
    for (size_t p = 0; p < a.size(); ++p) acc = acc + mulRn(a[p], b[p]);
    return acc;
}

float pairwise(const std::vector<float>& a, const std::vector<float>& b, size_t lo, size_t hi)
{
    if (hi - lo <= 8) {
        float acc = 0.0f;
        for (size_t p = lo; p < hi; ++p) acc = std::fma(a[p], b[p], acc);
        return acc;
    }
    const size_t mid = lo + (hi - lo) / 2;
    return pairwise(a, b, lo, mid) + pairwise(a, b, mid, hi);
}

double pairwiseFloat(const std::vector<float>& a, const std::vector<float>& b)
{
    return pairwise(a, b, 0, a.size());
}

double splitK4(const std::vector<float>& a, const std::vector<float>& b)
{
    float part[4] = {0, 0, 0, 0};
    for (size_t p = 0; p < a.size(); ++p) part[p % 4] = std::fma(a[p], b[p], part[p % 4]);
    return (part[0] + part[2]) + (part[1] + part[3]);
}

float toTf32(float x)
{
    // Round to 10 explicit mantissa bits, nearest even (what TF32 tensor cores read).
    const uint32_t u = floatBits(x);
    return floatFromBits((u + 0xFFFu + (u >> 13 & 1u)) & ~0x1FFFu);
}

double tf32Chain(const std::vector<float>& a, const std::vector<float>& b)
{
    float acc = 0.0f;
    for (size_t p = 0; p < a.size(); ++p) acc = std::fma(toTf32(a[p]), toTf32(b[p]), acc);
    return acc;
}

OpParams gemmParams(const Case& c)
{
    return OpParams{{"trans_a", int64_t(c.transA)}, {"trans_b", int64_t(c.transB)}};
}

std::vector<HostTensor> gemmInputs(const Case& c, DType t, const std::vector<float>& a,
                                   const std::vector<float>& b)
{
    return {tensor(t, withMatrix(c.aBatch, c.transA ? c.k : c.m, c.transA ? c.m : c.k), a),
            tensor(t, withMatrix(c.bBatch, c.transB ? c.n : c.k, c.transB ? c.k : c.n), b)};
}

HostTensor mustRun(const std::vector<HostTensor>& in, const OpParams& p, const GoldenRunOptions& o = {})
{
    Result<HostTensor> r = runGolden("gemm", in, p, o);
    if (!r) qFatal("gemm failed: %s", r.message().c_str());
    return std::move(r).value();
}

}  // namespace

class TestGoldenGemm : public QObject {
    Q_OBJECT

private slots:
    // Values worked out by hand: the ascending FMA chain, not any other order.
    void documentedOrderByHand()
    {
        // 2^24 + 1 + 1: ascending loses both ones (ties to even); descending would give 2^24 + 2.
        const std::vector<HostTensor> in1 = {tensor(DType::Float32, {1, 3}, {16777216.0f, 1.0f, 1.0f}),
                                             tensor(DType::Float32, {3, 1}, {1.0f, 1.0f, 1.0f})};
        // a0 b0 = -(1 + 2^-11), then fma(a1, b1, acc) keeps 2^-24 (a separate product loses it).
        const std::vector<HostTensor> in2 = {
            tensor(DType::Float32, {1, 2}, {-(1.0f + 0x1p-11f), 1.0f + 0x1p-12f}),
            tensor(DType::Float32, {2, 1}, {1.0f, 1.0f + 0x1p-12f})};
        for (GemmKernel kernel : {GemmKernel::Portable, GemmKernel::Avx2Fma}) {
            const GoldenRunOptions o{1, kernel};
            QCOMPARE(floats(mustRun(in1, {}, o))[0], 16777216.0f);
            QCOMPARE(floats(mustRun(in2, {}, o))[0], 0x1p-24f);
        }
        // Long k across the kernel's k blocks (256): carried accumulators, still one chain.
        const Case c{{}, {}, 9, 21, 700};
        const auto a = randomValues(c.m * c.k, 1), b = randomValues(c.k * c.n, 2);
        const auto got = doubles(mustRun(gemmInputs(c, DType::Float32, a, b), {}));
        const auto want = reference(c, a, b, ascendingChain);
        const auto other = reference(c, a, b, descendingChain);
        QCOMPARE(got, want);
        QVERIFY(got != other);  // the data does tell orders apart
    }

    void matchesAscendingChain_data()
    {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("k");
        QTest::addColumn<bool>("transA");
        QTest::addColumn<bool>("transB");
        QTest::addColumn<QList<int>>("aBatch");
        QTest::addColumn<QList<int>>("bBatch");
        QTest::newRow("1x1x1") << 1 << 1 << 1 << false << false << QList<int>{} << QList<int>{};
        QTest::newRow("edge tiles") << 7 << 17 << 300 << false << false << QList<int>{} << QList<int>{};
        QTest::newRow("trans_a") << 13 << 33 << 513 << true << false << QList<int>{} << QList<int>{};
        QTest::newRow("trans_b") << 13 << 33 << 257 << false << true << QList<int>{} << QList<int>{};
        QTest::newRow("trans both") << 150 << 40 << 70 << true << true << QList<int>{} << QList<int>{};
        QTest::newRow("k=0") << 3 << 5 << 0 << false << false << QList<int>{} << QList<int>{};
        QTest::newRow("batch same") << 5 << 6 << 7 << false << false << QList<int>{2, 3} << QList<int>{2, 3};
        QTest::newRow("batch broadcast B") << 5 << 6 << 7 << false << true << QList<int>{4} << QList<int>{};
        QTest::newRow("batch broadcast both")
            << 5 << 19 << 9 << true << false << QList<int>{2, 1} << QList<int>{1, 3};
        QTest::newRow("batch rank differs")
            << 4 << 4 << 4 << false << false << QList<int>{3} << QList<int>{2, 1};
    }
    void matchesAscendingChain()
    {
        QFETCH(int, m);
        QFETCH(int, n);
        QFETCH(int, k);
        QFETCH(bool, transA);
        QFETCH(bool, transB);
        QFETCH(QList<int>, aBatch);
        QFETCH(QList<int>, bBatch);
        Case c;
        for (int d : aBatch) c.aBatch.push_back(uint64_t(d));
        for (int d : bBatch) c.bBatch.push_back(uint64_t(d));
        c.m = uint64_t(m);
        c.n = uint64_t(n);
        c.k = uint64_t(k);
        c.transA = transA;
        c.transB = transB;
        const auto a = randomValues(product(c.aBatch) * c.m * c.k, 11);
        const auto b = randomValues(product(c.bBatch) * c.k * c.n, 12);
        const auto in = gemmInputs(c, DType::Float32, a, b);
        const HostTensor out = mustRun(in, gemmParams(c));
        const BatchMap map = mapBatches(c.aBatch, c.bBatch);
        QCOMPARE(out.shape, withMatrix(map.shape, c.m, c.n));
        QCOMPARE(out.dtype, DType::Float32);
        QCOMPARE(doubles(out), reference(c, a, b, ascendingChain));
    }

    // Bits never depend on the kernel or the number of threads; repeated runs agree.
    void deterministicAcrossThreadsAndKernels()
    {
        const Case c{{2}, {2}, 97, 301, 517};
        const auto a = randomValues(2 * c.m * c.k, 21), b = randomValues(2 * c.k * c.n, 22);
        const auto in = gemmInputs(c, DType::Float32, a, b);
        const HostTensor first = mustRun(in, {}, {1, GemmKernel::Portable});
        for (int threads : {1, 2, 3, 8})
            for (GemmKernel kernel : {GemmKernel::Auto, GemmKernel::Avx2Fma})
                QVERIFY(mustRun(in, {}, {threads, kernel}).data == first.data);
        QVERIFY(mustRun(in, {}, {2, GemmKernel::Auto}).data == first.data);
        QVERIFY(!activeGemmKernelName().empty());
    }

    // d = fma(alpha, acc, beta * c) with alpha, beta rounded to float; beta = 0 reads no C.
    void epilogue()
    {
        const Case c{{}, {}, 4, 5, 6};
        const auto a = randomValues(c.m * c.k, 31), b = randomValues(c.k * c.n, 32);
        const auto bias = randomValues(c.n, 33);
        auto in = gemmInputs(c, DType::Float32, a, b);
        in.push_back(tensor(DType::Float32, {c.n}, bias));  // broadcast over rows
        const double alpha = 0.1, beta = -2.5;
        const HostTensor out = mustRun(in, {{"alpha", alpha}, {"beta", beta}});
        const auto acc = reference(c, a, b, ascendingChain);
        for (uint64_t i = 0; i < c.m; ++i)
            for (uint64_t j = 0; j < c.n; ++j) {
                const float want =
                    std::fma(float(alpha), float(acc[i * c.n + j]), mulRn(float(beta), bias[j]));
                QCOMPARE(floats(out)[i * c.n + j], want);
            }
        // beta = 0: C is not read, so NaN in C does not matter; alpha * acc once rounded.
        in[2] = tensor(DType::Float32, {c.m, c.n}, std::vector<float>(c.m * c.n, std::nanf("")));
        const auto scaled = floats(mustRun(in, {{"alpha", 3.0}, {"beta", int64_t(0)}}));
        for (size_t e = 0; e < scaled.size(); ++e) QCOMPARE(scaled[e], mulRn(3.0f, float(acc[e])));
    }

    void narrowDtypes_data()
    {
        QTest::addColumn<int>("inType");
        QTest::addColumn<QString>("outName");
        QTest::addColumn<int>("outType");
        QTest::newRow("bf16 -> bf16 (default)") << int(DType::BFloat16) << QString() << int(DType::BFloat16);
        QTest::newRow("bf16 -> float32") << int(DType::BFloat16) << "float32" << int(DType::Float32);
        QTest::newRow("f16 -> f16") << int(DType::Float16) << "float16" << int(DType::Float16);
        QTest::newRow("f16 -> bf16") << int(DType::Float16) << "bfloat16" << int(DType::BFloat16);
        QTest::newRow("e4m3 -> f32") << int(DType::Float8E4M3FN) << "float32" << int(DType::Float32);
        QTest::newRow("f32 -> e5m2") << int(DType::Float32) << "float8_e5m2" << int(DType::Float8E5M2);
    }
    void narrowDtypes()
    {
        QFETCH(int, inType);
        QFETCH(QString, outName);
        QFETCH(int, outType);
        const DType in = DType(inType), out = DType(outType);
        const Case c{{}, {}, 11, 18, 40};
        const auto a = representable(in, randomValues(c.m * c.k, 41));
        const auto b = representable(in, randomValues(c.k * c.n, 42));
        OpParams p;
        if (!outName.isEmpty()) p["out_dtype"] = outName.toStdString();
        const HostTensor d = mustRun(gemmInputs(c, in, a, b), p);
        QCOMPARE(d.dtype, out);
        const auto acc = reference(c, a, b, ascendingChain);
        for (size_t e = 0; e < acc.size(); ++e) {
            const float f = float(acc[e]);
            uint32_t want = 0;
            switch (out) {
                case DType::Float32:
                    want = floatBits(f);
                    break;
                case DType::BFloat16:
                    want = floatToBf16(f);
                    break;
                case DType::Float16:
                    want = floatToHalf(f);
                    break;
                case DType::Float8E5M2:
                    want = floatToFp8e5m2(f);
                    break;
                default:
                    QFAIL("unexpected dtype");
            }
            QCOMPARE(uint32_t(loadBits(out, d.data.data(), e)), want);
        }
    }

    // Implementations with other orders, fused-ness and precision stay inside the bound.
    void otherOrdersInsideBound_data()
    {
        QTest::addColumn<int>("data");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("outType");
        QTest::addColumn<uint>("seed");
        for (uint seed = 0; seed < 3; ++seed) {
            QTest::addRow("normal k=64 seed %u", seed)
                << int(Data::Normal) << 64 << int(DType::Float32) << seed;
            QTest::addRow("uniform k=1000 seed %u", seed)
                << int(Data::Uniform) << 1000 << int(DType::Float32) << seed;
            QTest::addRow("cancelling k=512 seed %u", seed)
                << int(Data::Cancelling) << 512 << int(DType::Float32) << seed;
            QTest::addRow("wide range k=300 seed %u", seed)
                << int(Data::WideRange) << 300 << int(DType::Float32) << seed;
            QTest::addRow("normal k=256 bf16 out seed %u", seed)
                << int(Data::Normal) << 256 << int(DType::BFloat16) << seed;
        }
    }
    void otherOrdersInsideBound()
    {
        QFETCH(int, data);
        QFETCH(int, k);
        QFETCH(int, outType);
        const DType out = DType(outType);
        QFETCH(uint, seed);
        const Case c{{}, {}, 12, 20, uint64_t(k)};
        const auto a = randomValues(c.m * c.k, seed * 7 + 1, Data(data));
        auto b = randomValues(c.k * c.n, seed * 7 + 2,
                              Data(data == int(Data::Cancelling) ? int(Data::Uniform) : data));
        if (Data(data) == Data::Cancelling)
            for (auto& v : b) v = 1.0f + 0.001f * v;  // sum a_ik b_kj nearly cancels
        const auto in = gemmInputs(c, DType::Float32, a, b);
        const OpParams p{{"out_dtype", std::string(dtypeName(out))}};
        const HostTensor golden = mustRun(in, p);
        const Result<std::vector<double>> bound = goldenErrorBound("gemm", in, p, golden);
        QVERIFY2(bound.ok(), bound.ok() ? "" : bound.message().c_str());
        for (const auto& [name, reducer] :
             std::vector<std::pair<const char*, Reducer>>{{"exact", exactDouble},
                                                          {"descending", descendingChain},
                                                          {"unfused", unfusedFloat},
                                                          {"pairwise", pairwiseFloat},
                                                          {"split-k 4", splitK4}}) {
            std::vector<double> cand = reference(c, a, b, reducer);
            if (out != DType::Float32)  // the other implementation rounds to the output too
                for (auto& v : cand) v = double(bf16ToFloat(doubleToBf16(v)));
            const BoundCheck r = check(cand, golden, *bound);
            QVERIFY2(r.violations == 0, qPrintable(QString(name) + ": " + describe(r, cand, golden, *bound)));
        }
        // The bound is not vacuous: typical errors use a small part of it.
        const auto exact = reference(c, a, b, exactDouble);
        QVERIFY(check(exact, golden, *bound).worstRatio < 0.5);
    }

    void tf32Allowance()
    {
        const Case c{{}, {}, 16, 16, 256};
        const auto a = randomValues(c.m * c.k, 51), b = randomValues(c.k * c.n, 52);
        const auto in = gemmInputs(c, DType::Float32, a, b);
        const HostTensor golden = mustRun(in, {});
        const auto cand = reference(c, a, b, tf32Chain);
        BoundOptions strict;
        BoundOptions tf32;
        tf32.tf32 = true;
        const auto strictBound = goldenErrorBound("gemm", in, {}, golden, strict);
        const auto tf32Bound = goldenErrorBound("gemm", in, {}, golden, tf32);
        QVERIFY(strictBound.ok() && tf32Bound.ok());
        QVERIFY(check(cand, golden, *strictBound).violations > 0);  // TF32 error is far above float's
        const BoundCheck r = check(cand, golden, *tf32Bound);
        QVERIFY2(r.violations == 0, qPrintable(describe(r, cand, golden, *tf32Bound)));
    }

    void corruptionOutsideBound_data()
    {
        QTest::addColumn<int>("corruption");
        QTest::newRow("sign flip") << int(Corruption::SignFlip);
        QTest::newRow("exponent bit 23 flip") << int(Corruption::ExponentBitFlip);
        QTest::newRow("mantissa bit 22 flip") << int(Corruption::HighMantissaFlip);
        QTest::newRow("stuck bit 20") << int(Corruption::StuckBit20);
    }
    void corruptionOutsideBound()
    {
        QFETCH(int, corruption);
        for (int k : {64, 1024}) {
            const Case c{{}, {}, 48, 48, uint64_t(k)};
            const auto a = randomValues(c.m * c.k, 61 + uint32_t(k)), b = randomValues(c.k * c.n, 62);
            const auto in = gemmInputs(c, DType::Float32, a, b);
            const HostTensor golden = mustRun(in, {});
            const auto bound = goldenErrorBound("gemm", in, {}, golden);
            QVERIFY(bound.ok());
            const double caught = detectedFraction(golden, *bound, Corruption(corruption));
            QVERIFY2(caught >= 0.95, qPrintable(QStringLiteral("k=%1: only %2 caught").arg(k).arg(caught)));
        }
    }

    // The same for bf16 outputs: one bf16 ulp is allowed, a sign or exponent flip is not.
    void corruptionOutsideBoundBf16()
    {
        const Case c{{}, {}, 32, 32, 128};
        const auto a = representable(DType::BFloat16, randomValues(c.m * c.k, 71));
        const auto b = representable(DType::BFloat16, randomValues(c.k * c.n, 72));
        const auto in = gemmInputs(c, DType::BFloat16, a, b);
        const HostTensor golden = mustRun(in, {});
        const auto bound = goldenErrorBound("gemm", in, {}, golden);
        QVERIFY(bound.ok());
        const auto g = doubles(golden);
        size_t flagged = 0, total = 0;
        for (size_t e = 0; e < g.size(); ++e) {
            if (g[e] == 0) continue;
            ++total;
            const double flipped =
                double(bf16ToFloat(uint16_t(doubleToBf16(g[e]) ^ 0x0080u)));  // exponent lsb
            if (std::fabs(flipped - g[e]) > (*bound)[e] && std::fabs(-g[e] - g[e]) > (*bound)[e]) ++flagged;
            // and one bf16 ulp away is inside
            const double next = double(bf16ToFloat(uint16_t(doubleToBf16(g[e]) + 1)));
            QVERIFY(std::fabs(next - g[e]) <= (*bound)[e]);
        }
        QVERIFY(double(flagged) >= 0.95 * double(total));
    }
};

QTEST_APPLESS_MAIN(TestGoldenGemm)
#include "test_golden_gemm.moc"
