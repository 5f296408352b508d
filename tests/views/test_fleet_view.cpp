// The fleet table (views/FleetView): a merged campaign of three planted nodes shows one row per
// GPU with verdict, failures and interval, and outlier ops; sorting by failures puts the worst
// first; the text filter and "outliers and failures only" narrow the rows; selecting a GPU names
// its node's results file and target.
#include <QCheckBox>
#include <QDockWidget>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "core/fleet/FleetMerge.h"
#include "core/replay/Statistics.h"
#include "views/fleet/FleetTableModel.h"
#include "views/fleet/FleetView.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;
using nlohmann::json;

namespace {

// One node: GPUs cuda:0..n-1 with the given first digests on op 0 and failures.
json node(const std::string& host, const std::string& task, const std::vector<std::string>& digests,
          const std::vector<int>& failures)
{
    json targets = json::array(), opTargets = json::object(), gpus = json::array();
    for (size_t i = 0; i < digests.size(); ++i) {
        const std::string label = "cuda:" + std::to_string(i);
        const int f = failures[i];
        targets.push_back({{"target", label},
                           {"verdict", f ? "persistent" : "healthy"},
                           {"runs", 10},
                           {"failures", f},
                           {"rate", f / 10.0},
                           {"ci", {f ? 0.05 : 0.0, f ? 0.6 : 0.28}},
                           {"peer_key", "H100"}});
        opTargets[label] = {{"runs", 10}, {"failures", f}, {"first_digest", digests[i]}};
        gpus.push_back(
            {{"index", int(i)}, {"uuid", "GPU-" + host + std::to_string(i)}, {"serial", "S" + host}});
    }
    return {{"trace", "t.h5"},
            {"targets", targets},
            {"ops", json::array({{{"index", 0}, {"op", "gemm"}, {"name", "fc"}, {"targets", opTargets}}})},
            {"node", {{"host", host}, {"task", task}, {"inventory", {{"gpus", gpus}}}}}};
}

void addNodes(FleetMerger& m)
{
    m.add("/fleet/results/0.h5", node("node-a", "0", {"d", "d"}, {0, 0}));
    m.add("/fleet/results/1.h5", node("node-b", "1", {"d", "x"}, {0, 0}));
    m.add("/fleet/results/2.h5", node("node-c", "2", {"d", "d"}, {3, 0}));
}

json mergedFleet()
{
    FleetMerger m;
    addNodes(m);
    return m.result().value();
}

}  // namespace

class TestFleetView : public QObject {
    Q_OBJECT

private slots:
    void rowsPerGpu()
    {
        FleetTableModel model;
        model.setReport(mergedFleet());
        QCOMPARE(model.rowCount(), 6);
        QCOMPARE(model.columnCount(), int(FleetTableModel::ColumnCount));
        QCOMPARE(model.headerData(FleetTableModel::Interval, Qt::Horizontal).toString(),
                 QString("95% interval"));
        int outlierRow = -1;
        for (int r = 0; r < model.rowCount(); ++r)
            if (model.row(r).host == "node-b" && model.row(r).target == "cuda:1") outlierRow = r;
        QVERIFY(outlierRow >= 0);
        QCOMPARE(model.index(outlierRow, FleetTableModel::Verdict).data().toString(),
                 QString("device-specific"));
        QCOMPARE(model.index(outlierRow, FleetTableModel::OutlierOps).data().toString(), QString("0"));
        QCOMPARE(model.index(outlierRow, FleetTableModel::Uuid).data().toString(), QString("GPU-node-b1"));
        QVERIFY(model.index(outlierRow, 0).data(FleetTableModel::ProblemRole).toBool());
        // A healthy GPU's interval reads as what its 10 runs rule out; any other keeps its interval
        // (the outlier's own runs passed, yet it rules nothing out).
        for (int r = 0; r < model.rowCount(); ++r) {
            const QString interval = model.index(r, FleetTableModel::Interval).data().toString();
            if (model.row(r).verdict == "healthy")
                QCOMPARE(interval,
                         QString::fromStdString("< " + rateBoundText(cleanRateBound(10)) + " (95%)"));
            else
                QVERIFY2(interval.startsWith("["), qPrintable(interval));
        }
        // A report without a fleet empties the table.
        model.setReport(json{{"targets", json::array()}});
        QCOMPARE(model.rowCount(), 0);
    }

    void sortFilterAndSelect()
    {
        FleetView view;
        view.setReport(mergedFleet());
        QCOMPARE(view.proxy()->rowCount(), 6);
        // Sorted by failures, descending: node-c's cuda:0 (3/10) first.
        view.table()->sortByColumn(FleetTableModel::Failures, Qt::DescendingOrder);
        QCOMPARE(view.proxy()->index(0, FleetTableModel::Host).data().toString(), QString("node-c"));
        QCOMPARE(view.proxy()->index(0, FleetTableModel::Failures).data().toString(),
                 QString("3/10 (30.0%)"));
        // Text filter over every column.
        view.filterEdit()->setText("NODE-B");
        QCOMPARE(view.proxy()->rowCount(), 2);
        view.filterEdit()->clear();
        // Problems only: the outlier and the failing GPU.
        view.problemsOnlyBox()->setChecked(true);
        QCOMPARE(view.proxy()->rowCount(), 2);
        view.problemsOnlyBox()->setChecked(false);
        QCOMPARE(view.proxy()->rowCount(), 6);
        // Selecting a row names the node's results file and the target.
        QSignalSpy spy(&view, &FleetView::gpuSelected);
        view.filterEdit()->setText("GPU-node-b1");
        QCOMPARE(view.proxy()->rowCount(), 1);
        view.table()->selectRow(0);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toString(), QString("/fleet/results/1.h5"));
        QCOMPARE(spy.at(0).at(1).toString(), QString("cuda:1"));
        // Its campaign below: identity, verdict, and op 0 with the vote it lost.
        const QString detail = view.detail()->toPlainText();
        QVERIFY2(detail.contains("node-b/cuda:1  GPU-node-b1"), qPrintable(detail));
        QVERIFY(detail.contains("device-specific"));
        QVERIFY2(detail.contains("op 0 gemm (fc): 0/10 failed"), qPrintable(detail));
        QVERIFY(detail.contains("fleet outlier: 5 of 6 peers agree on other bits"));
    }

    void theMainWindowOpensAMergedFileInTheFleetTable()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("fleet.h5");
        FleetMerger m;
        addNodes(m);
        QVERIFY(m.write(path.toStdString()).ok());
        MainWindow window;
        QSignalSpy shown(&window, &MainWindow::fleetShown);
        window.openFiles({path});
        QVERIFY(shown.wait(20000));
        QCOMPARE(shown.at(0).at(0).toString(), path);
        QCOMPARE(window.fleetView()->model()->rowCount(), 6);
        auto* dock = window.findChild<QDockWidget*>("fleetDock");
        QVERIFY(dock);
        QVERIFY(!dock->isHidden());
    }
};

QTEST_MAIN(TestFleetView)
#include "test_fleet_view.moc"
