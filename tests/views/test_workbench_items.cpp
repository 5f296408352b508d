// The small things a new user meets on the demo incident: Help › Guide (F1) has a guide and
// every shortcut of the menus; Links, Fleet and Results are in the View menu; a run in flight
// shows how long it has been running (a hung one is not "queued" until its timeout); the
// verdict's reason is a visible column with room; targets added by hand come back when the
// incident is opened again.
#include <QAction>
#include <QDockWidget>
#include <QHeaderView>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include "DemoWindow.h"
#include "core/replay/TargetSpec.h"
#include "views/replay/ReplayPanel.h"
#include "views/replay/ReplayResultsModel.h"
#include "views/shell/HelpDialog.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;

namespace {

QMenu* menuNamed(MainWindow& window, const QString& title)
{
    for (QAction* a : window.menuBar()->actions())
        if (a->menu() && a->text().remove('&') == title) return a->menu();
    return nullptr;
}

QString normalised(const std::string& spec)
{
    return QString::fromStdString(parseTargetSpec(spec)->text);
}

}  // namespace

class TestWorkbenchItems : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    DemoIncident m_demo;
    std::unique_ptr<MainWindow> m_window;

private slots:
    void initTestCase()
    {
        const QString error =
            openDemoWindow(m_dir, "test_workbench_items", m_demo, m_window, QSize(1536, 960));
        QVERIFY2(error.isEmpty(), qPrintable(error));
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    }

    void cleanupTestCase() { m_window.reset(); }

    void helpHasAGuideAndEveryShortcut()
    {
        QTest::keyClick(m_window.get(), Qt::Key_F1);
        HelpDialog* help = nullptr;
        QTRY_VERIFY((help = m_window->findChild<HelpDialog*>()) && help->isVisible());
        const QString text = help->text()->toPlainText();
        QVERIFY(text.contains("Open Incident"));
        QVERIFY(text.contains("Open Results"));
        // Every menu action with a shortcut is listed with it.
        int shortcuts = 0;
        QList<QMenu*> menus;
        for (QAction* a : m_window->menuBar()->actions())
            if (a->menu()) menus << a->menu();
        while (!menus.isEmpty()) {
            QMenu* menu = menus.takeFirst();
            for (QAction* a : menu->actions()) {
                if (a->menu()) menus << a->menu();
                if (a->shortcut().isEmpty()) continue;
                ++shortcuts;
                const QString keys = a->shortcut().toString(QKeySequence::NativeText);
                QVERIFY2(text.contains(keys), qPrintable(keys));
                QVERIFY2(text.contains(a->text().remove('&')), qPrintable(a->text()));
            }
        }
        QVERIFY(shortcuts >= 8);
        const QStringList lines = HelpDialog::shortcutLines(m_window->menuBar());
        QVERIFY(lines.contains(QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText) +
                               " — File › Open Incident…"));
        help->close();
    }

    void theViewMenuHasLinksFleetAndResults()
    {
        QMenu* view = menuNamed(*m_window, "View");
        QVERIFY(view);
        QStringList titles;
        for (QAction* a : view->actions()) titles << a->text();
        for (const char* dock : {"Links", "Fleet", "Results"}) QVERIFY2(titles.contains(dock), dock);
        // It shows the links dock.
        auto* links = m_window->findChild<QDockWidget*>("linksDock");
        QVERIFY(links->isHidden());
        for (QAction* a : view->actions())
            if (a->text() == "Links") a->trigger();
        QVERIFY(!links->isHidden());
        links->hide();
    }

    void aRunInFlightShowsItsTimeAndTheReasonHasAColumn()
    {
        ReplayPanel* panel = m_window->replayPanel();
        const QString hang = normalised("sim:hang:after=0");  // never answers
        panel->setOpSelection(ReplayPanel::OpSelection::Divergent);
        QVERIFY(panel->setCheckedTargets({"cpu", hang}));
        panel->setReps(1);
        panel->setTimeoutMs(4000);
        QSignalSpy finished(panel, &ReplayPanel::finished);
        QVERIFY2(panel->start(), qPrintable(panel->lastError()));
        ReplayResultsModel* m = panel->resultsModel();
        // From the start every target is running, its first run in flight: never "queued".
        QCOMPARE(m->verdictOf(hang), QString("running"));
        QTRY_VERIFY_WITH_TIMEOUT(m->inFlightMs(hang) > 1500, 3500);
        QCOMPARE(m->verdictOf(hang), QString("running"));
        const QString progress = m->index(m->rowOf(hang), ReplayResultsModel::Progress).data().toString();
        QVERIFY2(progress.contains(" s") && progress.startsWith("0 / "), qPrintable(progress));
        // The timer moves while the run hangs.
        const qint64 before = m->inFlightMs(hang);
        QTest::qWait(600);
        QVERIFY(m->inFlightMs(hang) > before);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
        QCOMPARE(m->inFlightMs(hang), qint64(-1));

        // The reason is a column on screen, with room, right after the numbers; the progress
        // column is gone with the campaign.
        m_window->findChild<QDockWidget*>("replayDock")->raise();
        QTableView* table = panel->resultsView();
        QTRY_VERIFY(table->isVisible());
        QVERIFY(table->isColumnHidden(ReplayResultsModel::Progress));
        QHeaderView* header = table->horizontalHeader();
        QVERIFY(!table->isColumnHidden(ReplayResultsModel::Details));
        QCOMPARE(m->headerData(ReplayResultsModel::Details, Qt::Horizontal).toString(), QString("Reason"));
        QCOMPARE(header->visualIndex(ReplayResultsModel::Details),
                 header->visualIndex(ReplayResultsModel::Interval) + 1);
        QVERIFY2(table->columnWidth(ReplayResultsModel::Details) >= 100,
                 qPrintable(QString::number(table->columnWidth(ReplayResultsModel::Details))));
        const QString reason = m->index(m->rowOf(hang), ReplayResultsModel::Details).data().toString();
        QString explanation;
        for (const TargetSummary& t : panel->lastReport()->targets)
            if (QString::fromStdString(t.target) == hang) explanation = QString::fromStdString(t.explanation);
        QVERIFY(!explanation.isEmpty());
        QCOMPARE(reason, explanation);
        QVERIFY(m->verdictOf(hang) != "healthy");
    }

    void targetsAddedByHandComeBackWithTheIncident()
    {
        ReplayPanel* panel = m_window->replayPanel();
        QLineEdit* custom = nullptr;
        for (QLineEdit* e : panel->findChildren<QLineEdit*>())
            if (e->placeholderText().startsWith("sim:")) custom = e;
        QVERIFY(custom);
        const QString spec = normalised("sim:stuck-bit:bit=20,lane=3");
        QVERIFY(!panel->availableTargets().contains(spec));
        custom->setFocus();
        QTest::keyClicks(custom, "sim:stuck-bit:bit=20,lane=3");
        QTest::keyClick(custom, Qt::Key_Return);
        QVERIFY(panel->checkedTargets().contains(spec));

        // Another incident does not get it ...
        QSignalSpy shown(m_window.get(), &MainWindow::incidentShown);
        m_window->openFiles({QString::fromStdString(m_demo.incidentCheckpoints.back())});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 30000);
        QVERIFY(!panel->availableTargets().contains(spec));
        // ... reopening this one does, checked.
        m_window->openFiles({QString::fromStdString(m_demo.tracePath)});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 30000);
        QVERIFY(panel->availableTargets().contains(spec));
        QVERIFY(panel->checkedTargets().contains(spec));
    }
};

QTEST_MAIN(TestWorkbenchItems)
#include "test_workbench_items.moc"
