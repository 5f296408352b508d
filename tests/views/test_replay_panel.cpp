// The replay panel on the demo incident: a campaign on the golden model and the suspect's
// simulated defect gives their verdicts in the live table; a long campaign (a hanging device,
// short timeout, many repetitions) cancels promptly and the panel says so and returns to idle.
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "core/demo/DemoIncident.h"
#include "core/replay/TargetSpec.h"
#include "views/MainWindow.h"
#include "views/ReplayPanel.h"
#include "views/ReplayResultsModel.h"

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
        QCoreApplication::setOrganizationName("FaultlineTests");
        QCoreApplication::setApplicationName("test_replay_panel");
        QSettings().clear();
        qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        DemoOptions options;
        options.outDir = m_dir.filePath("demo").toStdString();
        auto demo = buildDemoIncident(options);
        QVERIFY2(demo.ok(), demo.ok() ? "" : demo.message().c_str());
        m_demo = *demo;
        m_window = std::make_unique<MainWindow>();
        m_window->show();
        QSignalSpy shown(m_window.get(), &MainWindow::incidentShown);
        m_window->openFiles({QString::fromStdString(m_demo.tracePath)});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 30000);
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
        QCOMPARE(m->data(m->index(row, ReplayResultsModel::Rate)).toString(), QString("100%"));
        QVERIFY(m->data(m->index(row, ReplayResultsModel::Interval)).toString().startsWith("["));
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
