// The workbench on the demo incident (trace + incident checkpoint + healthy checkpoint), offscreen:
// it opens straight into the story (the first divergent op selected everywhere), the heatmap's
// hot cell is the corrupted tile, the bit histogram equals the divergence's bits, the tree's
// columns hold the divergence's numbers, the model-wide chart highlights the first op, a
// malformed file shows an error and keeps the incident, and exports write real files.
#include <qcustomplot.h>
#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>
#include <cmath>

#include "core/demo/DemoIncident.h"
#include "core/replay/FaultModel.h"
#include "core/replay/TargetSpec.h"
#include "views/heatmap/ElementValueLoader.h"
#include "views/heatmap/HeatmapView.h"
#include "views/incident/DivergenceTreeModel.h"
#include "views/incident/IncidentBanner.h"
#include "views/incident/IncidentPage.h"
#include "views/incident/TensorTreePanel.h"
#include "views/plots/BitHistogramView.h"
#include "views/plots/ErrorDistributionView.h"
#include "views/plots/ModelDivergenceView.h"
#include "views/replay/DevicesPanel.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;

namespace {

// Element rectangle of cell (r, c) of a grid, clipped to the matrix.
Region cellRegion(const HeatmapGrid& g, uint64_t r, uint64_t c, uint64_t rows, uint64_t cols)
{
    Region out;
    out.rowBegin = (g.firstRow + r) * g.cellRows;
    out.rowEnd = std::min(rows, out.rowBegin + g.cellRows);
    out.colBegin = (g.firstCol + c) * g.cellCols;
    out.colEnd = std::min(cols, out.colBegin + g.cellCols);
    return out;
}

bool intersects(const Region& a, const Region& b)
{
    return a.rowBegin < b.rowEnd && b.rowBegin < a.rowEnd && a.colBegin < b.colEnd && b.colBegin < a.colEnd;
}

bool inside(const Region& a, const Region& outer)
{
    return a.rowBegin >= outer.rowBegin && a.rowEnd <= outer.rowEnd && a.colBegin >= outer.colBegin &&
           a.colEnd <= outer.colEnd;
}

}  // namespace

class TestIncidentViews : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    DemoIncident m_demo;
    std::unique_ptr<MainWindow> m_window;

    const IncidentEntry& firstEntry() const
    {
        const auto inc = m_window->incident();
        return inc->entries[size_t(*inc->firstDivergentEntry)];
    }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("FaultlineTests");
        QCoreApplication::setApplicationName("test_incident_views");
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        DemoOptions options;
        options.outDir = m_dir.filePath("demo").toStdString();
        auto demo = buildDemoIncident(options);
        QVERIFY2(demo.ok(), demo.ok() ? "" : demo.message().c_str());
        m_demo = *demo;

        m_window = std::make_unique<MainWindow>();
        m_window->resize(1500, 950);
        m_window->show();
        QSignalSpy shown(m_window.get(), &MainWindow::incidentShown);
        QSignalSpy settled(m_window->page(), &IncidentPage::elementValuesSettled);
        m_window->openFiles({QString::fromStdString(m_demo.tracePath),
                             QString::fromStdString(m_demo.incidentCheckpoints.back()),
                             QString::fromStdString(m_demo.healthyCheckpoints.back())});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1, 20000);
    }

    void cleanupTestCase() { m_window.reset(); }

    void opensStraightIntoTheStory()
    {
        const auto inc = m_window->incident();
        QVERIFY(inc->hasTrace());
        QVERIFY(inc->hasPair());
        QCOMPARE(inc->suspectLabel, QString::fromStdString(m_demo.suspectLabel));
        QVERIFY(inc->firstDivergentEntry.has_value());
        const IncidentEntry& e = firstEntry();
        QCOMPARE(e.opIndex, *inc->bisect->firstDivergentOp);
        QCOMPARE(e.opKind, QString("gemm"));  // the demo's defect strikes GEMMs only
        QCOMPARE(m_window->treePanel()->selectedEntry(), e.id);
        QCOMPARE(m_window->page()->shownEntry(), e.id);
        const QString story = m_window->page()->banner()->storyText();
        QVERIFY2(story.contains(QStringLiteral("op %1 gemm").arg(e.opIndex)), qPrintable(story));
        QVERIFY(m_window->windowTitle().contains("incident-trace.h5"));
    }

    void heatmapShowsTheCorruptedTile()
    {
        const IncidentEntry& e = firstEntry();
        const Divergence& d = *e.divergence;
        QVERIFY(d.beyondRegion.has_value());
        QVERIFY(d.region.has_value());
        // The window's view, whatever its zoom: the hottest cell touches the beyond-tolerance region and
        // every coloured cell lies in the mismatch region.
        HeatmapView* hm = m_window->page()->heatmap();
        QTRY_VERIFY(!hm->shownGrid().empty());
        const HeatmapGrid& g = hm->shownGrid();
        const auto hot = g.hottestCell();
        QVERIFY(hot.has_value());
        QVERIFY(intersects(cellRegion(g, hot->first, hot->second, d.rows, d.cols), *d.beyondRegion));

        // A heatmap of its own, without element values: level 0 tiles, compared cell by cell.
        HeatmapView tiles;
        tiles.resize(900, 600);
        tiles.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tiles));
        tiles.setEntry(m_window->incident(), e.id);
        tiles.setMetric(HeatmapMetric::Beyond);
        QTRY_VERIFY(!tiles.shownGrid().empty());
        const HeatmapGrid& tg = tiles.shownGrid();
        QCOMPARE(tg.level, 0);  // 64x256 in 16x16 tiles fits the widget
        const TileLevel& lv0 = d.tiles.levels().front();
        QCOMPARE(tg.rows, lv0.gridRows);
        QCOMPARE(tg.cols, lv0.gridCols);
        uint64_t best = 0;
        for (uint64_t r = 0; r < tg.rows; ++r)
            for (uint64_t c = 0; c < tg.cols; ++c) {
                const uint64_t n = lv0.beyond[size_t(r * lv0.gridCols + c)];
                best = std::max(best, n);
                if (n == 0) {
                    QVERIFY(std::isnan(tg.at(r, c)));
                } else {
                    QCOMPARE(tg.at(r, c), double(n));
                    // A beyond-tolerance tile lies in the corrupted SM tile around the region.
                    QVERIFY(intersects(cellRegion(tg, r, c, d.rows, d.cols), *d.beyondRegion));
                }
            }
        const auto thot = tg.hottestCell();
        QVERIFY(thot.has_value());
        QCOMPARE(tg.at(thot->first, thot->second), double(best));

        // Element values: the hottest element is the largest error and sits in the region.
        auto values = ElementValueLoader::load(*m_window->incident(), e.id, nullptr);
        QVERIFY2(values.ok(), values.ok() ? "" : values.message().c_str());
        tiles.setMetric(HeatmapMetric::MaxAbsError);
        tiles.setElementValues(std::make_shared<const ElementValues>(*values));
        QTRY_VERIFY(tiles.showingElements());
        const HeatmapGrid& eg = tiles.shownGrid();
        const auto ehot = eg.hottestCell();
        QVERIFY(ehot.has_value());
        const Region hotElement = cellRegion(eg, ehot->first, ehot->second, d.rows, d.cols);
        QVERIFY(inside(hotElement, *d.beyondRegion));
        QCOMPARE(eg.at(ehot->first, ehot->second), d.absError.max);
        const QString hover = tiles.describeElement(hotElement.rowBegin, hotElement.colBegin);
        QVERIFY2(hover.contains("golden model") && hover.contains("differing bits"), qPrintable(hover));

        // Colour by SM: every divergent tile belongs to the simulated device's defective SM.
        auto spec = parseTargetSpec(m_demo.suspectDefect);
        QVERIFY(spec.ok());
        const int defectiveSm = std::stoi(spec->param("sm", "-1"));
        QVERIFY(tiles.smAvailable());
        tiles.setColourBySm(true);
        const HeatmapGrid& sg = tiles.shownGrid();
        int coloured = 0;
        for (double v : sg.values)
            if (!std::isnan(v)) {
                ++coloured;
                QCOMPARE(int(v), defectiveSm);
            }
        QVERIFY(coloured > 0);
    }

    void wheelZoomDrawsTheNewCellsInOneReplot()
    {
        // A wheel step changes the ranges and replots: that replot must already draw the cells of
        // the new ranges (and no second replot follow), not the cells binned for the old ones.
        const IncidentEntry& e = firstEntry();
        const Divergence& d = *e.divergence;
        HeatmapView hv;
        hv.resize(900, 600);
        hv.show();
        QVERIFY(QTest::qWaitForWindowExposed(&hv));
        hv.setEntry(m_window->incident(), e.id);
        QTRY_VERIFY(!hv.shownGrid().empty());
        QTest::qWait(50);
        QCustomPlot* plot = hv.plot();
        const HeatmapGrid before = hv.shownGrid();
        QCOMPARE(before.cols, d.tiles.levels().front().gridCols);  // the whole tensor at level 0

        int replots = 0, stale = 0;
        connect(plot, &QCustomPlot::afterReplot, &hv, [&] {
            ++replots;
            const HeatmapGrid& g = hv.shownGrid();
            const QCPRange xr = plot->xAxis->range(), yr = plot->yAxis->range();
            const HeatmapGrid want = HeatmapBinning::tileWindow(d.tiles, g.level, hv.metric(), yr.lower,
                                                                yr.upper, xr.lower, xr.upper);
            if (g.firstRow != want.firstRow || g.firstCol != want.firstCol || g.rows != want.rows ||
                g.cols != want.cols)
                ++stale;
        });
        const QPointF centre = QPointF(plot->axisRect()->rect().center());
        QWheelEvent wheel(centre, plot->mapToGlobal(centre), QPoint(), QPoint(0, 3 * 120), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(plot, &wheel);
        QTRY_VERIFY(replots >= 1);
        QTest::qWait(100);  // anything the step queued
        QVERIFY2(plot->xAxis->range().size() < double(d.cols), "the wheel zoomed in");
        QVERIFY(hv.shownGrid().cols < before.cols);
        QCOMPARE(stale, 0);
        QCOMPARE(replots, 1);
    }

    void bitHistogramEqualsTheDivergence()
    {
        const Divergence& d = *firstEntry().divergence;
        const std::vector<double> shown = m_window->page()->bits()->shownCounts();
        QVERIFY(!shown.empty());
        for (size_t b = 0; b < d.bits.flips.size(); ++b)
            QCOMPARE(b < shown.size() ? shown[b] : 0.0, double(d.bits.flips[b]));
        // The error distribution holds the ULP histogram.
        uint64_t total = 0;
        for (uint64_t n : d.ulpHistogram) total += n;
        double drawn = 0;
        for (const auto& [k, n] : m_window->page()->errors()->ulpBars()) drawn += n;
        QCOMPARE(drawn, double(total));
    }

    // Narrow or wide, the labels of the error distribution's axes never sit on each other (a
    // 3-bin ULP axis once printed "2²²2²³2²⁴" in a narrow dock).
    void errorDistributionLabelsNeverOverlap()
    {
        for (int width : {240, 420, 900}) {
            ErrorDistributionView view;
            view.resize(width, 240);
            view.show();
            view.setEntry(m_window->incident(), firstEntry().id);
            QCoreApplication::processEvents();
            view.plot()->replot();
            for (QCPAxisRect* rect : view.plot()->axisRects()) {
                QCPAxis* axis = rect->axis(QCPAxis::atBottom);
                const QVector<double> ticks = axis->tickVector();
                const QVector<QString> labels = axis->tickVectorLabels();
                QVERIFY(!ticks.isEmpty());
                const QFontMetrics fm(axis->tickLabelFont());
                for (int i = 1; i < ticks.size(); ++i) {
                    const double gap =
                        std::abs(axis->coordToPixel(ticks[i]) - axis->coordToPixel(ticks[i - 1]));
                    const double need =
                        (fm.horizontalAdvance(labels[i]) + fm.horizontalAdvance(labels[i - 1])) / 2.0;
                    QVERIFY2(gap > need,
                             qPrintable(QString("%1 px wide: labels %2 and %3 are %4 px apart, need %5")
                                            .arg(width)
                                            .arg(labels[i - 1], labels[i])
                                            .arg(gap)
                                            .arg(need)));
                }
            }
        }
    }

    // With no entry the legend is empty; the plot must still span the view (an empty legend
    // once capped the layout's column, leaving a 50 px axis rect with its labels on each other).
    void emptyBitHistogramKeepsItsWidth()
    {
        BitHistogramView view;
        view.resize(300, 260);
        view.show();
        view.setEntry(nullptr, -1);
        QCoreApplication::processEvents();
        view.plot()->replot();
        const int plotWidth = view.plot()->width();
        QVERIFY2(view.plot()->axisRect()->rect().width() > plotWidth / 2,
                 qPrintable(QString("axis rect %1 px of a %2 px plot")
                                .arg(view.plot()->axisRect()->rect().width())
                                .arg(plotWidth)));
    }

    void treeColumnsHoldTheDivergence()
    {
        TensorTreePanel* panel = m_window->treePanel();
        DivergenceTreeModel* model = panel->model();
        const IncidentEntry& e = firstEntry();
        const Divergence& d = *e.divergence;
        const QModelIndex name = model->indexForEntry(e.id);
        QVERIFY(name.isValid());
        auto cell = [&](int column) { return model->data(name.siblingAtColumn(column)).toString(); };
        QCOMPARE(cell(DivergenceTreeModel::Name), DivergenceTreeModel::splitPath(e.name).last());
        QCOMPARE(cell(DivergenceTreeModel::Op), QStringLiteral("#%1 gemm").arg(e.opIndex));
        QCOMPARE(cell(DivergenceTreeModel::DTypeColumn), QString("float32"));
        QCOMPARE(cell(DivergenceTreeModel::Shape), QString::fromStdString(shapeToString(d.shape)));
        QCOMPARE(cell(DivergenceTreeModel::Mismatches), QString::number(d.mismatches));
        QCOMPARE(cell(DivergenceTreeModel::Beyond), QString::number(d.beyondTolerance));
        QCOMPARE(cell(DivergenceTreeModel::MaxUlp), QString::number(d.maxUlp));
        QCOMPARE(cell(DivergenceTreeModel::SignatureColumn),
                 QString::fromUtf8(signatureKindName(d.signature.kind).data()));
        QVERIFY(model->data(name, DivergenceTreeModel::FirstDivergentRole).toBool());
        QVERIFY(!model->data(name, Qt::DecorationRole).value<QIcon>().isNull());
        QVERIFY(model->data(name, Qt::ForegroundRole).isValid());  // divergent rows are coloured
        // Sorting by "beyond tolerance", descending, puts the most divergent section child first.
        panel->view()->sortByColumn(DivergenceTreeModel::Beyond, Qt::DescendingOrder);
        QSortFilterProxyModel* proxy = panel->proxy();
        const QModelIndex section = proxy->index(0, 0);
        QVERIFY(proxy->rowCount(section) > 0);
        qulonglong previous = ~0ull;
        for (int r = 0; r < proxy->rowCount(section); ++r) {
            const qulonglong v = proxy
                                     ->data(proxy->index(r, DivergenceTreeModel::Beyond, section),
                                            DivergenceTreeModel::SortRole)
                                     .toULongLong();
            QVERIFY(v <= previous);
            previous = v;
        }
        panel->view()->sortByColumn(-1, Qt::AscendingOrder);
        // One row per bisected op and compared dataset, and per one that was not compared.
        const auto inc = m_window->incident();
        const auto& c = *inc->compare;
        QCOMPARE(inc->entries.size(), inc->bisect->ops.size() + c.tensors.size() + c.unpaired.size() +
                                          c.errors.size() + c.records.size() + c.notComparable.size() +
                                          c.notCompared.size());
    }

    void modelViewHighlightsTheFirstOp()
    {
        ModelDivergenceView* mv = m_window->page()->modelView();
        QCOMPARE(mv->source(), EntrySource::TraceOp);
        QCOMPARE(mv->shownEntries().size(), m_window->incident()->bisect->ops.size());
        QVERIFY(mv->highlightedEntry().has_value());
        QCOMPARE(*mv->highlightedEntry(), firstEntry().id);
        const auto values = mv->shownValues();
        const auto& order = mv->shownEntries();
        for (size_t i = 0; i < order.size(); ++i) {
            const IncidentEntry& e = m_window->incident()->entries[size_t(order[i])];
            QCOMPARE(values[i], e.divergence ? double(e.divergence->beyondTolerance) : 0.0);
            if (e.opIndex < firstEntry().opIndex) QCOMPARE(values[i], 0.0);  // nothing before the first
        }
    }

    void clickingAnotherEntrySelectsItEverywhere()
    {
        const auto inc = m_window->incident();
        // The most divergent checkpoint tensor.
        int tensor = -1;
        for (const IncidentEntry& e : inc->entries)
            if (e.source == EntrySource::Tensor && e.divergence && e.divergence->beyondTolerance > 0)
                tensor = e.id;
        QVERIFY(tensor >= 0);
        emit m_window->page()->modelView()->entryClicked(tensor);
        QCOMPARE(m_window->treePanel()->selectedEntry(), tensor);
        QCOMPARE(m_window->page()->shownEntry(), tensor);
        QCOMPARE(m_window->page()->modelView()->source(), EntrySource::Tensor);
        QTRY_VERIFY(!m_window->page()->heatmap()->shownGrid().empty());
        QTRY_VERIFY(m_window->page()->heatmap()->hasElementValues());  // read through TensorFile::read
        m_window->treePanel()->selectEntry(*inc->firstDivergentEntry);
        QCOMPARE(m_window->page()->shownEntry(), *inc->firstDivergentEntry);
    }

    void devicesPanelListsTheTraceDevices()
    {
        QTableWidget* t = m_window->devicesPanel()->traceDevices();
        const auto& devices = m_window->incident()->trace->devices;
        QCOMPARE(t->rowCount(), int(devices.size()));
        for (int r = 0; r < t->rowCount(); ++r) {
            QCOMPARE(t->item(r, DevicesPanel::Label)->text(),
                     QString::fromStdString(devices[size_t(r)].label));
            QCOMPARE(t->item(r, DevicesPanel::Uuid)->text(), QString::fromStdString(devices[size_t(r)].uuid));
            QCOMPARE(t->item(r, DevicesPanel::Role)->text(), QString::fromStdString(devices[size_t(r)].role));
        }
    }

    void malformedFileShowsErrorAndKeepsTheIncident()
    {
        const auto before = m_window->incident();
        const int rows = m_window->treePanel()->model()->rowCount();
        const QString bad = m_dir.filePath("broken.h5");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("\x89HDF\r\n\x1a\n", 8) + QByteArray(100, '\x01'));
        f.close();
        QSignalSpy error(m_window.get(), &MainWindow::errorShown);
        m_window->openFiles({bad});
        QTRY_COMPARE_WITH_TIMEOUT(error.count(), 1, 10000);
        QVERIFY2(m_window->lastError().contains(bad), qPrintable(m_window->lastError()));
        QVERIFY(m_window->page()->banner()->errorText().contains(bad));
        QVERIFY(!m_window->page()->banner()->progressVisible());
        QCOMPARE(m_window->incident(), before);
        QCOMPARE(m_window->treePanel()->model()->rowCount(), rows);
        m_window->page()->banner()->clearError();
    }

    void exportsThePlotAndTheTable()
    {
        QTemporaryDir out;
        m_window->page()->setCurrentPlot(m_window->page()->heatmap()->plot());
        const QString png = out.filePath("heatmap.png");
        QCOMPARE(m_window->exportCurrentPlot(png), QString());
        QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 100 && image.height() > 100);
        const QString pdf = out.filePath("heatmap.pdf");
        QCOMPARE(m_window->exportCurrentPlot(pdf), QString());
        QFile pdfFile(pdf);
        QVERIFY(pdfFile.open(QIODevice::ReadOnly));
        QVERIFY(pdfFile.read(5) == "%PDF-");

        const QString csv = out.filePath("tree.csv");
        QCOMPARE(m_window->exportCurrentTable(csv), QString());
        QFile csvFile(csv);
        QVERIFY(csvFile.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csvFile.readAll()).split('\n', Qt::SkipEmptyParts);
        QVERIFY(lines.size() > int(m_window->incident()->entries.size()));
        QCOMPARE(lines.front(),
                 QString("Name,Op,Beyond tol.,Max ULP,Signature,Mismatches,DType,Shape,Judge"));
        const IncidentEntry& e = firstEntry();
        bool found = false;
        for (const QString& line : lines)
            if (line.contains(QStringLiteral("#%1 gemm").arg(e.opIndex)) &&
                line.contains(QStringLiteral(",%1,").arg(e.divergence->beyondTolerance)) &&
                line.endsWith(QStringLiteral(",\"golden bound, strict\"")))
                found = true;
        QVERIFY2(found, qPrintable(lines.join('\n')));
        QVERIFY(m_window->exportCurrentPlot(out.filePath("plot.gif")).contains("plot.gif"));
    }

    void openingAnotherIncidentResetsEveryView()
    {
        QSignalSpy shown(m_window.get(), &MainWindow::incidentShown);
        m_window->openFiles({QString::fromStdString(m_demo.incidentCheckpoints.front()),
                             QString::fromStdString(m_demo.healthyCheckpoints.front())});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 20000);
        const auto inc = m_window->incident();
        QVERIFY(!inc->hasTrace());
        QVERIFY(inc->hasPair());
        QCOMPARE(m_window->devicesPanel()->traceDevices()->rowCount(), 0);
        QCOMPARE(m_window->page()->modelView()->source(), EntrySource::Tensor);
        QCOMPARE(m_window->page()->modelView()->shownEntries().size(),
                 inc->entriesOf(EntrySource::Tensor).size());
        QVERIFY(inc->storyEntry.has_value());
        QCOMPARE(m_window->page()->shownEntry(), *inc->storyEntry);
    }
};

QTEST_MAIN(TestIncidentViews)
#include "test_incident_views.moc"
