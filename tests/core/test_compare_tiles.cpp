// The tile pyramid (core/compare/TilePyramid.h): geometry (level sizes, growth of the base tile
// to stay under the cap, clipped edge tiles), and per-tile counts and max |error| at every level
// against a naive count over the mismatch positions.
#include <QtTest>

#include "core/compare/TilePyramid.h"
#include "test_compare_helpers.h"

using faultline::DType;
using faultline::TileOptions;
using faultline::TilePyramid;
using namespace fltest;

class TestCompareTiles : public QObject {
    Q_OBJECT

private slots:
    void geometry_data();
    void geometry();
    void clippedEdges();
    void countsAtEveryLevel_data();
    void countsAtEveryLevel();
};

void TestCompareTiles::geometry_data()
{
    QTest::addColumn<quint64>("rows");
    QTest::addColumn<quint64>("cols");
    QTest::addColumn<unsigned>("base");
    QTest::addColumn<unsigned>("cap");
    QTest::addColumn<quint64>("tileRows");
    QTest::addColumn<quint64>("tileCols");
    QTest::addColumn<quint64>("gridRows");
    QTest::addColumn<quint64>("gridCols");
    QTest::addColumn<int>("levels");
    QTest::newRow("4096^2") << quint64(4096) << quint64(4096) << 16u << 1024u << quint64(16) << quint64(16)
                            << quint64(256) << quint64(256) << 9;
    QTest::newRow("100x300") << quint64(100) << quint64(300) << 16u << 1024u << quint64(16) << quint64(16)
                             << quint64(7) << quint64(19) << 6;
    QTest::newRow("tall, capped") << quint64(1000000) << quint64(10) << 16u << 1024u << quint64(1024)
                                  << quint64(16) << quint64(977) << quint64(1) << 11;
    QTest::newRow("vector") << quint64(1) << quint64(1u << 24) << 16u << 1024u << quint64(16)
                            << quint64(16384) << quint64(1) << quint64(1024) << 11;
    QTest::newRow("scalar") << quint64(1) << quint64(1) << 16u << 1024u << quint64(16) << quint64(16)
                            << quint64(1) << quint64(1) << 1;
    QTest::newRow("small cap") << quint64(64) << quint64(64) << 4u << 4u << quint64(16) << quint64(16)
                               << quint64(4) << quint64(4) << 3;
}

void TestCompareTiles::geometry()
{
    QFETCH(quint64, rows);
    QFETCH(quint64, cols);
    QFETCH(unsigned, base);
    QFETCH(unsigned, cap);
    QFETCH(quint64, tileRows);
    QFETCH(quint64, tileCols);
    QFETCH(quint64, gridRows);
    QFETCH(quint64, gridCols);
    QFETCH(int, levels);
    const TilePyramid p = TilePyramid::forMatrix(rows, cols, TileOptions{base, base, cap});
    QCOMPARE(int(p.levels().size()), levels);
    const auto& l0 = p.levels().front();
    QCOMPARE(quint64(l0.tileRows), tileRows);
    QCOMPARE(quint64(l0.tileCols), tileCols);
    QCOMPARE(quint64(l0.gridRows), gridRows);
    QCOMPARE(quint64(l0.gridCols), gridCols);
    QVERIFY(l0.gridRows <= cap && l0.gridCols <= cap);
    QCOMPARE(p.levels().back().tileCount(), uint64_t(1));
    for (size_t k = 1; k < p.levels().size(); ++k) {
        QCOMPARE(p.levels()[k].tileRows, 2 * p.levels()[k - 1].tileRows);
        QCOMPARE(p.levels()[k].gridRows, (p.levels()[k - 1].gridRows + 1) / 2);
    }
    QVERIFY(!p.hasCounts());
}

void TestCompareTiles::clippedEdges()
{
    const TilePyramid p = TilePyramid::forMatrix(100, 300, TileOptions{});
    QCOMPARE(p.tileElements(0, 0, 0), uint64_t(256));
    QCOMPARE(p.tileElements(0, 6, 0), uint64_t(4 * 16));   // rows 96..99
    QCOMPARE(p.tileElements(0, 6, 18), uint64_t(4 * 12));  // cols 288..299
    QCOMPARE(p.tileElements(0, 7, 0), uint64_t(0));        // outside
    uint64_t sum = 0;
    for (uint64_t r = 0; r < 7; ++r)
        for (uint64_t c = 0; c < 19; ++c) sum += p.tileElements(0, r, c);
    QCOMPARE(sum, uint64_t(100 * 300));
    QCOMPARE(p.tileElements(p.levels().size() - 1, 0, 0), uint64_t(100 * 300));
}

void TestCompareTiles::countsAtEveryLevel_data()
{
    QTest::addColumn<quint64>("rows");
    QTest::addColumn<quint64>("cols");
    QTest::addColumn<unsigned>("cap");
    QTest::addColumn<quint64>("chunk");
    QTest::newRow("odd shape") << quint64(123) << quint64(77) << 1024u << quint64(1000);
    QTest::newRow("capped base") << quint64(300) << quint64(200) << 4u << quint64(333);
    QTest::newRow("one column") << quint64(5000) << quint64(1) << 1024u << quint64(512);
}

void TestCompareTiles::countsAtEveryLevel()
{
    QFETCH(quint64, rows);
    QFETCH(quint64, cols);
    QFETCH(unsigned, cap);
    QFETCH(quint64, chunk);
    Tensor ref = randomTensor(DType::Float32, {rows, cols}, 21);
    Tensor sus = ref;
    addRoundingNoise(sus, 0.1, 22);  // within ulp:2
    std::mt19937_64 rng(23);
    for (int i = 0; i < 300; ++i) sus.bits[rng() % sus.bits.size()] ^= uint64_t(1) << (10 + rng() % 13);
    faultline::CompareOptions o;
    o.tolerance = faultline::Tolerance::ulp(2);
    o.tiles = TileOptions{16, 16, cap};
    o.chunkElements = chunk;
    o.threads = 2;
    auto d = compare(sus, ref, o);
    QVERIFY(d.ok());
    const TilePyramid& p = d->tiles;
    QVERIFY(p.hasCounts());
    for (size_t k = 0; k < p.levels().size(); ++k) {
        const auto& l = p.levels()[k];
        std::vector<uint64_t> mism(size_t(l.tileCount())), beyond(size_t(l.tileCount()));
        std::vector<double> err(size_t(l.tileCount()), 0.0);
        for (size_t i = 0; i < sus.bits.size(); ++i) {
            if (sus.bits[i] == ref.bits[i]) continue;
            const size_t t = size_t((i / cols) / l.tileRows * l.gridCols + (i % cols) / l.tileCols);
            ++mism[t];
            const uint64_t ulp = naiveUlp(DType::Float32, sus.bits[i], ref.bits[i]);
            if (ulp > 2) ++beyond[t];
            err[t] = std::max(
                err[t], std::fabs(decode(DType::Float32, sus.bits[i]) - decode(DType::Float32, ref.bits[i])));
        }
        QCOMPARE(l.mismatches, mism);
        QCOMPARE(l.beyond, beyond);
        QCOMPARE(l.maxAbsError, err);
    }
}

QTEST_APPLESS_MAIN(TestCompareTiles)
#include "test_compare_tiles.moc"
