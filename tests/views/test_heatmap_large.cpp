// The heatmap at real scale, driven with real key, wheel and mouse events on the offscreen
// platform: an 8192 x 8192 float32 pair on disk (HDF5) with a 64 x 64 corrupted block and a
// smaller 32 x 32 one at seeded random places, plus 1-ulp noise scattered everywhere, opened in
// the real main window. The worst block stands out at fit (its pixels carry the hot colour and
// an outline), W zooms to it and the element values are read around the viewport (the tensor
// holds 32 times the old 2,097,152-element limit) with the ulp distance in the readout; N / P
// step between the regions; 30 wheel notches aimed at the block end on the block; Shift+drag
// zooms into a box; keys zoom and pan. With FAULTLINE_SCREENSHOT_DIR set, the zoomed view is
// saved there as heatmap-8192.png.
//
// The longest GUI-thread stall over the whole journey (opening the pair included) is measured by
// a 1 ms precise timer whose gaps are the time the event loop did not turn (StallProbe), and
// printed at the end ("longest GUI-thread stall"): recorded in bench/RESULTS.md, judged here only
// when gross (the figure depends on the machine's load).
#include <qcustomplot.h>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstring>
#include <random>

#include "core/io/SnapshotWriter.h"
#include "support/StallProbe.h"
#include "views/heatmap/HeatmapNavigator.h"
#include "views/heatmap/HeatmapView.h"
#include "views/incident/IncidentPage.h"
#include "views/plots/PlotStyle.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;

namespace {

constexpr uint64_t kSide = 8192;

struct Block {
    uint64_t row = 0, col = 0, side = 0;
    float delta = 0;
    bool contains(double r, double c) const
    {
        return r >= double(row) && r < double(row + side) && c >= double(col) && c < double(col + side);
    }
    QPointF centre() const { return {double(col) + 0.5 * double(side), double(row) + 0.5 * double(side)}; }
};

float referenceValue(uint64_t i)
{
    return 1.0f + float((i * 7919) % 4093) / 4096.0f;
}

uint32_t bitsOf(float f)
{
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

}  // namespace

class TestHeatmapLarge : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    Block m_worst, m_second;
    QPointF m_empty;               // (col, row) of a place with no mismatch near it
    std::vector<float> m_suspect;  // kept to check the readout against
    std::unique_ptr<MainWindow> m_window;
    int m_entry = -1;
    std::unique_ptr<test::StallProbe> m_probe;

    HeatmapView* heatmap() const { return m_window->page()->heatmap(); }
    QCustomPlot* plot() const { return heatmap()->plot(); }

    QPoint pixelOf(double row, double col) const
    {
        return QPoint(int(std::lround(plot()->xAxis->coordToPixel(col))),
                      int(std::lround(plot()->yAxis->coordToPixel(row))));
    }
    QPointF elementAt(QPointF pixel) const
    {
        return {plot()->yAxis->pixelToCoord(pixel.y()), plot()->xAxis->pixelToCoord(pixel.x())};
    }
    void settle() const
    {
        QTest::qWait(30);
        QCoreApplication::processEvents();
    }
    void fitAndSettle()
    {
        QTest::keyClick(plot(), Qt::Key_0);
        settle();
        QTRY_VERIFY(!heatmap()->shownGrid().empty());
        QCOMPARE(plot()->xAxis->range().size(), double(kSide));
    }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("FaultlineTests");
        QCoreApplication::setApplicationName("test_heatmap_large");
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        std::mt19937_64 rng(23);
        auto place = [&](uint64_t side) { return uint64_t(rng() % (kSide - side)); };
        m_worst = {place(64), place(64), 64, 100.0f};
        do {
            m_second = {place(32), place(32), 32, 1.0f};
        } while (std::abs(double(m_second.row) - double(m_worst.row)) < 512 &&
                 std::abs(double(m_second.col) - double(m_worst.col)) < 512);
        // A corner away from both blocks, kept free of noise, shows the empty colour at fit.
        for (const QPointF corner : {QPointF(300, 300), QPointF(kSide - 300, 300), QPointF(300, kSide - 300),
                                     QPointF(kSide - 300, kSide - 300)}) {
            auto far = [&](const Block& b) {
                return std::abs(corner.x() - b.centre().x()) > 1000 ||
                       std::abs(corner.y() - b.centre().y()) > 1000;
            };
            if (far(m_worst) && far(m_second)) m_empty = corner;
        }
        QVERIFY(!m_empty.isNull());
        std::vector<float> reference(size_t(kSide * kSide));
        for (size_t i = 0; i < reference.size(); ++i) reference[i] = referenceValue(i);
        m_suspect = reference;
        for (const Block& b : {m_worst, m_second})
            for (uint64_t r = b.row; r < b.row + b.side; ++r)
                for (uint64_t c = b.col; c < b.col + b.side; ++c)
                    m_suspect[size_t(r * kSide + c)] += b.delta * float(1 + (r + c) % 3);
        for (int k = 0; k < 2000; ++k) {  // rounding-sized noise: mismatches, not anomalies
            const size_t i = size_t(rng() % (kSide * kSide));
            if (m_worst.contains(double(i / kSide), double(i % kSide))) continue;
            if (m_second.contains(double(i / kSide), double(i % kSide))) continue;
            if (std::abs(double(i % kSide) - m_empty.x()) < 300 &&
                std::abs(double(i / kSide) - m_empty.y()) < 300)
                continue;
            m_suspect[i] = std::nextafter(m_suspect[i], 3.0f);
        }
        auto write = [](const QString& path, const std::vector<float>& data) {
            auto w = SnapshotWriter::create(path.toStdString());
            if (!w) return w.message();
            if (Status st = w->writeTensor("w", DType::Float32, {kSide, kSide}, data.data()); !st)
                return st.message();
            if (Status st = w->close(); !st) return st.message();
            return std::string();
        };
        const QString suspect = m_dir.filePath("suspect.h5"), ref = m_dir.filePath("reference.h5");
        const std::string e1 = write(suspect, m_suspect), e2 = write(ref, reference);
        QVERIFY2(e1.empty() && e2.empty(), (e1 + e2).c_str());
        reference = {};

        m_window = std::make_unique<MainWindow>();
        m_window->resize(1500, 950);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        QSignalSpy shown(m_window.get(), &MainWindow::incidentShown);
        m_probe = std::make_unique<test::StallProbe>(QStringLiteral(
            "the 8192 x 8192 pair: open it, zoom from fit to the worst region, read elements"));
        m_probe->step(QStringLiteral("opening the pair"));
        m_window->openFiles({suspect, ref});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 120000);
        const auto incident = m_window->incident();
        for (const IncidentEntry& e : incident->entries)
            if (e.divergence && e.name == QLatin1String("w")) m_entry = e.id;
        QVERIFY(m_entry >= 0);
        if (m_window->page()->shownEntry() != m_entry) m_window->page()->showEntry(m_entry);
        QTRY_VERIFY(!heatmap()->shownGrid().empty());
    }

    void init() { m_probe->step(QString::fromLatin1(QTest::currentTestFunction())); }

    void cleanupTestCase()
    {
        if (m_probe) {
            qInfo("%s", qPrintable(m_probe->summary()));
            QVERIFY2(m_probe->longest() < test::StallProbe::kGrossStallMs, qPrintable(m_probe->summary()));
        }
        m_probe.reset();
        m_window.reset();
    }

    void worstRegionsAreTheBlocks()
    {
        const AnomalyRegions& regions = heatmap()->regions();
        QCOMPARE(regions.counted, std::string("anomalies"));
        QCOMPARE(regions.found, uint64_t(2));  // the noise is rounding-sized: no region of its own
        int k = 0;
        for (const Block& b : {m_worst, m_second}) {
            const Region& box = regions.regions[size_t(k++)].box;
            // Finest tiles covering the block: around it, at most one tile more on each side.
            QVERIFY(box.rowBegin <= b.row && box.rowEnd >= b.row + b.side);
            QVERIFY(box.colBegin <= b.col && box.colEnd >= b.col + b.side);
            QVERIFY(box.rowEnd - box.rowBegin <= b.side + 32 && box.colEnd - box.colBegin <= b.side + 32);
        }
    }

    void blockStandsOutAtFit()
    {
        fitAndSettle();
        QVERIFY(!heatmap()->showingElements());
        // At fit the block is a few pixels across; its pixels carry the hottest colour (the pyramid
        // keeps each tile's maximum), an empty place far away carries the empty colour.
        plot()->replot();
        const QImage image = plot()->grab().toImage();
        const QPointF c = m_worst.centre();
        const QPoint at = pixelOf(c.y(), c.x());
        const QColor hot = image.pixelColor(at);
        const QColor hottest = PlotStyle::errorGradient().color(1.0, QCPRange(0, 1));
        QVERIFY2(std::abs(hot.red() - hottest.red()) + std::abs(hot.green() - hottest.green()) +
                         std::abs(hot.blue() - hottest.blue()) <
                     60,
                 qPrintable(QStringLiteral("block pixel %1 is %2, hottest %3")
                                .arg(QString::number(at.x()) + "," + QString::number(at.y()), hot.name(),
                                     hottest.name())));
        QCOMPARE(image.pixelColor(pixelOf(m_empty.y(), m_empty.x())), PlotStyle::emptyCellColor());
        // ... and an outline at least kMinOutlinePixels wide surrounds it.
        const std::vector<QRectF> outlines = heatmap()->shownOutlines();
        QCOMPARE(outlines.size(), size_t(2));
        const QRectF o = outlines.front();
        QVERIFY(o.contains(c));
        const double widthPx =
            std::abs(plot()->xAxis->coordToPixel(o.right()) - plot()->xAxis->coordToPixel(o.left()));
        QVERIFY2(widthPx >= HeatmapView::kMinOutlinePixels - 0.5, qPrintable(QString::number(widthPx)));
        // The outline's left edge is drawn in the outline colour (antialiased: within a pixel).
        const int edgeX = int(std::lround(plot()->xAxis->coordToPixel(o.left())));
        const QColor want = PlotStyle::regionOutlineColor();
        bool drawn = false;
        for (int x = edgeX - 1; x <= edgeX + 1; ++x) {
            const QColor px = image.pixelColor(QPoint(x, at.y()));
            drawn = drawn || std::abs(px.red() - want.red()) + std::abs(px.green() - want.green()) +
                                     std::abs(px.blue() - want.blue()) <
                                 40;
        }
        QVERIFY2(drawn, "no outline drawn left of the block");
    }

    void zoomToWorstAndReadAnElement()
    {
        fitAndSettle();
        QTest::keyClick(plot(), Qt::Key_W);
        settle();
        QCOMPARE(heatmap()->currentRegion(), 0);
        const QCPRange xr = plot()->xAxis->range(), yr = plot()->yAxis->range();
        QVERIFY(xr.lower <= double(m_worst.col) && xr.upper >= double(m_worst.col + m_worst.side));
        QVERIFY(yr.lower <= double(m_worst.row) && yr.upper >= double(m_worst.row + m_worst.side));
        QVERIFY(xr.size() < 4.0 * double(m_worst.side));
        // Single elements, read off the GUI thread from the files around the viewport.
        QTRY_VERIFY_WITH_TIMEOUT(heatmap()->showingElements(), 20000);
        const HeatmapGrid& g = heatmap()->shownGrid();
        const auto hot = g.hottestCell();
        QVERIFY(hot.has_value());
        QVERIFY(m_worst.contains(double(g.firstRow + hot->first), double(g.firstCol + hot->second)));

        // Hover one corrupted element with the mouse: both values, errors and the ulp distance.
        const uint64_t row = m_worst.row + 5, col = m_worst.col + 7;
        QTest::mouseMove(plot(), pixelOf(double(row) + 0.5, double(col) + 0.5));
        auto* hover = heatmap()->findChild<QLabel*>(QStringLiteral("heatmapHover"));
        QVERIFY(hover);
        QTRY_VERIFY(hover->text().contains(QStringLiteral("row %1, col %2").arg(row).arg(col)));
        const float s = m_suspect[size_t(row * kSide + col)], r = referenceValue(row * kSide + col);
        const uint64_t ulps = uint64_t(std::llabs(int64_t(bitsOf(s)) - int64_t(bitsOf(r))));
        const QString text = hover->text();
        QVERIFY2(text.contains(QStringLiteral("suspect: %1").arg(QString::number(double(s), 'g', 9))),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("reference: %1").arg(QString::number(double(r), 'g', 9))),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("%1 ulp").arg(ulps)), qPrintable(text));
        QVERIFY2(
            text.contains(QStringLiteral("|error| %1").arg(QString::number(double(s) - double(r), 'g', 9))),
            qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("rel error")), qPrintable(text));

        // The hover names the tile at the size the signature names (one tile vocabulary).
        const Divergence& d = *m_window->incident()->entry(m_entry)->divergence;
        const SignatureFinding* tiles = nullptr;
        SignatureFinding primary{d.signature.kind, d.signature.confidence, d.signature.detail,
                                 d.signature.evidence};
        if (d.signature.kind == SignatureKind::TileClustered) tiles = &primary;
        for (const SignatureFinding& f : d.signature.secondary)
            if (!tiles && f.kind == SignatureKind::TileClustered) tiles = &f;
        QVERIFY2(tiles, d.signature.detail.c_str());
        const QString said =
            QStringLiteral("%1x%2 elements").arg(tiles->evidence.tileRows).arg(tiles->evidence.tileCols);
        QVERIFY2(QString::fromStdString(tiles->detail).contains(said), tiles->detail.c_str());
        const QString named =
            QStringLiteral("of %1×%2 elements").arg(tiles->evidence.tileRows).arg(tiles->evidence.tileCols);
        QVERIFY2(text.contains(named), qPrintable(text));
    }

    void nextAndPreviousStepThroughTheRegions()
    {
        fitAndSettle();
        QTest::keyClick(plot(), Qt::Key_N);  // from fit, N goes to the first (worst) region
        QCOMPARE(heatmap()->currentRegion(), 0);
        QTest::keyClick(plot(), Qt::Key_N);
        QCOMPARE(heatmap()->currentRegion(), 1);
        const QPointF c = m_second.centre();
        QVERIFY(plot()->xAxis->range().contains(c.x()) && plot()->yAxis->range().contains(c.y()));
        QVERIFY(plot()->xAxis->range().size() < 4.0 * double(m_second.side));
        QTest::keyClick(plot(), Qt::Key_P);
        QCOMPARE(heatmap()->currentRegion(), 0);
        QVERIFY(plot()->xAxis->range().contains(m_worst.centre().x()));
        QTest::keyClick(plot(), Qt::Key_P);  // wraps around
        QCOMPARE(heatmap()->currentRegion(), 1);
    }

    void wheelZoomKeepsTheBlockUnderTheCursor()
    {
        fitAndSettle();
        const QPointF c = m_worst.centre();
        const QPointF aim = QPointF(pixelOf(c.y(), c.x()));
        const QPointF start = elementAt(aim);  // within a pixel (18 elements at fit) of the centre
        QVERIFY(m_worst.contains(start.x(), start.y()));
        for (int notch = 0; notch < 30; ++notch) {
            QWheelEvent wheel(aim, plot()->mapToGlobal(aim), QPoint(), QPoint(0, 120), Qt::NoButton,
                              Qt::NoModifier, Qt::NoScrollPhase, false);
            QApplication::sendEvent(plot(), &wheel);
            QCoreApplication::processEvents();  // re-bins, replots, layout changes in between
        }
        settle();
        const double expected = double(kSide) * std::pow(HeatmapNavigator::kNotchFactor, 30);
        QVERIFY2(std::abs(plot()->xAxis->range().size() - expected) < 0.05 * expected,
                 qPrintable(QString::number(plot()->xAxis->range().size())));
        const QPointF under = elementAt(aim);
        QVERIFY2(m_worst.contains(under.x(), under.y()),
                 qPrintable(QStringLiteral("under the cursor: row %1, col %2; block at %3, %4")
                                .arg(under.x())
                                .arg(under.y())
                                .arg(m_worst.row)
                                .arg(m_worst.col)));
        // The element under the cursor is the one aimed at, to a fraction of an element.
        QVERIFY2(std::abs(under.x() - start.x()) < 1.0 && std::abs(under.y() - start.y()) < 1.0,
                 qPrintable(QStringLiteral("aimed at %1, %2").arg(start.x()).arg(start.y())));
        QTRY_VERIFY_WITH_TIMEOUT(heatmap()->showingElements(), 20000);
    }

    void shiftDragZoomsIntoABox()
    {
        fitAndSettle();
        const QPoint a = pixelOf(double(m_second.row) - 40, double(m_second.col) - 40);
        const QPoint b =
            pixelOf(double(m_second.row + m_second.side) + 40, double(m_second.col + m_second.side) + 40);
        QTest::mousePress(plot(), Qt::LeftButton, Qt::ShiftModifier, a);
        QTest::mouseMove(plot(), (a + b) / 2);
        QTest::mouseMove(plot(), b);
        QTest::mouseRelease(plot(), Qt::LeftButton, Qt::ShiftModifier, b);
        settle();
        const QCPRange xr = plot()->xAxis->range(), yr = plot()->yAxis->range();
        QVERIFY2(xr.size() < 0.1 * double(kSide), qPrintable(QString::number(xr.size())));
        QVERIFY(xr.contains(m_second.centre().x()) && yr.contains(m_second.centre().y()));
        // The box's corners became the view's, to a pixel at fit.
        const double pixel = double(kSide) / plot()->axisRect()->width();
        QVERIFY(std::abs(xr.lower - (double(m_second.col) - 40)) < 2 * pixel);
        // A plain drag pans instead of zooming.
        const double size = plot()->xAxis->range().size();
        const QPoint m = plot()->axisRect()->rect().center();
        QTest::mousePress(plot(), Qt::LeftButton, Qt::NoModifier, m);
        QTest::mouseMove(plot(), m + QPoint(60, 0));
        QTest::mouseRelease(plot(), Qt::LeftButton, Qt::NoModifier, m + QPoint(60, 0));
        settle();
        QCOMPARE(plot()->xAxis->range().size(), size);
        QVERIFY(plot()->xAxis->range().lower < xr.lower);
    }

    void keysZoomAndPan()
    {
        fitAndSettle();
        QTest::keyClick(plot(), Qt::Key_Plus);
        QCOMPARE(plot()->xAxis->range().size(), double(kSide) * HeatmapNavigator::kKeyFactor);
        QCOMPARE(plot()->xAxis->range().center(), double(kSide) / 2);
        const double lower = plot()->xAxis->range().lower;
        QTest::keyClick(plot(), Qt::Key_Right);
        QVERIFY(plot()->xAxis->range().lower > lower);
        const double top = plot()->yAxis->range().lower;
        QTest::keyClick(plot(), Qt::Key_Down);
        QVERIFY(plot()->yAxis->range().lower > top);
        QTest::keyClick(plot(), Qt::Key_Minus);
        QCOMPARE(plot()->xAxis->range().size(), double(kSide));
        QTest::keyClick(plot(), Qt::Key_W);
        const QString dir = qEnvironmentVariable("FAULTLINE_SCREENSHOT_DIR");
        if (!dir.isEmpty()) {
            QTRY_VERIFY_WITH_TIMEOUT(heatmap()->showingElements(), 20000);
            const uint64_t row = m_worst.row + 5, col = m_worst.col + 7;
            QTest::mouseMove(plot(), pixelOf(double(row) + 0.5, double(col) + 0.5));
            settle();
            QVERIFY(heatmap()->grab().save(QDir(dir).filePath("heatmap-8192.png")));
        }
        QTest::keyClick(plot(), Qt::Key_0);
        QCOMPARE(plot()->xAxis->range().size(), double(kSide));
    }
};

QTEST_MAIN(TestHeatmapLarge)
#include "test_heatmap_large.moc"
