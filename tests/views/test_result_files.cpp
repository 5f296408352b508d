// Every file Faultline writes opens in the GUI, read-only, beside the open incident: the demo
// incident (built by `faultline demo`) is opened through File > Open Incident with real keys,
// clicks and a drop onto a slot; a second Open adds a snapshot pair to the open trace; then the
// demo's campaign results (`replay --out`), a sweep (`sweep --out`), a health report (`health
// --json`) and an evidence bundle (`evidence --out`) are dropped onto the window. Each opens in a
// view of its own showing what its file says (the campaign's verdicts, failures and rates; the
// sweep's ranks; the bundle's check and roles), and the incident stays open throughout.
// The longest GUI-thread stall of each journey is printed (bench/RESULTS.md) and fails the test
// only when gross (StallProbe::kGrossStallMs).
#include <qcustomplot.h>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPointer>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "core/compare/CompareResultsFile.h"
#include "core/replay/CampaignResultsFile.h"
#include "core/replay/Statistics.h"
#include "support/StallProbe.h"
#include "support/TestSupport.h"
#include "views/fleet/LinkMatrixModel.h"
#include "views/fleet/LinksView.h"
#include "views/heatmap/ComparisonHeatmap.h"
#include "views/heatmap/HeatmapView.h"
#include "views/incident/IncidentBanner.h"
#include "views/incident/IncidentPage.h"
#include "views/incident/OpenIncidentDialog.h"
#include "views/plots/BitHistogramView.h"
#include "views/plots/ErrorDistributionView.h"
#include "views/results/ResultTableModel.h"
#include "views/results/ResultTabs.h"
#include "views/results/ResultView.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;
using faultline::test::runProcess;
using faultline::test::StallProbe;

namespace {

test::ProcessResult faultlineCli(const QStringList& args)
{
    return runProcess(QStringLiteral(FAULTLINE_EXE), args, 300000);
}

QString fixture(const QString& name)
{
    return test::sourcePath("tests/fixtures/evidence/" + name);
}

// Drops `paths` onto `target` as a file manager would: drag enter, then drop.
bool dropFiles(QWidget* target, const QStringList& paths)
{
    QMimeData mime;
    QList<QUrl> urls;
    for (const QString& p : paths) urls << QUrl::fromLocalFile(p);
    mime.setUrls(urls);
    const QPoint at = target->rect().center();
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &enter);
    if (!enter.isAccepted()) return false;
    QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &drop);
    return true;
}

// The first row of `model` whose column `column` reads `text`, or -1.
int rowWith(const ResultTableModel* model, const QString& column, const QString& text)
{
    const int c = model->column(column);
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->index(r, c).data().toString() == text) return r;
    return -1;
}

QString cell(const ResultTableModel* model, int row, const QString& column)
{
    return model->index(row, model->column(column)).data().toString();
}

// Prints the journey's longest stall and fails on a gross one.
void reportStall(const StallProbe& probe)
{
    qInfo("%s", qPrintable(probe.summary()));
    QVERIFY2(probe.longest() < StallProbe::kGrossStallMs, qPrintable(probe.summary()));
}

// File > Open Incident by its shortcut, in the main window (active again once a dialog closed).
void pressOpenIncident(MainWindow& window)
{
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_O, Qt::ControlModifier);
}

// The Open Incident dialog once it is shown (an earlier one may still await its deletion).
QPointer<OpenIncidentDialog> waitForOpenDialog(MainWindow& window)
{
    QPointer<OpenIncidentDialog> dialog;
    (void)QTest::qWaitFor(
        [&] {
            for (OpenIncidentDialog* d : window.findChildren<OpenIncidentDialog*>())
                if (d->isVisible()) dialog = d;
            return !dialog.isNull();
        },
        5000);
    return dialog;
}

}  // namespace

class TestResultFiles : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace, m_suspect, m_reference, m_campaign, m_sweep, m_bundle, m_health, m_compare;
    std::unique_ptr<MainWindow> m_window;

    QString path(const QString& name) const { return m_dir.filePath(name); }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("FaultlineTests");
        QCoreApplication::setApplicationName("test_result_files");
        QSettings().clear();
        qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        QVERIFY(m_dir.isValid());
        // Every input is made by the real CLI, as a user would make it.
        auto demo = faultlineCli({"demo", "--headless", "--out", path("incident")});
        QVERIFY2(demo.exitCode == 0, demo.err.constData());
        m_trace = path("incident/incident-trace.h5");
        m_campaign = path("incident/replay-results.h5");
        QVERIFY2(QFile::exists(m_trace) && QFile::exists(m_campaign), demo.out.constData());
        // The last step of the suspect rank, in the incident run and in the healthy one.
        m_suspect = path("incident/checkpoints/incident/step-003-rank-1.h5");
        m_reference = path("incident/checkpoints/healthy/step-003-rank-1.h5");
        QVERIFY(QFile::exists(m_suspect) && QFile::exists(m_reference));
        auto sweep = faultlineCli({"sweep", "--targets",
                                   "sim:healthy,sim:flip:rate=0.01,sim:healthy,sim:healthy,sim:healthy",
                                   "--bytes", "16384", "--reps", "1", "--out", path("sweep.h5")});
        QVERIFY2(sweep.exitCode == 1, sweep.err.constData());
        m_sweep = path("sweep.h5");
        m_bundle = path("case-1");
        auto evidence =
            faultlineCli({"evidence", "--out", m_bundle, "--case-id", "CASE-1", "--campaign", m_campaign,
                          "--logs", fixture("dmesg-incident.log"), "--nvidia-smi",
                          fixture("nvidia-smi-before-reset.xml"), fixture("nvidia-smi-after-reset.xml")});
        QVERIFY2(evidence.exitCode == 0, evidence.err.constData());
        auto health = faultlineCli({"health", "--logs", fixture("dmesg-incident.log"), "--nvidia-smi",
                                    fixture("nvidia-smi-before-reset.xml"), "--json"});
        QVERIFY2(health.exitCode == 0 || health.exitCode == 1, health.err.constData());
        m_compare = path("compare.h5");
        auto compare = faultlineCli({"compare", m_suspect, m_reference, "--out", m_compare, "--quiet"});
        QVERIFY2(compare.exitCode == 0 || compare.exitCode == 1, compare.err.constData());
        m_health = path("health-report");  // no suffix: the content decides
        QFile h(m_health);
        QVERIFY(h.open(QIODevice::WriteOnly));
        h.write(health.out);
        h.close();

        m_window = std::make_unique<MainWindow>();
        m_window->show();
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    }

    void cleanupTestCase() { m_window.reset(); }

    void opensAnIncidentThroughTheDialog()
    {
        QSignalSpy shown(m_window.get(), &MainWindow::incidentShown);
        StallProbe probe(QStringLiteral("open an incident through the dialog"));
        // File > Open Incident by its shortcut.
        probe.step(QStringLiteral("the dialog opens"));
        pressOpenIncident(*m_window);
        QPointer<OpenIncidentDialog> dialog = waitForOpenDialog(*m_window);
        QVERIFY(dialog);
        QVERIFY(!dialog->openButton()->isEnabled());  // nothing chosen yet
        QVERIFY(!dialog->problem().isEmpty());
        // A reference alone cannot be opened: it needs its suspect.
        QTest::keyClicks(dialog->referenceSlot(), m_reference);
        QVERIFY(!dialog->openButton()->isEnabled());
        QVERIFY(dialog->problem().contains("suspect"));
        dialog->referenceSlot()->clear();
        // The trace, typed into its slot.
        dialog->traceSlot()->setFocus();
        QTest::keyClicks(dialog->traceSlot(), m_trace);
        QVERIFY2(dialog->openButton()->isEnabled(), qPrintable(dialog->problem()));
        probe.step(QStringLiteral("opening the trace"));
        QTest::mouseClick(dialog->openButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        QVERIFY(m_window->incident()->hasTrace());
        QVERIFY(!m_window->incident()->hasPair());
        reportStall(probe);
    }

    void aSecondOpenAddsToTheOpenIncident()
    {
        const auto before = m_window->incident();
        QVERIFY(before && before->hasTrace());
        QSignalSpy shown(m_window.get(), &MainWindow::incidentShown);
        pressOpenIncident(*m_window);
        QPointer<OpenIncidentDialog> dialog = waitForOpenDialog(*m_window);
        QVERIFY(dialog);
        // The open incident's trace is in its slot: Open adds to it.
        QCOMPARE(dialog->traceSlot()->text(), m_trace);
        QVERIFY(dialog->suspectSlot()->text().isEmpty());
        // The suspect dropped onto its slot, the reference typed.
        QVERIFY(dropFiles(dialog->suspectSlot(), {m_suspect}));
        QCOMPARE(dialog->suspectSlot()->text(), m_suspect);
        dialog->referenceSlot()->setFocus();
        QTest::keyClicks(dialog->referenceSlot(), m_reference);
        QCOMPARE(dialog->paths(), QStringList({m_trace, m_suspect, m_reference}));
        StallProbe probe(QStringLiteral("add a snapshot pair to the open incident through the dialog"));
        probe.step(QStringLiteral("opening the trace and the pair"));
        QTest::keyClick(dialog->referenceSlot(), Qt::Key_Return);  // Enter opens, as the default button
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 120000);
        reportStall(probe);
        const auto after = m_window->incident();
        QVERIFY(after->hasTrace() && after->hasPair());
        QCOMPARE(after->paths, QStringList({m_trace, m_suspect, m_reference}));
        // The recent incidents remember it; the next dialog lists it.
        pressOpenIncident(*m_window);
        dialog = waitForOpenDialog(*m_window);
        QVERIFY(dialog);
        QVERIFY(dialog->recentList()->count() >= 2);
        QCOMPARE(dialog->recentList()->item(0)->data(Qt::UserRole).toStringList(), after->paths);
        QTest::keyClick(dialog, Qt::Key_Escape);
        QTRY_VERIFY(!dialog || !dialog->isVisible());
    }

    void aCampaignOpensBesideTheIncident()
    {
        const auto incident = m_window->incident();
        QVERIFY(incident);
        QSignalSpy shown(m_window.get(), &MainWindow::resultShown);
        QSignalSpy reopened(m_window.get(), &MainWindow::incidentShown);
        StallProbe probe(QStringLiteral("open a campaign beside the incident"));
        probe.step(QStringLiteral("dropping the campaign"));
        QVERIFY(dropFiles(m_window.get(), {m_campaign}));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 30000);
        QTest::qWait(200);  // the tab's first paint
        reportStall(probe);
        QCOMPARE(shown.at(0).at(0).toString(), m_campaign);
        // The incident was not touched.
        QCOMPARE(m_window->incident(), incident);
        QCOMPARE(reopened.count(), 0);
        QVERIFY(!m_window->findChild<QDockWidget*>("resultsDock")->isHidden());
        ResultView* view = m_window->resultTabs()->viewOf(m_campaign);
        QVERIFY(view);
        QCOMPARE(view->kind(), ResultKind::Campaign);
        QVERIFY(view->headline()->text().contains("incident-trace.h5"));

        // The verdicts, failures and rates are the file's.
        auto doc = readCampaignResults(m_campaign.toStdString());
        QVERIFY(doc);
        const ResultTableModel* verdicts = view->model("Verdicts");
        QVERIFY(verdicts);
        QCOMPARE(size_t(verdicts->rowCount()), (*doc)["targets"].size());
        bool someFailed = false;
        for (const auto& t : (*doc)["targets"]) {
            const int row =
                rowWith(verdicts, "Target", QString::fromStdString(t["target"].get<std::string>()));
            QVERIFY(row >= 0);
            QCOMPARE(cell(verdicts, row, "Verdict"), QString::fromStdString(t["verdict"].get<std::string>()));
            const uint64_t failures = t["failures"].get<uint64_t>(), runs = t["runs"].get<uint64_t>();
            QCOMPARE(cell(verdicts, row, "Failures/runs"), QStringLiteral("%1/%2").arg(failures).arg(runs));
            QCOMPARE(cell(verdicts, row, "Reason"),
                     QString::fromStdString(t["explanation"].get<std::string>()));
            if (failures > 0) {
                someFailed = true;
                const RateInterval r{t["rate"].get<double>(), t["ci"][0].get<double>(),
                                     t["ci"][1].get<double>()};
                QCOMPARE(cell(verdicts, row, "Rate (95% CI)"), QString::fromStdString(rateText(r)));
            }
        }
        QVERIFY(someFailed);  // the demo's suspect stand-in fails
        const ResultTableModel* ops = view->model("Ops");
        QVERIFY(ops && ops->rowCount() > 0);
        const ResultTableModel* runs = view->model("Runs");
        QVERIFY(runs);
        QCOMPARE(size_t(runs->rowCount()), (*doc)["runs"].size());

        // A header click sorts by the failures (by number, not as text).
        QTableView* table = view->tableView("Verdicts");
        QVERIFY(table);
        const int column = verdicts->column("Failures/runs");
        QHeaderView* header = table->horizontalHeader();
        const QPoint click(header->sectionViewportPosition(column) + header->sectionSize(column) / 2,
                           header->height() / 2);
        view->sections()->setCurrentIndex(0);
        QTest::mouseClick(header->viewport(), Qt::LeftButton, Qt::NoModifier, click);
        QCOMPARE(header->sortIndicatorSection(), column);
        const double first = table->model()->index(0, column).data(ResultTableModel::SortRole).toDouble();
        const double last = table->model()
                                ->index(table->model()->rowCount() - 1, column)
                                .data(ResultTableModel::SortRole)
                                .toDouble();
        const bool descending = header->sortIndicatorOrder() == Qt::DescendingOrder;
        QVERIFY2(descending ? first >= last : first <= last,
                 qPrintable(QStringLiteral("%1, %2").arg(first).arg(last)));
        QVERIFY(first != last);  // the demo's targets differ in failures
    }

    void aSweepOpensInTheLinksViewBesideTheIncident()
    {
        const auto incident = m_window->incident();
        QSignalSpy shown(m_window.get(), &MainWindow::linksShown);
        StallProbe probe(QStringLiteral("open a sweep beside the incident"));
        probe.step(QStringLiteral("dropping the sweep"));
        QVERIFY(dropFiles(m_window.get(), {m_sweep}));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 30000);
        QVERIFY(!m_window->findChild<QDockWidget*>("linksDock")->isHidden());
        QCOMPARE(m_window->linksView()->model()->rowCount(), 5);
        QVERIFY(m_window->linksView()->model()->index(1, 1).data(LinkMatrixModel::FaultyGpuRole).toBool());
        // The story link's block is compared off the GUI thread; the incident stays.
        QTest::qWait(1500);
        QCOMPARE(m_window->incident(), incident);
        reportStall(probe);
    }

    void aHealthReportAndABundleOpenBesideTheIncident()
    {
        const auto incident = m_window->incident();
        QSignalSpy shown(m_window.get(), &MainWindow::resultShown);
        StallProbe probe(QStringLiteral("open a health report and a bundle beside the incident"));
        probe.step(QStringLiteral("dropping the health report and the bundle"));
        QVERIFY(dropFiles(m_window.get(), {m_health, m_bundle}));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 30000);
        QTest::qWait(200);  // the tabs' first paint
        reportStall(probe);
        QCOMPARE(m_window->incident(), incident);

        ResultView* health = m_window->resultTabs()->viewOf(m_health);
        QVERIFY(health);
        QCOMPARE(health->kind(), ResultKind::Health);
        const ResultTableModel* gpus = health->model("GPUs");
        QVERIFY(gpus && gpus->rowCount() > 0);
        QVERIFY(rowWith(gpus, "Serial", "1652822001234") >= 0);

        ResultView* bundle = m_window->resultTabs()->viewOf(m_bundle);
        QVERIFY(bundle);
        QCOMPARE(bundle->kind(), ResultKind::Evidence);
        // verify's result leads.
        QVERIFY2(bundle->headline()->text().contains("Intact"), qPrintable(bundle->headline()->text()));
        QCOMPARE(bundle->model("Check")->rowCount(), 0);
        const ResultTableModel* targets = bundle->model("Targets");
        QVERIFY(targets);
        const int cpu = rowWith(targets, "Target", "cpu");
        QVERIFY(cpu >= 0);
        QCOMPARE(cell(targets, cpu, "Role"), QString("golden"));
        QVERIFY(bundle->model("Files")->rowCount() > 5);

        // A changed bundle file is found and named, and the archive opens too.
        QFile report(m_bundle + "/report.md");
        QVERIFY(report.open(QIODevice::Append));
        report.write("\nchanged\n");
        report.close();
        shown.clear();
        QVERIFY(dropFiles(m_window.get(), {m_bundle, m_bundle + ".tar"}));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 30000);
        bundle = m_window->resultTabs()->viewOf(m_bundle);
        QVERIFY(bundle->headline()->text().contains("NOT intact"));
        QVERIFY(rowWith(bundle->model("Check"), "Path", "report.md") >= 0);
        ResultView* tar = m_window->resultTabs()->viewOf(m_bundle + ".tar");
        QVERIFY(tar && tar->headline()->text().contains("Intact"));
        QCOMPARE(m_window->incident(), incident);
        QCOMPARE(m_window->resultTabs()->count(), 4);  // campaign, health, bundle, archive
    }

    void aFileThatIsNoResultIsAnErrorNamingIt()
    {
        const auto incident = m_window->incident();
        const QString other = path("notes.json");
        QFile f(other);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(nlohmann::json{{"format", "someone-else"}}.dump()));
        f.close();
        QSignalSpy errors(m_window.get(), &MainWindow::errorShown);
        QVERIFY(dropFiles(m_window.get(), {other}));
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, 10000);
        QVERIFY2(m_window->lastError().startsWith(other + ": "), qPrintable(m_window->lastError()));
        QCOMPARE(m_window->incident(), incident);
    }

    // `compare --out` opened beside the incident is drawn: its tensors, most severe first, each
    // tensor's tiles in a heatmap with the anomaly regions (W zooms to the worst), not only tabled.
    void aComparisonOpensInTheHeatmapBesideTheIncident()
    {
        const auto incident = m_window->incident();
        QSignalSpy shown(m_window.get(), &MainWindow::resultShown);
        StallProbe probe(QStringLiteral("open a comparison beside the incident"));
        probe.step(QStringLiteral("dropping the comparison"));
        QVERIFY(dropFiles(m_window.get(), {m_compare}));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 30000);
        QTest::qWait(200);  // the tab's first paint
        reportStall(probe);
        QCOMPARE(m_window->incident(), incident);
        ResultView* view = m_window->resultTabs()->viewOf(m_compare);
        QVERIFY(view);
        QCOMPARE(view->kind(), ResultKind::Compare);
        QTRY_VERIFY(view->comparison());
        ComparisonHeatmap* drawn = view->comparison();
        QCOMPARE(view->sections()->currentWidget(), drawn);
        auto back = readCompareResults(m_compare.toStdString());
        QVERIFY(back);
        QCOMPARE(size_t(drawn->tensors()->count()), back->tensors.size());
        // The most severe tensor first, drawn from the file's tiles.
        const Divergence& worst = back->tensors.front();
        QVERIFY(drawn->tensors()->itemText(0).startsWith(QString::fromStdString(worst.name)));
        QVERIFY(worst.mismatches > 0);
        HeatmapView* heatmap = drawn->heatmap();
        QTRY_VERIFY(!heatmap->shownGrid().empty());
        QVERIFY(heatmap->shownGrid().hottestCell().has_value());
        QVERIFY(!heatmap->regions().regions.empty());
        QVERIFY2(heatmap->infoText().contains("mismatches"), qPrintable(heatmap->infoText()));
        QVERIFY2(heatmap->infoText().contains("the tiles, not the values"), qPrintable(heatmap->infoText()));
        // W on the map zooms to the worst region; the hover names its tile's counts.
        heatmap->plot()->setFocus();
        QTest::keyClick(heatmap->plot(), Qt::Key_W);
        QCOMPARE(heatmap->currentRegion(), 0);
        const Region& box = heatmap->regions().regions.front().box;
        const QString hover = heatmap->describeElement(box.rowBegin, box.colBegin);
        QVERIFY2(hover.contains("mismatches"), qPrintable(hover));
        // Beside the map, the tensor's bit positions and error sizes, from the file's counts.
        const std::vector<double> bits = drawn->bitHistogram()->shownCounts();
        QCOMPARE(bits.size(), std::min(worst.bits.flips.size(), size_t(bitLayout(worst.dtype).totalBits)));
        for (size_t b = 0; b < bits.size(); ++b) QCOMPARE(bits[b], double(worst.bits.flips[b]));
        std::vector<std::pair<double, double>> ulps;
        for (size_t k = 0; k < worst.ulpHistogram.size(); ++k)
            if (worst.ulpHistogram[k]) ulps.push_back({double(k), double(worst.ulpHistogram[k])});
        QVERIFY(!ulps.empty());
        QCOMPARE(drawn->errorDistribution()->ulpBars(), ulps);
        QVERIFY(!drawn->errorDistribution()->decadeBars().empty());
        QVERIFY2(drawn->plotsNote()->text().contains("no element values"),
                 qPrintable(drawn->plotsNote()->text()));
        // Another tensor chosen in the list is drawn, and its plots follow it.
        if (drawn->tensors()->count() > 1) {
            QSignalSpy redrawn(heatmap, &HeatmapView::gridChanged);
            drawn->tensors()->setCurrentIndex(1);
            QVERIFY(redrawn.count() > 0);
            const Divergence& second = back->tensors[1];
            uint64_t drawnFlips = 0, inFile = 0;
            for (double n : drawn->bitHistogram()->shownCounts()) drawnFlips += uint64_t(n);
            for (uint64_t n : second.bits.flips) inFile += n;
            QCOMPARE(drawnFlips, inFile);
            drawn->tensors()->setCurrentIndex(0);
        }
    }

    // With FAULTLINE_DOC_SCREENSHOTS=DIR: the dialog, and the campaign opened beside the incident.
    void screenshots()
    {
        const QString dir = qEnvironmentVariable("FAULTLINE_DOC_SCREENSHOTS");
        if (dir.isEmpty()) QSKIP("FAULTLINE_DOC_SCREENSHOTS is not set");
        ResultView* campaign = m_window->resultTabs()->viewOf(m_campaign);
        QVERIFY(campaign);
        m_window->resultTabs()->setCurrentWidget(campaign);
        m_window->page()->banner()->clearError();  // the previous test's
        m_window->resize(1600, 1000);
        QTest::qWait(500);
        QVERIFY(m_window->grab().save(dir + "/screenshot-results-campaign.png"));
        pressOpenIncident(*m_window);
        QPointer<OpenIncidentDialog> dialog = waitForOpenDialog(*m_window);
        QVERIFY(dialog);
        QTest::qWait(300);
        QVERIFY(dialog->grab().save(dir + "/screenshot-open-incident.png"));
        dialog->reject();
        // The comparison drawn beside the incident, zoomed to its worst region.
        ResultView* compare = m_window->resultTabs()->viewOf(m_compare);
        QVERIFY(compare && compare->comparison());
        m_window->resultTabs()->setCurrentWidget(compare);
        compare->comparison()->showTensor(0);
        compare->sections()->setCurrentWidget(compare->comparison());
        auto* dock = m_window->findChild<QDockWidget*>("resultsDock");
        m_window->resizeDocks({dock}, {m_window->height() * 3 / 5}, Qt::Vertical);
        QTest::qWait(500);
        QVERIFY(m_window->grab().save(dir + "/screenshot-results-compare.png"));
    }
};

QTEST_MAIN(TestResultFiles)
#include "test_result_files.moc"
