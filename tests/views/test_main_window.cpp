// The main window on the offscreen platform: opening files off the GUI thread, showing their
// tensors, showing an error for a malformed file while keeping what was loaded.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "support/TestSupport.h"
#include "views/MainWindow.h"
#include "views/TensorTableModel.h"

using faultline::views::MainWindow;
using faultline::views::TensorTableModel;

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("FaultlineTests");
        QCoreApplication::setApplicationName("test_main_window");
        QSettings().clear();
    }

    void opensAFileAndListsItsTensors()
    {
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::fileShown);
        w.openFiles({faultline::test::sourcePath("resources/samples/sample.safetensors")});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        TensorTableModel* m = w.tensorModel();
        QCOMPARE(m->rowCount(), 3);
        QCOMPARE(m->data(m->index(1, TensorTableModel::Name)).toString(), QString("model.layers.0.mlp.fc2.weight"));
        QCOMPARE(m->data(m->index(1, TensorTableModel::DTypeColumn)).toString(), QString("bfloat16"));
        QCOMPARE(m->data(m->index(1, TensorTableModel::Shape)).toString(), QString("[32, 64]"));
        QVERIFY(w.windowTitle().contains("sample.safetensors"));
    }

    void malformedFileShowsErrorAndKeepsWhatWasLoaded()
    {
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::fileShown);
        QSignalSpy error(&w, &MainWindow::errorShown);
        w.openFiles({faultline::test::sourcePath("resources/samples/sample-snapshot.h5")});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        const int rows = w.tensorModel()->rowCount();
        QCOMPARE(rows, 8);

        QTemporaryDir dir;
        const QString bad = dir.filePath("broken.h5");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("\x89HDF\r\n\x1a\n", 8) + QByteArray(100, '\x01'));
        f.close();
        w.openFiles({bad});
        QTRY_COMPARE_WITH_TIMEOUT(error.count(), 1, 10000);
        QVERIFY2(w.lastError().contains(bad), qPrintable(w.lastError()));
        QCOMPARE(w.tensorModel()->rowCount(), rows);  // nothing the user had is lost
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
