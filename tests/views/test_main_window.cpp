// The main window's wiring on the offscreen platform: a lone file is listed, a pair of snapshots
// is compared, dropped files open, recent incidents and the dock layout persist in QSettings.
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "support/TestSupport.h"
#include "views/DivergenceTreeModel.h"
#include "views/HeatmapView.h"
#include "views/IncidentBanner.h"
#include "views/IncidentPage.h"
#include "views/MainWindow.h"
#include "views/RecentFiles.h"
#include "views/ReplayPanel.h"
#include "views/TensorTreePanel.h"

using namespace faultline;
using namespace faultline::views;

class TestMainWindow : public QObject {
    Q_OBJECT

    static QString sample(const char* name) { return test::sourcePath(QStringLiteral("resources/samples/") + name); }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("FaultlineTests");
        QCoreApplication::setApplicationName("test_main_window");
        QSettings().clear();
    }

    void listsALoneFile()
    {
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::incidentShown);
        w.openFiles({sample("sample.safetensors")});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        const auto inc = w.incident();
        QVERIFY(inc->singleFile);
        QCOMPARE(inc->entries.size(), size_t(3));
        for (const IncidentEntry& e : inc->entries) QCOMPARE(e.verdict, QString("listed"));
        // The tree: one section, grouped by path; the fc2 weight with its dtype and shape.
        DivergenceTreeModel* m = w.treePanel()->model();
        QCOMPARE(m->rowCount(), 1);
        int fc2 = -1;
        for (const IncidentEntry& e : inc->entries)
            if (e.name == "model.layers.0.mlp.fc2.weight") fc2 = e.id;
        QVERIFY(fc2 >= 0);
        const QModelIndex i = m->indexForEntry(fc2);
        QCOMPARE(m->data(i).toString(), QString("weight"));
        QCOMPARE(m->data(i.parent()).toString(), QString("fc2"));
        QCOMPARE(m->data(i.siblingAtColumn(DivergenceTreeModel::DTypeColumn)).toString(), QString("bfloat16"));
        QCOMPARE(m->data(i.siblingAtColumn(DivergenceTreeModel::Shape)).toString(), QString("[32, 64]"));
        QVERIFY(w.page()->banner()->storyText().contains("3 tensors listed"));
        QVERIFY(w.windowTitle().contains("sample.safetensors"));
        QVERIFY(!w.findChild<QPushButton*>("replayRun")->isEnabled());  // no trace: no replay
    }

    void comparesAPairOfSnapshots()
    {
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::incidentShown);
        w.openFiles({sample("sample-snapshot.h5"), sample("sample-snapshot.h5")});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        const auto inc = w.incident();
        QVERIFY(inc->hasPair());
        QCOMPARE(inc->entries.size(), size_t(8));
        for (const IncidentEntry& e : inc->entries) {
            QCOMPARE(e.verdict, QString("identical"));
            QVERIFY(e.divergence);
            QCOMPARE(e.divergence->mismatches, 0ull);
        }
        QVERIFY2(w.page()->banner()->storyText().contains("0 of 8 tensors differ"), qPrintable(w.page()->banner()->storyText()));
        QVERIFY(w.page()->heatmap()->shownGrid().empty());  // nothing to draw: identical
    }

    void dropsTheAnswerOfASupersededLoad()
    {
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::incidentShown);
        w.openFiles({sample("sample.safetensors")});
        w.openFiles({sample("sample-snapshot.h5")});  // supersedes the first before it answers
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        QTest::qWait(200);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(w.incident()->paths, QStringList{sample("sample-snapshot.h5")});
        QCOMPARE(w.incident()->entries.size(), size_t(8));
    }

    void cancelsALoadAndKeepsWhatWasOpen()
    {
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::incidentShown);
        QSignalSpy cancelled(&w, &MainWindow::loadingCancelled);
        w.openFiles({sample("sample.safetensors")});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        const auto before = w.incident();
        w.openFiles({sample("sample-snapshot.h5"), sample("sample-snapshot.h5")});
        QVERIFY(w.page()->banner()->progressVisible());
        w.cancelLoading();
        QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 10000);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(w.incident(), before);
        QVERIFY(!w.page()->banner()->progressVisible());
    }

    void opensDroppedFilesAndRemembersThem()
    {
        RecentFiles::clear();
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::incidentShown);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(sample("sample.safetensors"))});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &drop);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        const QList<QStringList> recent = RecentFiles::load();
        QVERIFY(!recent.isEmpty());
        QCOMPARE(recent.front(), QStringList{sample("sample.safetensors")});
        QMenu* recentMenu = nullptr;
        for (QMenu* menu : w.menuBar()->findChildren<QMenu*>())
            if (menu->title().contains("Recent")) recentMenu = menu;
        QVERIFY(recentMenu);
        QVERIFY(recentMenu->isEnabled());
        QCOMPARE(recentMenu->actions().front()->text(), QString("sample.safetensors"));
    }

    void savesAndRestoresTheDockLayout()
    {
        {
            MainWindow w;
            w.show();
            auto* dock = w.findChild<QDockWidget*>("devicesDock");
            QVERIFY(dock);
            QVERIFY(w.findChild<QDockWidget*>("tensorTreeDock"));
            QVERIFY(w.findChild<QDockWidget*>("replayDock"));
            dock->hide();
            w.close();
        }
        QVERIFY(QSettings().contains("windowState"));
        MainWindow again;
        again.show();
        QVERIFY(again.findChild<QDockWidget*>("devicesDock")->isHidden());
        QVERIFY(!again.findChild<QDockWidget*>("tensorTreeDock")->isHidden());
        QSettings().remove("windowState");
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
