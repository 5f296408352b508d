// The numbers of one tensor comparison (core/compare/TensorComparer.h) against a naive,
// element-by-element reference analysis written in test_compare_helpers.h: mismatch counts,
// exact bit histograms, ulp histograms, NaN/Inf accounting, first mismatch, region, top-K,
// error statistics, for every float format and some integer ones, across chunk sizes and
// thread counts.
#include <QtTest>

#include "core/compare/Tolerance.h"
#include "test_compare_helpers.h"

using faultline::DType;
using namespace fltest;

Q_DECLARE_METATYPE(faultline::DType)

class TestCompareStats : public QObject {
    Q_OBJECT

private slots:
    void againstNaive_data();
    void againstNaive();
    void threadCountDoesNotMatter();
    void identicalTensors();
    void emptyAndScalar();
    void nanAccounting();
    void finitePairsAndMeans();
    void decadeHistogramEdges();
    void suspectNonFiniteEqualElements();
    void misalignedBuffers();
};

void TestCompareStats::againstNaive_data()
{
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<QList<quint64>>("shape");
    QTest::addColumn<QString>("tolerance");
    QTest::addColumn<double>("noise");
    QTest::addColumn<int>("corrupt");
    QTest::addColumn<int>("specials");
    QTest::addColumn<quint64>("chunk");
    QTest::addColumn<unsigned>("threads");

    using L = QList<quint64>;
    QTest::newRow("f32 exact") << DType::Float32 << L{97, 131} << "exact" << 0.3 << 40 << 12 << quint64(1000)
                               << 3u;
    QTest::newRow("f32 ulp:1") << DType::Float32 << L{64, 64} << "ulp:1" << 0.3 << 40 << 12 << quint64(4096)
                               << 1u;
    QTest::newRow("f32 abs") << DType::Float32 << L{8, 16, 33} << "abs:1e-6" << 0.2 << 30 << 5 << quint64(777)
                             << 4u;
    QTest::newRow("f32 rel") << DType::Float32 << L{5000} << "rel:1e-7" << 0.2 << 30 << 5 << quint64(1024)
                             << 2u;
    QTest::newRow("bf16 ulp:2") << DType::BFloat16 << L{70, 90} << "ulp:2" << 0.3 << 50 << 10 << quint64(512)
                                << 3u;
    QTest::newRow("f16 exact") << DType::Float16 << L{3, 40, 41} << "exact" << 0.3 << 50 << 10
                               << quint64(1 << 20) << 1u;
    QTest::newRow("e4m3 ulp:1") << DType::Float8E4M3FN << L{50, 50} << "ulp:1" << 0.2 << 60 << 8
                                << quint64(300) << 2u;
    QTest::newRow("e5m2 exact") << DType::Float8E5M2 << L{33, 65} << "exact" << 0.2 << 60 << 8 << quint64(256)
                                << 2u;
    QTest::newRow("f64 abs") << DType::Float64 << L{40, 50} << "abs:1e-15" << 0.3 << 30 << 8 << quint64(999)
                             << 4u;
    QTest::newRow("int32 ulp:3") << DType::Int32 << L{60, 61} << "ulp:3" << 0.3 << 30 << 0 << quint64(500)
                                 << 2u;
    QTest::newRow("int8 exact") << DType::Int8 << L{100, 10} << "exact" << 0.1 << 30 << 0 << quint64(128)
                                << 2u;
    QTest::newRow("uint16 abs") << DType::UInt16 << L{1000} << "abs:1" << 0.2 << 30 << 0 << quint64(100)
                                << 2u;
    QTest::newRow("int64 exact") << DType::Int64 << L{20, 20} << "exact" << 0.1 << 30 << 0 << quint64(64)
                                 << 2u;
    QTest::newRow("1 column") << DType::Float32 << L{3000, 1} << "ulp:1" << 0.3 << 30 << 4 << quint64(256)
                              << 2u;
}

void TestCompareStats::againstNaive()
{
    QFETCH(DType, dtype);
    QFETCH(QList<quint64>, shape);
    QFETCH(QString, tolerance);
    QFETCH(double, noise);
    QFETCH(int, corrupt);
    QFETCH(int, specials);
    QFETCH(quint64, chunk);
    QFETCH(unsigned, threads);

    const std::vector<uint64_t> dims(shape.begin(), shape.end());
    Tensor ref = randomTensor(dtype, dims, 11);
    Tensor sus = ref;
    if (faultline::isFloatingPoint(dtype)) {
        addRoundingNoise(sus, noise, 12);
    } else {
        std::mt19937_64 rng(12);
        for (auto& b : sus.bits)
            if (double(rng() % 1000) < noise * 1000) b = (b + 1 + rng() % 3) & maskOf(dtype);
    }
    std::mt19937_64 rng(13);
    const size_t n = sus.bits.size();
    for (int i = 0; i < corrupt; ++i) {
        const size_t at = rng() % n;
        uint64_t mask = rng() & maskOf(dtype);
        if (mask == 0) mask = 1;
        sus.bits[at] ^= mask;
    }
    if (faultline::isFloatingPoint(dtype)) {
        const uint64_t nan = encode(dtype, std::nan("")), inf = encode(dtype, INFINITY);
        for (int i = 0; i < specials; ++i) {
            const size_t at = rng() % n;
            switch (i % 5) {
                case 0:
                    sus.bits[at] = nan;
                    break;  // NaN introduced
                case 1:
                    ref.bits[at] = nan;
                    break;  // NaN removed
                case 2:
                    sus.bits[at] = inf;
                    break;  // Inf introduced (e4m3: NaN)
                case 3:
                    ref.bits[at] = encode(dtype, -INFINITY);
                    break;  // Inf removed
                case 4:     // ±0
                    ref.bits[at] = 0;
                    sus.bits[at] = uint64_t(1) << (widthOf(dtype) - 1);
                    break;
            }
        }
    }

    auto tol = faultline::parseTolerance(tolerance.toStdString());
    QVERIFY2(tol.ok(), tol.ok() ? "" : tol.message().c_str());
    const faultline::Tolerance t = *tol;
    auto within = [&](size_t, double s, double r, uint64_t ulp, double err) {
        switch (t.kind) {
            case faultline::ToleranceKind::Exact:
                return false;
            case faultline::ToleranceKind::Ulp:
                return ulp <= t.ulps;
            case faultline::ToleranceKind::Abs:
                return err <= t.value;
            case faultline::ToleranceKind::Rel:
                return err <= t.value * std::fabs(r);
            default:
                return s == r;
        }
    };
    const Naive nv = naiveAnalysis(sus, ref, within, t.kind == faultline::ToleranceKind::Exact);
    QVERIFY(nv.mismatches > 0);

    faultline::CompareOptions opt;
    opt.tolerance = t;
    opt.chunkElements = chunk;
    opt.threads = threads;
    auto res = compare(sus, ref, opt);
    QVERIFY2(res.ok(), res.ok() ? "" : res.message().c_str());
    const faultline::Divergence& d = *res;

    QCOMPARE(d.elements, uint64_t(n));
    QCOMPARE(d.mismatches, nv.mismatches);
    QCOMPARE(d.beyondTolerance, nv.beyond);
    QCOMPARE(d.nanIntroduced, nv.nanIntroduced);
    QCOMPARE(d.nanRemoved, nv.nanRemoved);
    QCOMPARE(d.infIntroduced, nv.infIntroduced);
    QCOMPARE(d.infRemoved, nv.infRemoved);
    QVERIFY(d.firstMismatch.has_value());
    QCOMPARE(int64_t(*d.firstMismatch), nv.firstMismatch);
    QCOMPARE(d.bits.flips, nv.bits);
    QCOMPARE(d.bits.toOne, nv.toOne);
    QCOMPARE(std::vector<uint64_t>(d.ulpHistogram.begin(), d.ulpHistogram.end()), nv.ulpHist);
    QCOMPARE(d.maxUlp, nv.maxUlp);
    QCOMPARE(d.absError.max, nv.maxAbs);
    QCOMPARE(d.finitePairs, nv.finitePairs);
    if (nv.finitePairs > 0) {
        const double mean = nv.sumAbs / double(nv.finitePairs);
        QVERIFY2(std::fabs(d.absError.mean - mean) <= 1e-12 * std::max(1e-300, std::fabs(mean)) ||
                     d.absError.mean == mean,
                 qPrintable(QString("mean %1 vs %2").arg(d.absError.mean).arg(mean)));
    }
    QVERIFY(d.region.has_value());
    QCOMPARE(d.region->rowBegin, nv.r0);
    QCOMPARE(d.region->rowEnd, nv.r1);
    QCOMPARE(d.region->colBegin, nv.c0);
    QCOMPARE(d.region->colEnd, nv.c1);
    QCOMPARE(d.rows * d.cols, uint64_t(n));
    QCOMPARE(d.cols, dims.back());

    // Top-K: the naive ranking's first 16, in order, with their values and bits.
    QCOMPARE(d.top.size(), std::min<size_t>(16, nv.all.size()));
    for (size_t i = 0; i < d.top.size(); ++i) {
        const auto& e = d.top[i];
        QCOMPARE(e.index, nv.all[i].index);
        QCOMPARE(e.suspectBits, sus.bits[e.index]);
        QCOMPARE(e.referenceBits, ref.bits[e.index]);
        QCOMPARE(e.row, e.index / d.cols);
        QCOMPARE(e.col, e.index % d.cols);
        QCOMPARE(e.nonFinite, nv.all[i].nonFinite);
        if (!e.nonFinite) {
            QCOMPARE(e.ulp, nv.all[i].ulp);
            QCOMPARE(e.absError, nv.all[i].absErr);
            QCOMPARE(e.suspect, decode(dtype, sus.bits[e.index]));
            QCOMPARE(e.reference, decode(dtype, ref.bits[e.index]));
        }
    }
    // Histogram totals agree with the counts.
    uint64_t ulpTotal = 0;
    for (uint64_t v : d.ulpHistogram) ulpTotal += v;
    QCOMPARE(ulpTotal + d.nonFiniteMismatches, d.mismatches);
    QCOMPARE(d.absError.histogram.total(), d.mismatches - d.nonFiniteMismatches);
    // Tile level 0 sums to the totals, and the coarsest level is one tile holding everything.
    const auto& levels = d.tiles.levels();
    QVERIFY(!levels.empty());
    uint64_t tileSum = 0, beyondSum = 0;
    for (uint64_t v : levels.front().mismatches) tileSum += v;
    for (uint64_t v : levels.front().beyond) beyondSum += v;
    QCOMPARE(tileSum, d.mismatches);
    QCOMPARE(beyondSum, d.beyondTolerance);
    QCOMPARE(levels.back().tileCount(), uint64_t(1));
    QCOMPARE(levels.back().mismatches.front(), d.mismatches);
}

void TestCompareStats::threadCountDoesNotMatter()
{
    Tensor ref = randomTensor(DType::Float32, {300, 257}, 5);
    Tensor sus = ref;
    addRoundingNoise(sus, 0.3, 6);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 500; ++i) sus.bits[rng() % sus.bits.size()] ^= uint64_t(1) << (rng() % 32);
    faultline::CompareOptions opt;
    opt.chunkElements = 1000;
    opt.sampleSize = 100;  // so that the bounded selections are exercised
    opt.tolerance = faultline::Tolerance::ulp(2);
    opt.threads = 1;
    auto one = compare(sus, ref, opt);
    opt.threads = 4;
    auto four = compare(sus, ref, opt);
    QVERIFY(one.ok() && four.ok());
    const auto& a = *one;
    const auto& b = *four;
    QCOMPARE(a.mismatches, b.mismatches);
    QCOMPARE(a.absError.mean, b.absError.mean);  // bit-identical: chunk-ordered sums
    QCOMPARE(a.absError.rms, b.absError.rms);
    QCOMPARE(a.relError.mean, b.relError.mean);
    QCOMPARE(a.top.size(), b.top.size());
    for (size_t i = 0; i < a.top.size(); ++i) {
        QCOMPARE(a.top[i].index, b.top[i].index);
        QCOMPARE(a.top[i].suspectBits, b.top[i].suspectBits);
        QCOMPARE(a.top[i].ulp, b.top[i].ulp);
    }
    QCOMPARE(a.spatial.firstIndices, b.spatial.firstIndices);
    QCOMPARE(a.spatial.spreadSample, b.spatial.spreadSample);
    QCOMPARE(a.spatial.firstIndices.size(), size_t(100));
    QCOMPARE(a.spatial.spreadSample.size(), size_t(100));
    QCOMPARE(a.spatial.rowCounts, b.spatial.rowCounts);
    QCOMPARE(a.tiles.levels().front().maxAbsError, b.tiles.levels().front().maxAbsError);
    QCOMPARE(a.signature.detail, b.signature.detail);
    // The first indices really are the first anomalies.
    std::vector<uint64_t> expected;
    for (size_t i = 0; i < sus.bits.size() && expected.size() < 100; ++i)
        if (sus.bits[i] != ref.bits[i] && naiveUlp(DType::Float32, sus.bits[i], ref.bits[i]) > 2)
            expected.push_back(i);
    QCOMPARE(a.spatial.firstIndices, expected);
}

void TestCompareStats::identicalTensors()
{
    Tensor ref = randomTensor(DType::BFloat16, {128, 128}, 1);
    auto res = compare(ref, ref);
    QVERIFY(res.ok());
    QCOMPARE(res->mismatches, uint64_t(0));
    QVERIFY(!res->region.has_value());
    QVERIFY(!res->firstMismatch.has_value());
    QVERIFY(res->top.empty());
    QVERIFY(!res->tiles.hasCounts());
    QCOMPARE(res->absError.mean, 0.0);
    QCOMPARE(res->finitePairs, uint64_t(128 * 128));
    QCOMPARE(res->bits.flips.size(), size_t(16));
}

void TestCompareStats::emptyAndScalar()
{
    Tensor empty;
    empty.dtype = DType::Float32;
    empty.shape = {0, 7};
    auto e = compare(empty, empty);
    QVERIFY(e.ok());
    QCOMPARE(e->elements, uint64_t(0));
    QCOMPARE(e->mismatches, uint64_t(0));

    Tensor a;
    a.dtype = DType::Float32;
    a.bits = {encode(DType::Float32, 1.0)};
    Tensor b = a;
    b.bits[0] = encode(DType::Float32, 2.0);
    auto s = compare(a, b);
    QVERIFY(s.ok());
    QCOMPARE(s->rows, uint64_t(1));
    QCOMPARE(s->cols, uint64_t(1));
    QCOMPARE(s->mismatches, uint64_t(1));
    QCOMPARE(s->absError.max, 1.0);
    QCOMPARE(s->relError.max, 0.5);
    QVERIFY(s->region == (faultline::Region{0, 1, 0, 1}));
    QCOMPARE(s->ulpHistogram[24], uint64_t(1));  // 1.0 -> 2.0 is 2^23 ulp: bin 24 = [2^23, 2^24)
}

void TestCompareStats::nanAccounting()
{
    // float32 pairs written out by hand: suspect, reference.
    const std::vector<std::pair<uint32_t, uint32_t>> pairs = {
        {0x7fc00000, 0x3f800000},  // NaN introduced
        {0x3f800000, 0xffc00000},  // NaN removed
        {0x7f800000, 0x3f800000},  // +Inf introduced
        {0x3f800000, 0xff800000},  // -Inf removed
        {0x7f800000, 0xff800000},  // inf sign changed
        {0x7fc00001, 0x7fc00000},  // NaN payload changed
        {0x7fc00000, 0x7fc00000},  // identical NaN: equal
        {0x7f800000, 0x7fc00000},  // Inf introduced and NaN removed
        {0x00000000, 0x80000000},  // ±0: 0 ulp
    };
    Tensor s, r;
    s.dtype = r.dtype = DType::Float32;
    s.shape = r.shape = {pairs.size()};
    for (auto [a, b] : pairs) {
        s.bits.push_back(a);
        r.bits.push_back(b);
    }
    for (const char* tol : {"exact", "ulp:4"}) {
        faultline::CompareOptions opt;
        opt.tolerance = *faultline::parseTolerance(tol);
        auto res = compare(s, r, opt);
        QVERIFY(res.ok());
        const auto& d = *res;
        QCOMPARE(d.mismatches, uint64_t(8));
        QCOMPARE(d.nanIntroduced, uint64_t(1));
        QCOMPARE(d.nanRemoved, uint64_t(2));
        QCOMPARE(d.infIntroduced, uint64_t(2));
        QCOMPARE(d.infRemoved, uint64_t(1));
        QCOMPARE(d.infSignChanged, uint64_t(1));
        QCOMPARE(d.nanPayloadChanged, uint64_t(1));
        QCOMPARE(d.nonFiniteMismatches, uint64_t(7));
        QCOMPARE(d.ulpHistogram[0], uint64_t(1));
        QCOMPARE(d.finitePairs, uint64_t(1));
        const bool exact = std::string(tol) == "exact";
        // exact: every mismatch is beyond; ulp:4: ±0 and the NaN payload change are within.
        QCOMPARE(d.beyondTolerance, uint64_t(exact ? 8 : 6));
        // NaN/Inf first in top-K, by index.
        QCOMPARE(d.top.front().index, uint64_t(0));
        QVERIFY(d.top.front().nonFinite);
        QCOMPARE(d.top.back().index, uint64_t(8));
        QVERIFY(!d.top.back().nonFinite);
        QCOMPARE(d.signature.kind, faultline::SignatureKind::NanInf);
    }
}

void TestCompareStats::finitePairsAndMeans()
{
    // 4 elements: one NaN on both sides (equal), one 1.0 vs 1.5, one 2.0 vs 2.0, one 0 vs 0.25.
    Tensor s, r;
    s.dtype = r.dtype = DType::Float32;
    s.shape = r.shape = {4};
    s.bits = {0x7fc00000, encode(DType::Float32, 1.5), encode(DType::Float32, 2.0),
              encode(DType::Float32, 0.25)};
    r.bits = {0x7fc00000, encode(DType::Float32, 1.0), encode(DType::Float32, 2.0), 0};
    auto res = compare(s, r);
    QVERIFY(res.ok());
    QCOMPARE(res->finitePairs, uint64_t(3));
    QCOMPARE(res->absError.mean, (0.5 + 0.25) / 3.0);
    QCOMPARE(res->absError.rms, std::sqrt((0.25 + 0.0625) / 3.0));
    QCOMPARE(res->relInfinite, uint64_t(1));  // 0.25 vs 0
    QCOMPARE(res->relError.count, uint64_t(2));
    QCOMPARE(res->relError.mean, 0.5 / 2.0);
    QVERIFY(std::isinf(res->relError.max));  // 0.25 vs 0
    QCOMPARE(res->relError.histogram.total(), uint64_t(1));
}

void TestCompareStats::decadeHistogramEdges()
{
    faultline::DecadeHistogram h;
    h.add(0.0);
    h.add(1.0);     // decade 0
    h.add(9.999);   // decade 0
    h.add(10.0);    // decade 1
    h.add(0.1);     // decade -1 (0.1 as a double is just above 1/10)
    h.add(1e-300);  // below: first bin
    h.add(1e300);   // above: last bin
    h.add(INFINITY);
    h.add(std::nan(""));  // ignored
    QCOMPARE(h.zero, uint64_t(1));
    QCOMPARE(h.infinite, uint64_t(1));
    auto bin = [](int decade) { return size_t(decade - faultline::DecadeHistogram::kMinDecade); };
    QCOMPARE(h.decades[bin(0)], uint64_t(2));
    QCOMPARE(h.decades[bin(1)], uint64_t(1));
    QCOMPARE(h.decades[bin(-1)], uint64_t(1));
    QCOMPARE(h.decades[0], uint64_t(1));
    QCOMPARE(h.decades[h.decades.size() - 1], uint64_t(1));
    QCOMPARE(h.total(), uint64_t(8));
    for (int d = -44; d <= 37; ++d) {  // every decade boundary lands in its own decade
        faultline::DecadeHistogram one;
        one.add(std::strtod(("1e" + std::to_string(d)).c_str(), nullptr));
        QCOMPARE(one.decades[bin(d)], uint64_t(1));
    }
}

void TestCompareStats::suspectNonFiniteEqualElements()
{
    // Equal infinities are not mismatches and are not finite pairs.
    Tensor s;
    s.dtype = DType::BFloat16;
    s.shape = {200};
    for (int i = 0; i < 200; ++i) s.bits.push_back(i % 10 == 0 ? 0x7f80 : encode(DType::BFloat16, 1.0 + i));
    auto res = compare(s, s);
    QVERIFY(res.ok());
    QCOMPARE(res->mismatches, uint64_t(0));
    QCOMPARE(res->finitePairs, uint64_t(180));
}

void TestCompareStats::misalignedBuffers()
{
    Tensor ref = randomTensor(DType::Float64, {33, 20}, 3);
    Tensor sus = ref;
    addRoundingNoise(sus, 0.5, 4);
    const std::vector<std::byte> ps = pack(sus), pr = pack(ref);
    std::vector<std::byte> bs(ps.size() + 1), br(pr.size() + 3);
    std::memcpy(bs.data() + 1, ps.data(), ps.size());
    std::memcpy(br.data() + 3, pr.data(), pr.size());
    faultline::CompareOptions o;
    o.chunkElements = 100;
    faultline::TensorComparer c(o);
    auto aligned = c.compare(DType::Float64, sus.shape, ps.data(), pr.data());
    auto shifted = c.compare(DType::Float64, sus.shape, bs.data() + 1, br.data() + 3);
    QVERIFY(aligned.ok() && shifted.ok());
    QVERIFY(aligned->mismatches > 0);
    QCOMPARE(shifted->mismatches, aligned->mismatches);
    QCOMPARE(shifted->bits.flips, aligned->bits.flips);
    QCOMPARE(shifted->absError.mean, aligned->absError.mean);
}

QTEST_APPLESS_MAIN(TestCompareStats)
#include "test_compare_stats.moc"
