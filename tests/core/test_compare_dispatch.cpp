// The vector path of the compare engine (core/compare/MismatchMath.h, Highway with run-time
// dispatch) against the scalar path: the full comparison results (every statistic, the whole
// JSON with tiles and spatial profiles) must be identical on every instruction set this CPU has,
// on the portable scalar target (EMU128/SCALAR), and for 1, 2 and 3 threads, on planted float32,
// bfloat16 and float16 data with NaN/Inf, zeros, subnormals, random bit flips and odd shapes. The block
// arithmetic itself is also checked lane by lane against a naive computation.
#include <QtTest>

#include <array>
#include <bit>
#include <cmath>
#include <random>

#include "core/compare/CompareJson.h"
#include "core/compare/MismatchMath.h"
#include "core/compare/Tolerance.h"
#include "test_compare_helpers.h"

using faultline::DType;
using namespace fltest;

Q_DECLARE_METATYPE(faultline::DType)

namespace {

// Random bits of `dtype` over the whole finite range (every exponent, subnormals, both zeros),
// then: 30 % of elements moved by a few ulps, 2 % with one random bit flipped (sign, exponent or
// mantissa), some reference zeros against non-zero suspects, and NaN/Inf on both sides.
void plantedPair(DType dtype, std::vector<uint64_t> shape, uint64_t seed, Tensor& sus, Tensor& ref)
{
    ref = zeroTensor(dtype, std::move(shape));
    const unsigned width = widthOf(dtype);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& b : ref.bits) {
        do {
            b = rng() & maskOf(dtype);
        } while (isNonFinite(dtype, b));
        if (u(rng) < 0.02) b &= uint64_t(1) << (width - 1);  // ±0
    }
    sus = ref;
    addRoundingNoise(sus, 0.3, seed + 1, 3);
    for (size_t i = 0; i < sus.bits.size(); ++i) {
        const double p = u(rng);
        if (p < 0.02) {
            sus.bits[i] ^= uint64_t(1) << (rng() % width);
        } else if (p < 0.025) {
            ref.bits[i] &= uint64_t(1) << (width - 1);  // reference ±0: infinite relative error
        } else if (p < 0.0265) {
            const uint64_t e = maskOf(dtype) >> 1 & ~(maskOf(dtype) >> (dtype == DType::Float16 ? 6 : 9));
            // All-ones exponent: Inf (mantissa 0) or NaN, in the suspect or the reference.
            const uint64_t special = e | ((rng() & 1) ? 1u : 0u);
            ((rng() & 1) ? sus : ref).bits[i] = special;
        }
    }
}

// Values like a layer's weights (normal, sigma 0.02, from float), 30 % of them (or `fraction`)
// 1-3 ulps apart, and 0.1 % with one random bit flipped: an incident's typical pair.
void weightsPair(DType dtype, std::vector<uint64_t> shape, uint64_t seed, Tensor& sus, Tensor& ref,
                 double fraction = 0.3)
{
    ref = zeroTensor(dtype, std::move(shape));
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& b : ref.bits) b = encode(dtype, double(normal(rng)));
    sus = ref;
    addRoundingNoise(sus, fraction, seed + 1, 3);
    for (auto& b : sus.bits)
        if (u(rng) < 0.001) b ^= uint64_t(1) << (rng() % widthOf(dtype));
}

std::string fullJson(const faultline::Divergence& d)
{
    faultline::CompareJsonOptions all;
    all.tiles = true;
    all.spatial = true;
    return faultline::divergenceToJson(d, all).dump();
}

}  // namespace

class TestCompareDispatch : public QObject {
    Q_OBJECT

private slots:
    void cleanup() { faultline::restrictMismatchMathTargets(0); }
    void targetsAvailable();
    void sameResultsEverywhere_data();
    void sameResultsEverywhere();
    void blockArithmeticPerLane_data();
    void blockArithmeticPerLane();
};

void TestCompareDispatch::targetsAvailable()
{
    const std::vector<int64_t> targets = faultline::mismatchMathTargets();
    QVERIFY2(targets.size() >= 2, "expected the emulated target and at least one x86 vector target");
    bool emulated = false;
    for (int64_t t : targets) {
        faultline::restrictMismatchMathTargets(t);
        QCOMPARE(faultline::mismatchMathActiveTarget(), t);  // the dispatch really switches
        qInfo("Highway target %s", faultline::mismatchMathTargetName(t).c_str());
        const std::string name = faultline::mismatchMathTargetName(t);
        emulated |= name == "EMU128" || name == "SCALAR";  // SCALAR where the compiler breaks EMU128 (GCC 12)
    }
    QVERIFY2(emulated, "the emulated Highway target (EMU128 or SCALAR) is compiled in");
}

void TestCompareDispatch::sameResultsEverywhere_data()
{
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<QString>("tolerance");
    QTest::addColumn<quint64>("rows");
    QTest::addColumn<quint64>("cols");
    QTest::newRow("float32 exact 131x197") << DType::Float32 << "exact" << quint64(131) << quint64(197);
    QTest::newRow("float32 ulp:2 64x256") << DType::Float32 << "ulp:2" << quint64(64) << quint64(256);
    QTest::newRow("float32 rel 1x5003") << DType::Float32 << "rel:1e-6" << quint64(1) << quint64(5003);
    QTest::newRow("bfloat16 exact 97x333") << DType::BFloat16 << "exact" << quint64(97) << quint64(333);
    QTest::newRow("bfloat16 abs 128x128") << DType::BFloat16 << "abs:1e-3" << quint64(128) << quint64(128);
    QTest::newRow("float16 exact 77x129") << DType::Float16 << "exact" << quint64(77) << quint64(129);
    QTest::newRow("float16 ulp:1 3x4099") << DType::Float16 << "ulp:1" << quint64(3) << quint64(4099);
    // Weights-like values a few ulps apart: most blocks then have their mismatches in one ulp bin
    // and one relative decade, and none is an anomaly, so the per-block shortcuts are taken.
    QTest::newRow("float32 exact weights 96x520") << DType::Float32 << "exact" << quint64(96) << quint64(520);
    QTest::newRow("bfloat16 exact weights 40x4096")
        << DType::BFloat16 << "exact" << quint64(40) << quint64(4096);
    QTest::newRow("float16 ulp:1 weights 33x1000")
        << DType::Float16 << "ulp:1" << quint64(33) << quint64(1000);
    // Tiles other than 16 columns wide: a tile part of several 16-column groups (64), tiles
    // that do not start on a group (40), and a tile wider than the four blocks the kernel takes
    // at once (512).
    QTest::newRow("float32 exact weights 40x2100 tiles 64")
        << DType::Float32 << "exact" << quint64(40) << quint64(2100);
    // Few mismatches: most 16-column groups of a 64-column tile have none.
    QTest::newRow("float32 exact sparse weights 64x1500 tiles 64")
        << DType::Float32 << "exact" << quint64(64) << quint64(1500);
    QTest::newRow("bfloat16 ulp:1 37x999 tiles 40")
        << DType::BFloat16 << "ulp:1" << quint64(37) << quint64(999);
    QTest::newRow("float16 exact weights 9x3000 tiles 512")
        << DType::Float16 << "exact" << quint64(9) << quint64(3000);
}

void TestCompareDispatch::sameResultsEverywhere()
{
    QFETCH(DType, dtype);
    QFETCH(QString, tolerance);
    QFETCH(quint64, rows);
    QFETCH(quint64, cols);
    const bool weights = QByteArray(QTest::currentDataTag()).contains("weights");
    const bool sparse = QByteArray(QTest::currentDataTag()).contains("sparse");
    Tensor sus, ref;
    if (weights)
        weightsPair(dtype, {rows, cols}, rows * 1000 + cols, sus, ref, sparse ? 0.02 : 0.3);
    else
        plantedPair(dtype, {rows, cols}, rows * 1000 + cols, sus, ref);
    auto tol = faultline::parseTolerance(tolerance.toStdString());
    QVERIFY2(tol.ok(), tolerance.toUtf8().constData());

    faultline::CompareOptions opt;
    opt.tolerance = *tol;
    const QByteArray tag = QTest::currentDataTag();
    if (const qsizetype at = tag.indexOf(" tiles "); at >= 0)
        opt.tiles.baseTileCols = tag.mid(at + 7).toUInt();
    opt.chunkElements = 3000;  // several chunks, boundaries inside rows and blocks
    opt.sampleSize = 50;
    opt.threads = 1;
    opt.vectorMath = false;
    auto scalar = compare(sus, ref, opt);
    QVERIFY(scalar.ok());
    QVERIFY(scalar->mismatches > rows * cols / (sparse ? 100 : 5));
    if (!weights) {
        QVERIFY(scalar->nanIntroduced + scalar->nanRemoved + scalar->infIntroduced + scalar->infRemoved > 0);
        QVERIFY(scalar->relInfinite > 0);
    }
    const std::string expected = fullJson(*scalar);

    opt.vectorMath = true;
    for (int64_t target : faultline::mismatchMathTargets()) {
        faultline::restrictMismatchMathTargets(target);
        QCOMPARE(faultline::mismatchMathActiveTarget(), target);
        for (unsigned threads : {1u, 2u, 3u}) {
            opt.threads = threads;
            auto vec = compare(sus, ref, opt);
            QVERIFY(vec.ok());
            const QByteArray where = QByteArray::fromStdString(faultline::mismatchMathTargetName(target)) +
                                     ", " + QByteArray::number(threads) + " threads";
            QVERIFY2(vec->absError.mean == scalar->absError.mean, where.constData());
            QVERIFY2(vec->relError.rms == scalar->relError.rms, where.constData());
            QVERIFY2(fullJson(*vec) == expected, where.constData());
        }
    }
}

void TestCompareDispatch::blockArithmeticPerLane_data()
{
    QTest::addColumn<DType>("dtype");
    QTest::newRow("float32") << DType::Float32;
    QTest::newRow("bfloat16") << DType::BFloat16;
    QTest::newRow("float16") << DType::Float16;
}

void TestCompareDispatch::blockArithmeticPerLane()
{
    QFETCH(DType, dtype);
    const faultline::MismatchFloat kind = dtype == DType::Float32    ? faultline::MismatchFloat::Float32
                                          : dtype == DType::BFloat16 ? faultline::MismatchFloat::BFloat16
                                                                     : faultline::MismatchFloat::Float16;
    const unsigned size = faultline::dtypeSize(dtype);
    const faultline::DecadeSlots& decades = faultline::DecadeSlots::table();
    unsigned binnedBlocks = 0;
    for (int64_t target : faultline::mismatchMathTargets()) {
        faultline::restrictMismatchMathTargets(target);
        const QByteArray name = QByteArray::fromStdString(faultline::mismatchMathTargetName(target));
        binnedBlocks = 0;
        for (uint64_t seed = 1; seed <= 80; ++seed) {
            // 1 to 4 blocks of 64 elements in one call.
            const unsigned blocks = unsigned(1 + seed % faultline::BlockErrors::kMaxBlocks);
            const uint64_t n = 64 * blocks;
            Tensor sus, ref;
            if (seed <= 40)
                plantedPair(dtype, {n}, seed, sus, ref);  // every exponent: wide spans
            else
                weightsPair(dtype, {n}, seed, sus, ref);  // a few decades: binned by the kernel
            const std::vector<std::byte> ps = pack(sus), pr = pack(ref);
            bool finite = true;
            for (size_t k = 0; k < n; ++k)
                finite &= !isNonFinite(dtype, sus.bits[k]) && !isNonFinite(dtype, ref.bits[k]);
            faultline::BlockErrors e;
            // Deliberately misaligned by one element: the inputs may have any alignment.
            std::vector<std::byte> s1(ps.size() + size), r1(pr.size() + size);
            std::memcpy(s1.data() + size, ps.data(), ps.size());
            std::memcpy(r1.data() + size, pr.data(), pr.size());
            const bool ok =
                faultline::computeBlockErrors(kind, s1.data() + size, r1.data() + size, blocks, decades, e);
            QVERIFY2(ok == finite, name.constData());
            if (!ok) continue;
            double maxAbs = 0, maxRel = 0;
            uint64_t maxUlp = 0, relInf = 0;
            double minAbs = INFINITY, minRel = INFINITY;
            uint64_t minUlp = ~uint64_t(0);
            std::array<uint32_t, faultline::BlockErrors::kMaxElements / 16 + 1> groupStart{};
            std::array<uint32_t, faultline::kDecadeSlots> absSlots{}, relSlots{};
            unsigned i = 0;  // the mismatches are packed in position order
            for (size_t k = 0; k < n; ++k) {
                if (k % 16 == 0) groupStart[k / 16] = i;
                if (sus.bits[k] == ref.bits[k]) continue;
                const double sv = decode(dtype, sus.bits[k]), rv = decode(dtype, ref.bits[k]);
                const double abs = std::fabs(sv - rv);
                const double rel = rv != 0 ? abs / std::fabs(rv) : (abs == 0 ? 0.0 : INFINITY);
                const uint64_t ulp = naiveUlp(dtype, sus.bits[k], ref.bits[k]);
                const QByteArray at = name + " seed " + QByteArray::number(quint64(seed)) + " lane " +
                                      QByteArray::number(quint64(k));
                QVERIFY2(i < e.count && e.k[i] == k, at.constData());
                QVERIFY2(std::bit_cast<uint64_t>(e.absErr[i]) == std::bit_cast<uint64_t>(abs),
                         at.constData());
                QVERIFY2(e.absSq[i] == abs * abs, at.constData());
                QVERIFY2(std::bit_cast<uint64_t>(e.relErr[i]) == std::bit_cast<uint64_t>(rel),
                         at.constData());
                QVERIFY2(e.relAdd[i] == (std::isinf(rel) ? 0.0 : rel), at.constData());
                QVERIFY2(e.relSq[i] == e.relAdd[i] * e.relAdd[i], at.constData());
                QVERIFY2(e.ulp[i] == ulp, at.constData());
                QVERIFY2(e.ulpBin[i] == uint64_t(std::bit_width(ulp)), at.constData());
                ++i;
                maxAbs = std::max(maxAbs, abs);
                maxUlp = std::max(maxUlp, ulp);
                minAbs = std::min(minAbs, abs);
                minRel = std::min(minRel, rel);
                minUlp = std::min(minUlp, ulp);
                ++absSlots[decades.of(abs)];
                ++relSlots[decades.of(rel)];
                if (std::isinf(rel))
                    ++relInf;
                else
                    maxRel = std::max(maxRel, rel);
            }
            QCOMPARE(e.count, i);
            QCOMPARE(e.maxAbs, maxAbs);
            QCOMPARE(e.maxRel, maxRel);
            QCOMPARE(e.maxUlp, maxUlp);
            QCOMPARE(e.relInfinite, relInf);
            QCOMPARE(e.minAbs, i != 0 ? minAbs : 0.0);
            QCOMPARE(e.minRel, i != 0 ? minRel : 0.0);
            QCOMPARE(e.minUlp, i != 0 ? minUlp : 0);
            groupStart[n / 16] = i;
            for (size_t g = 0; g <= n / 16; ++g) QCOMPARE(e.groupStart[g], groupStart[g]);
            // Where the kernel binned the errors by decade, its counts are the per-value bins.
            auto sameBins = [](const std::array<uint32_t, faultline::kDecadeSlots>& naive, unsigned lo,
                               unsigned span, const uint32_t* counts) {
                for (unsigned s = 0; s < naive.size(); ++s) {
                    const uint32_t got = s >= lo && s < lo + span ? counts[s - lo] : 0;
                    if (got != naive[s]) return false;
                }
                return true;
            };
            if (e.absSlotSpan != 0) {
                QVERIFY2(sameBins(absSlots, e.absSlotLo, e.absSlotSpan, e.absSlotCount), name.constData());
                ++binnedBlocks;
            }
            if (e.relSlotSpan != 0) {
                QVERIFY2(sameBins(relSlots, e.relSlotLo, e.relSlotSpan, e.relSlotCount), name.constData());
                QCOMPARE(e.relInfinite, 0u);
                ++binnedBlocks;
            }
        }
        QVERIFY2(binnedBlocks > 20, name.constData());
    }
}

QTEST_APPLESS_MAIN(TestCompareDispatch)
#include "test_compare_dispatch.moc"
