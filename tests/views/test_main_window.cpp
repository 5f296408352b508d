// The main window's wiring on the offscreen platform: a lone file is listed, a pair of snapshots
// is compared (and compared again under another tolerance from the tree's controls), dropped
// files open, recent incidents and the dock layout persist in QSettings.
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>
#include <utility>
#include <vector>

#include "core/io/SafetensorsWriter.h"
#include "support/TestSupport.h"
#include "views/heatmap/HeatmapView.h"
#include "views/incident/DivergenceTreeModel.h"
#include "views/incident/IncidentBanner.h"
#include "views/incident/IncidentLoader.h"
#include "views/incident/IncidentPage.h"
#include "views/incident/TensorTreePanel.h"
#include "views/replay/ReplayPanel.h"
#include "views/shell/MainWindow.h"
#include "views/shell/RecentFiles.h"

using namespace faultline;
using namespace faultline::views;

class TestMainWindow : public QObject {
    Q_OBJECT

    static QString sample(const char* name)
    {
        return test::sourcePath(QStringLiteral("resources/samples/") + name);
    }

    QTemporaryDir m_dir;

    // A suspect/reference pair: layer.weight (4x8 float32) differs by 1e-3 in three elements,
    // layer.bias (8 float32) is identical.
    QStringList writeNearlyEqualPair()
    {
        std::vector<float> reference(32), suspect(32), bias(8, 0.5f);
        for (size_t i = 0; i < reference.size(); ++i) reference[i] = suspect[i] = 1.0f + 0.25f * float(i);
        for (size_t i : {3u, 17u, 30u}) suspect[i] += 1e-3f;
        const std::vector<uint64_t> shape{4, 8}, biasShape{8};
        const QString s = m_dir.filePath("suspect.safetensors"), r = m_dir.filePath("reference.safetensors");
        Status ws =
            writeSafetensors(s.toStdString(), {{"layer.weight", DType::Float32, shape, suspect.data()},
                                               {"layer.bias", DType::Float32, biasShape, bias.data()}});
        Status wr =
            writeSafetensors(r.toStdString(), {{"layer.weight", DType::Float32, shape, reference.data()},
                                               {"layer.bias", DType::Float32, biasShape, bias.data()}});
        if (!ws || !wr) return {};
        return {s, r};
    }

    static QModelIndex entryIndex(MainWindow& w, const QString& name)
    {
        for (const IncidentEntry& e : w.incident()->entries)
            if (e.name == name) return w.treePanel()->model()->indexForEntry(e.id);
        return {};
    }

    static QString column(MainWindow& w, const QString& name, int column)
    {
        return w.treePanel()->model()->data(entryIndex(w, name).siblingAtColumn(column)).toString();
    }

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
        for (const IncidentEntry& e : inc->entries) {
            QCOMPARE(e.verdict, QString("listed"));
            QVERIFY(e.isListedOnly() && !e.isDivergent() && !e.isUnjudged());
        }
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
        QCOMPARE(m->data(i.siblingAtColumn(DivergenceTreeModel::DTypeColumn)).toString(),
                 QString("bfloat16"));
        QCOMPARE(m->data(i.siblingAtColumn(DivergenceTreeModel::Shape)).toString(), QString("[32, 64]"));
        QVERIFY(w.page()->banner()->storyText().contains("3 tensors listed"));
        QVERIFY(w.windowTitle().contains("sample.safetensors"));
        QVERIFY(!w.findChild<QPushButton*>("replayRun")->isEnabled());    // no trace: no replay
        QVERIFY(!w.findChild<QComboBox*>("toleranceKind")->isVisible());  // no pair: no tolerance
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
            QCOMPARE(e.tensorVerdict, std::optional(TensorVerdict::Identical));
            QVERIFY(e.divergence);
            QCOMPARE(e.divergence->mismatches, 0ull);
        }
        QVERIFY2(w.page()->banner()->storyText().contains("0 of 8 tensors differ"),
                 qPrintable(w.page()->banner()->storyText()));
        QVERIFY(w.page()->heatmap()->shownGrid().empty());  // nothing to draw: identical
    }

    void comparesThePairAgainUnderAnotherTolerance()
    {
        const QStringList pair = writeNearlyEqualPair();
        QCOMPARE(pair.size(), 2);
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::incidentShown);
        w.openFiles(pair);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        auto* kind = w.findChild<QComboBox*>("toleranceKind");
        auto* value = w.findChild<QLineEdit*>("toleranceValue");
        auto* apply = w.findChild<QToolButton*>("toleranceApply");
        QVERIFY(kind && value && apply);
        QVERIFY(kind->isVisible());
        QCOMPARE(w.treePanel()->toleranceText(), QString("exact"));
        // Exact: the three changed elements are beyond tolerance.
        QCOMPARE(column(w, "layer.weight", DivergenceTreeModel::Beyond), QString("3"));
        QCOMPARE(column(w, "layer.weight", DivergenceTreeModel::Mismatches), QString("3"));
        QCOMPARE(column(w, "layer.bias", DivergenceTreeModel::Mismatches), QString("0"));
        w.treePanel()->selectEntry(w.treePanel()->model()->entryAt(entryIndex(w, "layer.bias")));

        // abs:0.01 is looser than the 1e-3 change: still mismatches, none beyond.
        kind->setCurrentIndex(kind->findData("abs"));
        value->setText("0.01");
        QTest::mouseClick(apply, Qt::LeftButton);
        QVERIFY(w.loader()->isLoading());  // off the GUI thread
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 10000);
        QCOMPARE(w.incident()->compare->tolerance, Tolerance::absolute(0.01));
        QCOMPARE(column(w, "layer.weight", DivergenceTreeModel::Beyond), QString("0"));
        QCOMPARE(column(w, "layer.weight", DivergenceTreeModel::Mismatches), QString("3"));
        for (const IncidentEntry& e : w.incident()->entries)
            if (e.name == "layer.weight") {
                QCOMPARE(e.verdict, QString("within"));
                QVERIFY(!e.isDivergent());
            }
        QVERIFY2(w.page()->banner()->storyText().contains("0 of 2 tensors differ beyond abs:0.01"),
                 qPrintable(w.page()->banner()->storyText()));
        QVERIFY(w.statusBar()->findChild<QLabel*>("statusSummary")->text().contains("abs:0.01"));
        QCOMPARE(w.treePanel()->toleranceText(), QString("abs:0.01"));
        // The entry shown before is still the one shown.
        const IncidentEntry* selected = w.incident()->entry(w.treePanel()->selectedEntry());
        QVERIFY(selected);
        QCOMPARE(selected->name, QString("layer.bias"));

        // A tighter tolerance than the change brings them back.
        kind->setCurrentIndex(kind->findData("abs"));
        value->setText("1e-4");
        QVERIFY(w.treePanel()->applyTolerance());
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 3, 10000);
        QCOMPARE(column(w, "layer.weight", DivergenceTreeModel::Beyond), QString("3"));
    }

    void badToleranceIsSaidInlineAndKeepsTheResults()
    {
        const QStringList pair = writeNearlyEqualPair();
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::incidentShown);
        w.openFiles(pair);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        const auto before = w.incident();
        auto* kind = w.findChild<QComboBox*>("toleranceKind");
        auto* value = w.findChild<QLineEdit*>("toleranceValue");
        QSignalSpy requested(w.treePanel(), &TensorTreePanel::toleranceRequested);
        const std::pair<const char*, const char*> bad[] = {{"abs", "-1"}, {"ulp", "four"}, {"rel", ""}};
        for (const auto& [k, v] : bad) {
            kind->setCurrentIndex(kind->findData(k));
            value->setText(v);
            QTest::keyClick(value, Qt::Key_Return);
            QVERIFY2(!w.treePanel()->toleranceError().isEmpty(), k);
            QVERIFY(w.findChild<QLabel*>("toleranceError")->isVisible());
        }
        QCOMPARE(requested.count(), 0);
        QVERIFY(!w.loader()->isLoading());
        QTest::qWait(100);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(w.incident(), before);
        QCOMPARE(column(w, "layer.weight", DivergenceTreeModel::Beyond), QString("3"));
        // A good one clears the error.
        kind->setCurrentIndex(kind->findData("ulp"));
        value->setText("4");
        QVERIFY(w.treePanel()->applyTolerance());
        QVERIFY(w.treePanel()->toleranceError().isEmpty());
        QVERIFY(!w.findChild<QLabel*>("toleranceError")->isVisible());
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 10000);
        QCOMPARE(w.incident()->compare->tolerance, Tolerance::ulp(4));
    }

    void aNewerToleranceSupersedesAnOlderOne()
    {
        const QStringList pair = writeNearlyEqualPair();
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::incidentShown);
        w.openFiles(pair);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        w.compareAgain("abs:0.01");
        w.compareAgain("rel:0.5");  // before the first answers: its result must be dropped
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 10000);
        QTest::qWait(200);
        QCOMPARE(shown.count(), 2);
        QCOMPARE(w.incident()->compare->tolerance, Tolerance::relative(0.5));
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
