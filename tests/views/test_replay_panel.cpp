// The replay panel on the demo incident: a campaign on the golden model and the suspect's
// simulated defect gives their verdicts in the live table; a long campaign (a hanging device,
// short timeout, many repetitions) cancels promptly and the panel says so and returns to idle;
// the reference target decides between two peers that differ bitwise; until a rate is ruled out
// (replay --until-rate), a healthy target stops by confidence and a flipping one at its first
// failure, and the table says so in the CLI's words, as a saved results file does.
#include <QComboBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "DemoWindow.h"
#include "core/demo/DemoIncident.h"
#include "core/replay/CampaignSummary.h"
#include "core/replay/StoppingRule.h"
#include "core/replay/TargetSpec.h"
#include "views/plots/PlotStyle.h"
#include "views/replay/AdaptiveStopsModel.h"
#include "views/replay/RepetitionOptions.h"
#include "views/replay/ReplayPanel.h"
#include "views/replay/ReplayResultsModel.h"
#include "views/results/ResultTableModel.h"
#include "views/results/ResultTabs.h"
#include "views/results/ResultView.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;

class TestReplayPanel : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    DemoIncident m_demo;
    std::unique_ptr<MainWindow> m_window;

private slots:
    void initTestCase()
    {
        const QString error = openDemoWindow(m_dir, "test_replay_panel", m_demo, m_window, QSize(1536, 960));
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    void cleanupTestCase() { m_window.reset(); }

    void preselectsTheSuspectsDefect()
    {
        ReplayPanel* panel = m_window->replayPanel();
        const QString defect = QString::fromStdString(parseTargetSpec(m_demo.suspectDefect)->text);
        QVERIFY(panel->checkedTargets().contains("cpu"));
        QVERIFY(panel->checkedTargets().contains(defect));
        QCOMPARE(panel->opSelection(), ReplayPanel::OpSelection::Divergent);
        QCOMPARE(panel->opSelectionText(), m_window->incident()->divergentOpSelection());
        QVERIFY(panel->availableTargets().contains("sim:hang"));
        QVERIFY(!panel->isRunning());
    }

    void replayGivesVerdictsPerTarget()
    {
        ReplayPanel* panel = m_window->replayPanel();
        const QString defect = QString::fromStdString(parseTargetSpec(m_demo.suspectDefect)->text);
        panel->setOpSelection(ReplayPanel::OpSelection::Divergent);
        QVERIFY(panel->setCheckedTargets({"cpu", defect}));
        panel->setReps(2);
        panel->setTimeoutMs(30000);
        QSignalSpy finished(panel, &ReplayPanel::finished);
        QSignalSpy failed(panel, &ReplayPanel::failed);
        QVERIFY2(panel->start(), qPrintable(panel->lastError()));
        QVERIFY(panel->isRunning());
        QVERIFY(!m_window->findChild<QPushButton*>("replayRun")->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() >= 1, 60000);
        QVERIFY2(failed.isEmpty(), qPrintable(panel->lastError()));
        QCOMPARE(finished.front().front().toBool(), false);

        const qulonglong ops = qulonglong(m_window->incident()->divergentOpSelection().split(',').size());
        ReplayResultsModel* m = panel->resultsModel();
        QCOMPARE(m->rowCount(), 2);
        // The golden model never fails; the suspect's defect fails every run of the divergent GEMMs.
        QCOMPARE(m->runsOf("cpu"), ops * 2);
        QCOMPARE(m->failuresOf("cpu"), 0ull);
        QCOMPARE(m->verdictOf("cpu"), QString("healthy"));
        QCOMPARE(m->runsOf(defect), ops * 2);
        QCOMPARE(m->failuresOf(defect), ops * 2);
        const QString verdict = m->verdictOf(defect);
        QVERIFY2(verdict == "persistent" || verdict == "device-specific", qPrintable(verdict));
        const int row = m->rowOf(defect);
        QCOMPARE(m->data(m->index(row, ReplayResultsModel::Rate)).toString(),
                 QString("%1/%1 (100%)").arg(ops * 2));
        QCOMPARE(m->data(m->index(m->rowOf("cpu"), ReplayResultsModel::Rate)).toString(),
                 QString("0/%1 (0%)").arg(ops * 2));
        // Every run failed: the interval's upper end is 100%, its lower end below it.
        const QString interval = m->data(m->index(row, ReplayResultsModel::Interval)).toString();
        QVERIFY2(interval.endsWith("–100%") && !interval.startsWith("100"), qPrintable(interval));
        QCOMPARE(
            m->data(m->index(row, ReplayResultsModel::Verdict), Qt::ForegroundRole).value<QBrush>().color(),
            PlotStyle::verdictColor(parseVerdict(verdict.toStdString())));
        // Readable at the dock's size: target, verdict, failures and interval are on screen, the
        // verdict and the numbers unclipped; a long target is elided, its spec in the tooltip.
        QTableView* table = panel->resultsView();
        const QAbstractItemView* view = table;  // sizeHintForColumn is public here
        m_window->findChild<QDockWidget*>("replayDock")->raise();
        QTRY_VERIFY(view->isVisible());
        int shown = 0;
        for (int c : {ReplayResultsModel::Target, ReplayResultsModel::Verdict, ReplayResultsModel::Rate,
                      ReplayResultsModel::Interval}) {
            QVERIFY(!table->isColumnHidden(c));
            if (c != ReplayResultsModel::Target)
                QVERIFY2(table->columnWidth(c) >= view->sizeHintForColumn(c),
                         qPrintable(QString("column %1: %2 < %3")
                                        .arg(c)
                                        .arg(table->columnWidth(c))
                                        .arg(view->sizeHintForColumn(c))));
            shown += table->columnWidth(c);
        }
        QVERIFY2(shown <= view->viewport()->width(),
                 qPrintable(
                     QString("%1 px of columns in a %2 px table").arg(shown).arg(view->viewport()->width())));
        QVERIFY(table->isColumnHidden(ReplayResultsModel::Runs) &&
                table->isColumnHidden(ReplayResultsModel::Failures));
        QVERIFY(m->data(m->index(row, ReplayResultsModel::Target), Qt::ToolTipRole)
                    .toString()
                    .startsWith(defect));
        QVERIFY(panel->stateText().startsWith("Finished"));
        QVERIFY(!panel->isRunning());
        QVERIFY(m_window->findChild<QPushButton*>("replayRun")->isEnabled());
    }

    void cancellingALongReplayReturnsToIdle()
    {
        ReplayPanel* panel = m_window->replayPanel();
        const QString hang = QString::fromStdString(parseTargetSpec("sim:hang:after=1")->text);
        panel->setOpSelection(ReplayPanel::OpSelection::All);
        QVERIFY(panel->setCheckedTargets({hang}));
        panel->setReps(50);
        panel->setTimeoutMs(800);
        QSignalSpy finished(panel, &ReplayPanel::finished);
        QSignalSpy failed(panel, &ReplayPanel::failed);
        QVERIFY2(panel->start(), qPrintable(panel->lastError()));
        // Let it record a run or two (one ok, then a hang at the timeout).
        QTRY_VERIFY_WITH_TIMEOUT(panel->resultsModel()->runsOf(hang) >= 1, 20000);
        QElapsedTimer timer;
        timer.start();
        panel->cancel();
        QVERIFY(panel->stateText().startsWith("Cancelling"));
        QVERIFY(!m_window->findChild<QPushButton*>("replayCancel")->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() >= 1, 15000);
        QVERIFY2(failed.isEmpty(), qPrintable(panel->lastError()));
        QVERIFY(timer.elapsed() < 10000);
        QCOMPARE(finished.front().front().toBool(), true);  // cancelled
        QVERIFY(!panel->isRunning());
        QVERIFY2(panel->stateText().startsWith("Cancelled"), qPrintable(panel->stateText()));
        ReplayResultsModel* m = panel->resultsModel();
        const int row = m->rowOf(hang);
        QVERIFY(row >= 0);
        QVERIFY(m->data(m->index(row, ReplayResultsModel::Verdict)).toString().contains("partial"));
        const qulonglong total = qulonglong(m_window->incident()->bisect->ops.size()) * 50;
        QVERIFY(m->runsOf(hang) < total);
        QVERIFY(m_window->findChild<QPushButton*>("replayRun")->isEnabled());
    }

    void referenceDecidesBetweenTwoPeers()
    {
        // Two simulated GPUs of one kind running a production BLAS; one flips low mantissa bits,
        // which stays inside the GEMM bound. Only a bitwise comparison of the peers sees it, and
        // with two peers only the reference says which one is right.
        ReplayPanel* panel = m_window->replayPanel();
        const QString healthy = "sim:healthy:library=blas";
        const QString flip = "sim:flip:bit_hi=1+bit_lo=0+library=blas+op=gemm+rate=0.02";
        panel->setOpSelection(ReplayPanel::OpSelection::Divergent);
        QVERIFY(panel->setCheckedTargets({healthy, flip}));
        panel->setReps(2);
        panel->setTimeoutMs(30000);
        auto* combo = m_window->findChild<QComboBox*>("replayReference");
        QVERIFY(combo);
        QCOMPARE(combo->count(), 3);                // the majority and the two checked targets
        QVERIFY(!panel->setReference("sim:hang"));  // not checked
        QVERIFY(!panel->setReference("sim:no-such-model"));
        QVERIFY(panel->setReference(QString()));
        auto runCampaign = [&]() -> std::shared_ptr<const CampaignReport> {
            QSignalSpy finished(panel, &ReplayPanel::finished);
            QSignalSpy failed(panel, &ReplayPanel::failed);
            if (!panel->start()) return nullptr;
            if (!QTest::qWaitFor([&] { return finished.count() + failed.count() >= 1; }, 60000))
                return nullptr;
            return failed.isEmpty() ? panel->lastReport() : nullptr;
        };
        auto summary = [](const CampaignReport& r, const QString& target) {
            for (const TargetSummary& t : r.targets)
                if (t.target == target.toStdString()) return t;
            return TargetSummary{};
        };

        auto report = runCampaign();
        QVERIFY2(report, qPrintable(panel->lastError()));
        QVERIFY(report->reference.empty());
        QVERIFY(!report->peers.empty());
        for (const PeerGroup& g : report->peers) QCOMPARE(g.basis, PeerBasis::None);
        QCOMPARE(summary(*report, healthy).verdict, Verdict::Healthy);
        QVERIFY(!summary(*report, flip).peerSplitOps.empty());
        const int row = panel->resultsModel()->rowOf(flip);
        QVERIFY(panel->resultsModel()
                    ->data(panel->resultsModel()->index(row, ReplayResultsModel::Target), Qt::ToolTipRole)
                    .toString()
                    .contains("nothing to decide"));

        QVERIFY(panel->setReference(healthy));
        QCOMPARE(combo->currentText(), healthy);
        report = runCampaign();
        QVERIFY2(report, qPrintable(panel->lastError()));
        QCOMPARE(report->reference, healthy.toStdString());
        QCOMPARE(summary(*report, healthy).verdict, Verdict::Healthy);
        QCOMPARE(summary(*report, flip).verdict, Verdict::DeviceSpecific);
        QCOMPARE(panel->resultsModel()->verdictOf(flip), QString("device-specific"));
        // Unchecking the reference falls back to the majority.
        QVERIFY(panel->setCheckedTargets({flip}));
        QCOMPARE(panel->reference(), QString());
        QCOMPARE(combo->count(), 2);
    }

    void untilRateFieldsSayWhatIsWrong_data()
    {
        QTest::addColumn<QString>("rate");
        QTest::addColumn<double>("confidence");
        QTest::addColumn<QString>("budget");
        QTest::addColumn<QString>("error");
        QTest::newRow("not a rate") << "often" << 0.95 << ""
                                    << "'often'";
        QTest::newRow("rate too high") << "0.9" << 0.95 << ""
                                       << "between 1e-7 and 0.5";
        QTest::newRow("rate zero") << "0" << 0.95 << ""
                                   << "between 1e-7 and 0.5";
        QTest::newRow("budget unit") << "1e-2" << 0.95 << "5x"
                                     << "'5x'";
        QTest::newRow("budget zero") << "1e-2" << 0.95 << "0s"
                                     << "more than 0";
    }

    void untilRateFieldsSayWhatIsWrong()
    {
        QFETCH(QString, rate);
        QFETCH(double, confidence);
        QFETCH(QString, budget);
        QFETCH(QString, error);
        ReplayPanel* panel = m_window->replayPanel();
        RepetitionOptions* repetitions = panel->repetitionOptions();
        QVERIFY(panel->setCheckedTargets({"cpu"}));
        repetitions->setMode(RepetitionOptions::Mode::UntilRate);
        repetitions->setUntilRate(rate, confidence, budget);
        // Beside the fields, the Run button off, and start() refuses with the same words.
        QVERIFY2(repetitions->errorText().contains(error), qPrintable(repetitions->errorText()));
        auto* label = m_window->findChild<QLabel*>("replayRepetitionError");
        QVERIFY(label && !label->isHidden());
        QCOMPARE(label->text(), repetitions->errorText());
        QVERIFY(!m_window->findChild<QPushButton*>("replayRun")->isEnabled());
        QSignalSpy failed(panel, &ReplayPanel::failed);
        QVERIFY(!panel->start());
        QCOMPARE(failed.count(), 1);
        QVERIFY2(panel->lastError().contains(error), qPrintable(panel->lastError()));
        QVERIFY(!panel->isRunning());
        // Fixed again, nothing is wrong.
        repetitions->setUntilRate("1e-2");
        QVERIFY(repetitions->errorText().isEmpty() && label->isHidden());
        QVERIFY(m_window->findChild<QPushButton*>("replayRun")->isEnabled());
        panel->setReps(2);
        QCOMPARE(repetitions->mode(), RepetitionOptions::Mode::FixedReps);
    }

    void untilRateStopsByConfidenceOrAtTheFirstFailure()
    {
        ReplayPanel* panel = m_window->replayPanel();
        RepetitionOptions* repetitions = panel->repetitionOptions();
        const QString healthy = "sim:healthy";
        const QString flip = "sim:flip";
        panel->setOpSelection(ReplayPanel::OpSelection::Divergent);
        QVERIFY(panel->setCheckedTargets({healthy, flip}));
        panel->setTimeoutMs(30000);
        repetitions->setMode(RepetitionOptions::Mode::UntilRate);
        repetitions->setUntilRate("1e-2", 0.95);
        QVERIFY2(repetitions->errorText().isEmpty(), qPrintable(repetitions->errorText()));
        QSignalSpy finished(panel, &ReplayPanel::finished);
        QSignalSpy failed(panel, &ReplayPanel::failed);
        QVERIFY2(panel->start(), qPrintable(panel->lastError()));
        QVERIFY2(panel->stateText().contains("until a failure or rate < 0.01 at 95%"),
                 qPrintable(panel->stateText()));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() >= 1, 120000);
        QVERIFY2(failed.isEmpty(), qPrintable(panel->lastError()));
        const auto report = panel->lastReport();
        QVERIFY(report);
        // The campaign ran with the CLI's options: --until-rate 1e-2 --confidence 0.95.
        QCOMPARE(report->stopping.untilRate, 1e-2);
        QCOMPARE(report->stopping.confidence, 0.95);
        QCOMPARE(report->reps, 0u);

        // The fewest clean runs that rule out 1e-2 at 95%: 1 - 0.05^(1/N) < 0.01.
        const uint64_t needed = uint64_t(std::floor(std::log(0.05) / std::log(1 - 1e-2))) + 1;
        QCOMPARE(needed, runsToRuleOut(1e-2, 0.95));
        AdaptiveStopsModel* stops = panel->stopsModel();
        QVERIFY(!report->ops.empty());
        QCOMPARE(stops->rowCount(), int(report->ops.size()) * 2);
        QVERIFY(!panel->stopsView()->isHidden());
        // Finished: the progress bar is full though fewer runs than planned ran.
        const auto* progress = panel->findChild<QProgressBar*>();
        QVERIFY(progress && progress->maximum() > 0);
        QCOMPARE(progress->value(), progress->maximum());
        for (size_t op : report->ops) {
            QCOMPARE(stops->stoppedByOf(op, healthy), std::optional(StoppedBy::Rate));
            QCOMPARE(stops->runsOf(op, healthy), needed);
            const QString clean = stops->rulesOutOf(op, healthy);
            QVERIFY2(clean.startsWith(QString("no failure in %1 runs: rate < ").arg(needed)) &&
                         clean.contains(" at 95% (stopped by rate: rate < 0.01 at 95% reached)"),
                     qPrintable(clean));
            QCOMPARE(stops->stoppedByOf(op, flip), std::optional(StoppedBy::Failure));
            const quint64 flipRuns = stops->runsOf(op, flip);
            QVERIFY2(flipRuns >= 1 && flipRuns < needed, qPrintable(QString::number(flipRuns)));
            QCOMPARE(stops->rulesOutOf(op, flip),
                     QString("stopped by a failure after %1 run(s) (1 failed)").arg(flipRuns));
            // The table shows them.
            const int row = stops->rowOf(op, healthy);
            QCOMPARE(stops->data(stops->index(row, AdaptiveStopsModel::StoppedByColumn)).toString(),
                     QString("rate"));
            QCOMPARE(stops->data(stops->index(row, AdaptiveStopsModel::RulesOut)).toString(), clean);
            QCOMPARE(stops->data(stops->index(stops->rowOf(op, flip), AdaptiveStopsModel::StoppedByColumn))
                         .toString(),
                     QString("failure"));
        }
        QCOMPARE(panel->resultsModel()->verdictOf(healthy), QString("healthy"));
        QVERIFY(panel->resultsModel()->verdictOf(flip) != QString("healthy"));

        // The saved results file (replay --out), opened beside the incident, shows the same words in
        // its Ops table.
        const QString saved = panel->lastResultsPath();
        const auto incident = m_window->incident();
        QSignalSpy shown(m_window.get(), &MainWindow::resultShown);
        m_window->openFiles({saved});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 30000);
        ResultView* view = m_window->resultTabs()->viewOf(saved);
        QVERIFY(view);
        QCOMPARE(view->kind(), ResultKind::Campaign);
        const ResultTableModel* ops = view->model("Ops");
        QVERIFY(ops);
        QCOMPARE(ops->rowCount(), stops->rowCount());
        const auto cell = [&](int row, const QString& column) {
            return ops->index(row, ops->column(column)).data().toString();
        };
        for (int row = 0; row < ops->rowCount(); ++row) {
            const size_t op = cell(row, "Op").toULongLong();
            const QString target = cell(row, "Target");
            QVERIFY(stops->rowOf(op, target) >= 0);
            QCOMPARE(cell(row, "Stopped by"),
                     QString::fromStdString(nameOf(*stops->stoppedByOf(op, target))));
            QCOMPARE(cell(row, "What it rules out"), stops->rulesOutOf(op, target));
        }
        QVERIFY2(view->headline()->text().contains("runs until a failure or rate &lt; 0.01 at 95%"),
                 qPrintable(view->headline()->text()));
        QCOMPARE(m_window->incident(), incident);  // opened beside it

        // With FAULTLINE_DOC_SCREENSHOTS=DIR: the replay dock after this campaign (docs/reproducing.md).
        if (const QString out = qEnvironmentVariable("FAULTLINE_DOC_SCREENSHOTS"); !out.isEmpty()) {
            auto* dock = m_window->findChild<QDockWidget*>("replayDock");
            dock->setFloating(true);  // room for the words and the rows
            dock->resize(1100, 990);
            QTest::qWait(300);
            QVERIFY(dock->grab().save(out + "/screenshot-replay-until-rate.png"));
            dock->setFloating(false);
        }

        // A fixed campaign afterwards hides the stops again.
        panel->setReps(1);
        QVERIFY(panel->start());
        QVERIFY(panel->stopsView()->isHidden());
        QCOMPARE(stops->rowCount(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isRunning(), 60000);
        QVERIFY(panel->stopsView()->isHidden());
    }

    void ratesReadAsFailuresOfRuns()
    {
        ReplayResultsModel m;
        m.begin({"cpu", "sim:flip"}, 4);
        m.recordRun("cpu", RunOutcome::Ok);
        m.recordRun("cpu", RunOutcome::Ok);
        m.recordRun("sim:flip", RunOutcome::Mismatch);
        m.recordRun("sim:flip", RunOutcome::Ok);
        m.recordRun("sim:flip", RunOutcome::Hang);
        QCOMPARE(m.data(m.index(m.rowOf("cpu"), ReplayResultsModel::Rate)).toString(), QString("0/2 (0%)"));
        QCOMPARE(m.data(m.index(m.rowOf("sim:flip"), ReplayResultsModel::Rate)).toString(),
                 QString("2/3 (67%)"));
        // Runs done, then how long the run in flight has been running.
        const QString progress = m.data(m.index(m.rowOf("cpu"), ReplayResultsModel::Progress)).toString();
        QVERIFY2(progress.startsWith("2 / 4 · run ") && progress.endsWith(" s"), qPrintable(progress));
        QVERIFY(m.inFlightMs("cpu") >= 0);
        // 0 of 2: what the clean runs rule out (1 - 0.05^(1/2) = 77.64%, shown rounded up); 2 of 3: the
        // interval holds the observed 67%.
        const QString none = m.data(m.index(m.rowOf("cpu"), ReplayResultsModel::Interval)).toString();
        QCOMPARE(none, QString("< 77.7%"));
        QVERIFY(m.data(m.index(m.rowOf("cpu"), ReplayResultsModel::Interval), Qt::ToolTipRole)
                    .toString()
                    .startsWith("no failure in 2 runs: rate < 77.7% at 95%"));
        const QStringList ends = m.data(m.index(m.rowOf("sim:flip"), ReplayResultsModel::Interval))
                                     .toString()
                                     .remove('%')
                                     .split(QStringLiteral("–"));
        QCOMPARE(ends.size(), 2);
        QVERIFY(ends[0].toDouble() < 67 && ends[1].toDouble() > 67);
        QVERIFY(m.headerData(ReplayResultsModel::Interval, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains("Wilson"));
    }

    void refusesWithoutTargets()
    {
        ReplayPanel* panel = m_window->replayPanel();
        QVERIFY(panel->setCheckedTargets({}));
        QSignalSpy failed(panel, &ReplayPanel::failed);
        QVERIFY(!panel->start());
        QCOMPARE(failed.count(), 1);
        QVERIFY(panel->lastError().contains("no target"));
        QVERIFY(!panel->setCheckedTargets({"sim:no-such-model"}));
        QVERIFY(!panel->lastError().isEmpty());
    }
};

QTEST_MAIN(TestReplayPanel)
#include "test_replay_panel.moc"
