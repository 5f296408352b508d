// Heatmap binning without widgets: the pyramid level chosen for a view never draws more cells
// than pixels and is the finest that fits; windows of cells match the pyramid's own tiles; the
// element window marks exactly the differing elements; the tree's path splitting.
#include <QtTest>
#include <cmath>
#include <cstring>

#include "core/compare/TensorComparer.h"
#include "views/heatmap/HeatmapBinning.h"
#include "views/incident/DivergenceTreeModel.h"

using namespace faultline;
using namespace faultline::views;

namespace {

// A rows x cols float32 pair differing in a block [r0, r1) x [c0, c1) by `delta`.
struct Pair {
    std::vector<float> suspect, reference;
};

Pair makePair(uint64_t rows, uint64_t cols, uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1, float delta)
{
    Pair p;
    p.reference.resize(size_t(rows * cols));
    for (size_t i = 0; i < p.reference.size(); ++i) p.reference[i] = float(i % 97) * 0.25f + 1.0f;
    p.suspect = p.reference;
    for (uint64_t r = r0; r < r1; ++r)
        for (uint64_t c = c0; c < c1; ++c) p.suspect[size_t(r * cols + c)] += delta * float(1 + (r + c) % 3);
    return p;
}

Divergence compare(const Pair& p, uint64_t rows, uint64_t cols)
{
    TensorComparer comparer;
    auto d = comparer.compare(DType::Float32, {rows, cols}, p.suspect.data(), p.reference.data(), "t");
    if (!d) qFatal("%s", d.message().c_str());
    return std::move(d).value();
}

ElementValues valuesOf(const Pair& p, uint64_t rows, uint64_t cols)
{
    ElementValues v;
    v.rows = rows;
    v.cols = cols;
    v.window = {0, rows, 0, cols};
    v.suspectRaw.resize(p.suspect.size() * 4);
    v.referenceRaw.resize(p.reference.size() * 4);
    std::memcpy(v.suspectRaw.data(), p.suspect.data(), v.suspectRaw.size());
    std::memcpy(v.referenceRaw.data(), p.reference.data(), v.referenceRaw.size());
    v.suspect.assign(p.suspect.begin(), p.suspect.end());
    v.reference.assign(p.reference.begin(), p.reference.end());
    return v;
}

}  // namespace

class TestHeatmapBinning : public QObject {
    Q_OBJECT
private slots:
    void levelFitsThePixels_data()
    {
        QTest::addColumn<int>("pixels");
        QTest::addColumn<double>("visible");
        QTest::newRow("whole tensor, big widget") << 800 << 1024.0;
        QTest::newRow("whole tensor, small widget") << 20 << 1024.0;
        QTest::newRow("zoomed in") << 300 << 100.0;
        QTest::newRow("one pixel") << 1 << 1024.0;
    }
    void levelFitsThePixels()
    {
        QFETCH(int, pixels);
        QFETCH(double, visible);
        const Pair p = makePair(1024, 1024, 100, 200, 300, 420, 8.0f);
        const Divergence d = compare(p, 1024, 1024);
        QVERIFY(d.tiles.hasCounts());
        const int level = HeatmapBinning::chooseLevel(d.tiles, visible, visible, pixels, pixels);
        const auto& levels = d.tiles.levels();
        QVERIFY(level >= 0 && size_t(level) < levels.size());
        const TileLevel& lv = levels[size_t(level)];
        const HeatmapGrid g =
            HeatmapBinning::tileWindow(d.tiles, level, HeatmapMetric::Mismatches, 0, visible, 0, visible);
        if (size_t(level) + 1 < levels.size() || lv.gridRows <= uint64_t(pixels)) {
            QVERIFY2(g.rows <= uint64_t(pixels) && g.cols <= uint64_t(pixels),
                     qPrintable(QStringLiteral("level %1 draws %2x%3 cells in %4 px")
                                    .arg(level)
                                    .arg(g.rows)
                                    .arg(g.cols)
                                    .arg(pixels)));
        }
        if (level > 0) {  // the next finer level would not fit
            const TileLevel& finer = levels[size_t(level) - 1];
            const double need =
                std::min(double(finer.gridCols), std::ceil(visible / double(finer.tileCols)) + 1);
            QVERIFY(need > double(pixels));
        }
    }

    void tileWindowMatchesThePyramid()
    {
        const uint64_t rows = 96, cols = 160;
        const Pair p = makePair(rows, cols, 20, 40, 50, 90, 0.5f);
        const Divergence d = compare(p, rows, cols);
        const TileLevel& lv0 = d.tiles.levels().front();
        // A window in the middle: rows [17, 70) cols [33, 120).
        const HeatmapGrid g = HeatmapBinning::tileWindow(d.tiles, 0, HeatmapMetric::Beyond, 17, 70, 33, 120);
        QCOMPARE(g.firstRow, uint64_t(17 / lv0.tileRows));
        QCOMPARE(g.firstCol, uint64_t(33 / lv0.tileCols));
        QCOMPARE(g.rows, (70 + lv0.tileRows - 1) / lv0.tileRows - g.firstRow);
        QCOMPARE(g.cols, (120 + lv0.tileCols - 1) / lv0.tileCols - g.firstCol);
        // Every cell equals an independent count of the differing elements in its tile.
        for (uint64_t r = 0; r < g.rows; ++r)
            for (uint64_t c = 0; c < g.cols; ++c) {
                uint64_t count = 0;
                const uint64_t tr = g.firstRow + r, tc = g.firstCol + c;
                for (uint64_t er = tr * lv0.tileRows; er < std::min(rows, (tr + 1) * lv0.tileRows); ++er)
                    for (uint64_t ec = tc * lv0.tileCols; ec < std::min(cols, (tc + 1) * lv0.tileCols); ++ec)
                        if (p.suspect[size_t(er * cols + ec)] != p.reference[size_t(er * cols + ec)]) ++count;
                const double v = g.at(r, c);
                if (count == 0)
                    QVERIFY(std::isnan(v));
                else
                    QCOMPARE(v, double(count));
            }
        // The hottest cell lies in the block.
        const auto hot = g.hottestCell();
        QVERIFY(hot.has_value());
        const uint64_t hr = (g.firstRow + hot->first) * lv0.tileRows,
                       hc = (g.firstCol + hot->second) * lv0.tileCols;
        QVERIFY(hr + lv0.tileRows > 20 && hr < 40);
        QVERIFY(hc + lv0.tileCols > 50 && hc < 90);
    }

    void elementWindowMarksDifferingElements()
    {
        const uint64_t rows = 8, cols = 12;
        const Pair p = makePair(rows, cols, 2, 4, 3, 6, 2.0f);
        const ElementValues v = valuesOf(p, rows, cols);
        const HeatmapGrid g =
            HeatmapBinning::elementWindow(v, HeatmapMetric::MaxAbsError, 0, double(rows), 0, double(cols));
        QCOMPARE(g.level, HeatmapGrid::kElementLevel);
        QCOMPARE(g.rows, rows);
        QCOMPARE(g.cols, cols);
        for (uint64_t r = 0; r < rows; ++r)
            for (uint64_t c = 0; c < cols; ++c) {
                const size_t i = size_t(r * cols + c);
                const double expected = std::fabs(double(p.suspect[i]) - double(p.reference[i]));
                if (expected == 0)
                    QVERIFY(std::isnan(g.at(r, c)));
                else
                    QCOMPARE(g.at(r, c), expected);
            }
        QVERIFY(HeatmapBinning::elementsFit(8, 12, 100, 100));
        QVERIFY(!HeatmapBinning::elementsFit(800, 12, 100, 100));
    }

    void positiveRangeSkipsZeroNanAndInf()
    {
        const double nan = std::nan("");
        const auto r = HeatmapBinning::positiveRange({0.0, nan, 3e-7, 5.0, INFINITY, 2.0});
        QVERIFY(r.has_value());
        QCOMPARE(r->first, 3e-7);
        QCOMPARE(r->second, 5.0);
        QVERIFY(!HeatmapBinning::positiveRange({0.0, nan}).has_value());
    }

    void splitsPaths_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("parts");
        QTest::newRow("module path") << "blocks.0.mlp.fc1" << QStringList{"blocks.0", "mlp", "fc1"};
        QTest::newRow("snapshot name") << "weights/layers.12.attn.q_proj.weight"
                                       << QStringList{"weights", "layers.12", "attn", "q_proj", "weight"};
        QTest::newRow("leading number") << "0.weight" << QStringList{"0", "weight"};
        QTest::newRow("plain") << "loss" << QStringList{"loss"};
    }
    void splitsPaths()
    {
        QFETCH(QString, name);
        QFETCH(QStringList, parts);
        QCOMPARE(DivergenceTreeModel::splitPath(name), parts);
    }
};

QTEST_MAIN(TestHeatmapBinning)
#include "test_heatmap_binning.moc"
