// The links view (views/LinksView, LinkMatrixModel) in the main window: a sweep results file of
// 8 ranks with a planted faulty link (5 -> 4, a stuck bit) and a planted faulty GPU (3) opens in
// the links view; the faulty link's cell carries its corrupted bytes and is marked, the faulty
// GPU is marked; its block fills the heatmap and bit views with a divergence whose mismatches are
// the corrupted words (all at bit 30); a healthy cell shows no divergence; an answer for a cell
// no longer selected is dropped; bandwidth colouring; a bad file is an error naming it. With an
// incident opened from files, the sweep opens beside it and the selected link's block is drawn
// under the matrix (its own heatmap) while the incident stays.
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "core/collectives/LinkMatrix.h"
#include "core/io/SnapshotWriter.h"
#include "views/fleet/LinksView.h"
#include "views/heatmap/HeatmapView.h"
#include "views/incident/IncidentPage.h"
#include "views/plots/BitHistogramView.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;

namespace {

QString writePlantedSweep(const QTemporaryDir& dir)
{
    SweepOptions o;
    for (size_t i = 0; i < 8; ++i)
        o.targets.push_back(i == 3   ? "sim:flip:rate=0.01"
                            : i == 5 ? "sim:healthy:link_to=4,link_bit=30,link_value=1"
                                     : "sim:healthy");
    o.bytes = 16384;
    o.reps = 1;
    auto r = runSweep(o);
    if (!r) qFatal("sweep: %s", r.message().c_str());
    const QString path = dir.filePath("sweep.h5");
    if (Status st = writeSweepResults(path.toStdString(), *r); !st) qFatal("%s", st.message().c_str());
    return path;
}

}  // namespace

class TestLinksView : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_sweep;

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("FaultlineTests");
        QCoreApplication::setApplicationName("test_links_view");
        QVERIFY(m_dir.isValid());
        m_sweep = writePlantedSweep(m_dir);
    }

    void aSweepFileOpensTheLinksViewWithTheFaultyLinksBlock()
    {
        MainWindow window;
        QSignalSpy links(&window, &MainWindow::linksShown);
        QSignalSpy incident(&window, &MainWindow::incidentShown);
        window.openFiles({m_sweep});
        QVERIFY(links.wait(20000));
        QCOMPARE(links.at(0).at(0).toString(), m_sweep);
        auto* dock = window.findChild<QDockWidget*>("linksDock");
        QVERIFY(dock && !dock->isHidden());
        LinksView* view = window.linksView();
        LinkMatrixModel* model = view->model();
        QCOMPARE(model->rowCount(), 8);
        QCOMPARE(model->columnCount(), 8);
        auto matrix = model->matrix();
        const LinkCell& bad = matrix->at(5, 4);
        QVERIFY(bad.corruptedBytes > 0);
        // The faulty link's cell carries its corrupted bytes and is marked; the GPU's diagonal too.
        const QModelIndex cell = model->index(5, 4);
        QCOMPARE(cell.data(LinkMatrixModel::ValueRole).toDouble(), double(bad.corruptedBytes));
        QVERIFY(cell.data(LinkMatrixModel::FaultyLinkRole).toBool());
        QVERIFY(cell.data(Qt::ToolTipRole).toString().contains("faulty link"));
        QVERIFY(model->index(3, 3).data(LinkMatrixModel::FaultyGpuRole).toBool());
        QVERIFY(model->headerData(3, Qt::Horizontal, Qt::DisplayRole).toString().contains("✗"));
        QVERIFY(!model->index(4, 5).data(LinkMatrixModel::FaultyLinkRole).toBool());
        QVERIFY(!model->index(2, 2).data(LinkMatrixModel::ValueRole).isValid());  // the diagonal is empty
        QVERIFY(view->summary()->text().contains("5→4"));
        auto* legend = view->findChild<QLabel*>("linksLegend");
        QVERIFY(legend && legend->text().contains("log scale"));
        // The story cell (the faulty link) is selected and its block compared off the GUI thread.
        QCOMPARE(view->selectedCell(), std::make_pair(5, 4));
        QVERIFY(incident.count() > 0 || incident.wait(20000));
        auto shown = window.incident();
        QVERIFY(shown && shown->hasPair());
        QCOMPARE(shown->compare->tensors.size(), size_t(1));
        const Divergence& d = shown->compare->tensors.front();
        // One repetition and one stuck bit: every corrupted byte is one corrupted word.
        QCOMPARE(d.mismatches, bad.corruptedBytes);
        const std::vector<double> bits = window.page()->bits()->shownCounts();
        QCOMPARE(bits.size(), size_t(32));
        QCOMPARE(bits[30], double(d.mismatches));
        double others = 0;
        for (size_t b = 0; b < bits.size(); ++b)
            if (b != 30) others += bits[b];
        QCOMPARE(others, 0.0);
        const HeatmapGrid& grid = window.page()->heatmap()->shownGrid();
        QVERIFY(!grid.empty());
        QVERIFY(grid.hottestCell().has_value());
        QVERIFY(view->detail()->text().contains(QString::number(d.mismatches)));

        // A healthy cell: no divergence shown, and why.
        view->selectCell(4, 5);
        QTRY_VERIFY_WITH_TIMEOUT(!window.incident(), 5000);
        QVERIFY(window.page()->heatmap()->shownGrid().empty());
        QVERIFY2(view->detail()->text().contains("arrived as sent"), qPrintable(view->detail()->text()));

        // The faulty GPU's transfers also stored their blocks.
        size_t partner = 8;
        for (size_t p = 0; p < 8; ++p)
            if (p != 3 && matrix->at(3, p).hasBlock()) partner = p;
        QVERIFY(partner < 8);
        incident.clear();
        view->selectCell(3, partner);
        QVERIFY(incident.wait(20000));
        QCOMPARE(window.incident()->compare->tensors.front().mismatches > 0, true);

        // An answer for a cell no longer selected is dropped: the healthy cell stays empty.
        view->selectCell(5, 4);
        view->selectCell(4, 5);
        QTest::qWait(1500);
        QVERIFY(!window.incident());
        QCOMPARE(view->selectedCell(), std::make_pair(4, 5));

        // Bandwidth colouring.
        view->metricBox()->setCurrentIndex(1);
        QCOMPARE(model->metric(), LinkMatrixModel::Metric::Bandwidth);
        QCOMPARE(model->index(5, 4).data(LinkMatrixModel::ValueRole).toDouble(), bad.gbps());
        QVERIFY(bad.gbps() > 0);
        QVERIFY2(legend->text().contains("GB/s"), qPrintable(legend->text()));
    }

    void aHealthySweepReplacesTheShownBlock()
    {
        SweepOptions o;
        o.targets.assign(4, "sim:healthy");
        o.bytes = 4096;
        auto r = runSweep(o);
        QVERIFY(r && r->healthy());
        const QString healthy = m_dir.filePath("healthy.h5");
        QVERIFY(writeSweepResults(healthy.toStdString(), *r).ok());
        MainWindow window;
        QSignalSpy incident(&window, &MainWindow::incidentShown);
        QSignalSpy links(&window, &MainWindow::linksShown);
        window.openFiles({m_sweep});
        QVERIFY(incident.wait(20000));
        QVERIFY(window.incident());
        window.openFiles({healthy});
        QTRY_COMPARE_WITH_TIMEOUT(links.count(), 2, 20000);
        QCOMPARE(window.linksView()->model()->rowCount(), 4);
        QCOMPARE(window.linksView()->selectedCell(), std::make_pair(-1, -1));
        QVERIFY(!window.incident());
        QVERIFY(window.linksView()->detail()->text().contains("nothing to compare"));
        QCOMPARE(window.linksView()->model()->index(0, 1).data(Qt::DisplayRole).toString(), QString("0"));
    }

    void theLinksBlockIsDrawnBesideAnOpenIncident()
    {
        // A snapshot pair that differs in one element, opened as the incident.
        const QString suspect = m_dir.filePath("suspect.h5"), reference = m_dir.filePath("reference.h5");
        for (const QString& path : {suspect, reference}) {
            std::vector<float> w(16, 1.0f);
            if (path == suspect) w[5] = 2.0f;
            auto writer = SnapshotWriter::create(path.toStdString(), {});
            QVERIFY(writer);
            QVERIFY(writer->writeTensor("w", DType::Float32, {4, 4}, w.data()).ok());
            QVERIFY(writer->close().ok());
        }
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QSignalSpy opened(&window, &MainWindow::incidentShown);
        window.openFiles({suspect, reference});
        QVERIFY(opened.wait(20000));
        const auto incident = window.incident();
        QVERIFY(incident && incident->hasPair());

        QSignalSpy links(&window, &MainWindow::linksShown);
        window.openFiles({m_sweep});
        QVERIFY(links.wait(20000));
        LinksView* view = window.linksView();
        QCOMPARE(view->selectedCell(), std::make_pair(5, 4));
        // The faulty link's block is compared off the GUI thread and drawn under the matrix.
        QTRY_VERIFY_WITH_TIMEOUT(view->shownBlock() != nullptr, 20000);
        QCOMPARE(window.incident(), incident);  // the incident stays
        HeatmapView* map = view->blockMap();
        QVERIFY(map->isVisible());
        const auto matrix = view->model()->matrix();
        const Divergence& d = view->shownBlock()->compare->tensors.front();
        QCOMPARE(d.mismatches, matrix->at(5, 4).corruptedBytes);
        QVERIFY(!map->shownGrid().empty());
        QVERIFY(map->shownGrid().hottestCell().has_value());
        QVERIFY(!map->regions().regions.empty());
        // The block's words are read for the readout: the worst element names both values.
        const ElementDiff& worst = d.top.front();
        QTRY_VERIFY_WITH_TIMEOUT(map->describeElement(worst.row, worst.col).contains("ulp"), 10000);
        QCOMPARE(window.incident(), incident);

        // A healthy cell: the map is hidden, the incident still open.
        view->selectCell(4, 5);
        QTRY_VERIFY_WITH_TIMEOUT(!view->shownBlock(), 5000);
        QVERIFY(map->isHidden());
        QCOMPARE(window.incident(), incident);
        // Back to the faulty link: drawn again.
        view->selectCell(5, 4);
        QTRY_VERIFY_WITH_TIMEOUT(view->shownBlock() != nullptr, 20000);
        QVERIFY(map->isVisible());

        const QString dir = qEnvironmentVariable("FAULTLINE_DOC_SCREENSHOTS");
        if (!dir.isEmpty()) {
            QTest::qWait(500);
            QVERIFY(window.grab().save(dir + "/screenshot-links-block.png"));
        }
    }

    void aBadSweepFileIsAnErrorNamingIt()
    {
        const QString path = m_dir.filePath("newer.h5");
        {
            auto w = SnapshotWriter::create(path.toStdString(), {.inMemory = true});
            QVERIFY(w);
            QVERIFY(w->setRootAttribute("faultline_format", std::string("sweep")).ok());
            QVERIFY(w->setRootAttribute("faultline_version", int64_t(7)).ok());
            const std::string text = "{}";
            QVERIFY(w->writeTensor("report_json", DType::UInt8, {text.size()}, text.data()).ok());
            QVERIFY(w->close().ok());
        }
        MainWindow window;
        QSignalSpy errors(&window, &MainWindow::errorShown);
        window.openFiles({path});
        QVERIFY(errors.wait(20000));
        const QString message = errors.at(0).at(0).toString();
        QVERIFY2(message.startsWith(path + ": ") && message.contains("version 7"), qPrintable(message));
        QVERIFY(window.findChild<QDockWidget*>("linksDock")->isHidden());
    }
};

QTEST_MAIN(TestLinksView)
#include "test_links_view.moc"
