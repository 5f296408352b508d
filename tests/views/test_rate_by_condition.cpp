// An explore results file opens in the GUI as the failure rate by condition: `faultline explore
// --out` (HDF5) and `--json` saved to a file are both recognised by their content, read off the
// GUI thread, tabled (per condition and target: fired or never, the rate or what the clean runs
// rule out) and drawn (RateByConditionPlot: conditions grouped by kind, fired points with their
// interval, never-fired ones at their bound). The defect is a simulated one that fires only on
// bfloat16 inputs; the view is not told so.
#include <qcustomplot.h>
#include <QCheckBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <tuple>

#include "cli/TriggerTrace.h"
#include "core/incident/ResultFile.h"
#include "support/TestSupport.h"
#include "views/incident/OpenedFiles.h"
#include "views/plots/RateByConditionPlot.h"
#include "views/results/ResultTableModel.h"
#include "views/results/ResultTabs.h"
#include "views/results/ResultView.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;
using faultline::test::jsonObject;
using faultline::test::runFaultline;

namespace {

constexpr const char* kSim = "sim:flip:rate=1,only_dtype=bf16,run_rate=0.5";

// Whether the simulated defect can fire under condition `c` of the report: only on bfloat16.
bool firesUnder(const QJsonObject& c)
{
    return c.value("dtype").toString() == "bfloat16";
}

}  // namespace

class TestRateByCondition : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_h5, m_json;
    QJsonObject m_report;
    QString m_sim;  // the simulated target as the report names it (normalised)

    // The view of `path` as the GUI opens it: probed and read as on the worker, then shown.
    std::unique_ptr<ResultView> openView(const QString& path)
    {
        const OpenedFiles opened = OpenedFiles::probeOnWorker({path});
        if (!opened.errors.isEmpty() || opened.results.size() != 1) {
            qWarning("%s", qPrintable(opened.errors.join('\n')));
            return {};
        }
        const OpenedResult& r = opened.results.front();
        if (r.kind != ResultKind::Explore || !r.rates) return {};
        auto view = std::make_unique<ResultView>(path, r.kind, r.summary);
        view->showRates(r.rates);
        view->resize(1100, 700);
        view->show();
        if (!QTest::qWaitFor([&] { return view->rates() != nullptr; }, 5000)) return {};
        return view;
    }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("FaultlineTests");
        QCoreApplication::setApplicationName("test_rate_by_condition");
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        const QString trace = m_dir.filePath("trace.h5");
        QVERIFY(test::makeTriggerTrace(trace).isEmpty());
        m_h5 = m_dir.filePath("explore.h5");
        auto r = runFaultline({"explore", trace, "--op", "1", "--targets", QString("cpu,") + kSim, "--vary",
                               "scale,dtype", "--runs", "20", "--json", "--out", m_h5});
        QVERIFY2(r.exitCode == 1, r.err.constData());
        m_report = jsonObject(r.out);
        QVERIFY(!m_report.isEmpty());
        m_sim = m_report.value("targets").toArray().at(1).toString();
        QVERIFY(m_sim.startsWith("sim:flip"));
        m_json = m_dir.filePath("explore-report");  // no suffix: the content decides
        QFile f(m_json);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(r.out);
    }

    void recognisesBothFiles()
    {
        for (const QString& path : {m_h5, m_json}) {
            auto kind = detectResultKind(path.toStdString());
            QVERIFY2(kind, kind ? "" : kind.message().c_str());
            QCOMPARE(*kind, ResultKind::Explore);
            auto doc = readResultDocument(path.toStdString(), ResultKind::Explore);
            QVERIFY2(doc, doc ? "" : doc.message().c_str());
            QCOMPARE(doc->report.value("runs_per_condition", 0), 20);
        }
    }

    void brokenReportsNameTheFile()
    {
        // Explore's format with cells that are not a list, and a cell naming no condition.
        QJsonObject noCells = m_report;
        noCells["cells"] = 3;
        QJsonObject badCell = m_report;
        QJsonArray cells = badCell.value("cells").toArray();
        QJsonObject first = cells.at(0).toObject();
        first["condition"] = 9999;
        cells[0] = first;
        badCell["cells"] = cells;
        for (const auto& [name, doc, problem] :
             {std::tuple{QString("no-cells.json"), noCells, QString("no \"cells\" array")},
              std::tuple{QString("bad-cell.json"), badCell, QString("cell 0 names no condition")}}) {
            const QString path = m_dir.filePath(name);
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QJsonDocument(doc).toJson());
            f.close();
            const OpenedFiles opened = OpenedFiles::probeOnWorker({path});
            QCOMPARE(opened.errors.size(), 1);
            QVERIFY2(opened.errors[0].contains(path) && opened.errors[0].contains(problem),
                     qPrintable(opened.errors[0]));
        }
    }

    void drawsWhereItFiredAndWhereItNever()
    {
        auto view = openView(m_h5);
        QVERIFY(view);
        QCOMPARE(view->sections()->tabText(0), QString("Rate by condition"));
        RateByConditionPlot* plot = view->rates();
        const QJsonArray conditions = m_report.value("conditions").toArray();
        const QJsonArray cells = m_report.value("cells").toArray();
        // Every cell that ran is drawn once, fired exactly where the defect can fire.
        const auto points = plot->shownPoints();
        size_t ran = 0;
        for (const auto& v : cells) ran += v.toObject().value("runs").toInt() > 0 ? 1 : 0;
        QVERIFY(ran > 10);
        QCOMPARE(points.size(), ran);
        int fired = 0;
        for (const auto& p : points) {
            const int condition = int(std::lround(p.x));
            const QJsonObject c = conditions.at(condition).toObject();
            QCOMPARE(p.condition, c.value("label").toString());
            const bool expected = p.target == m_sim && firesUnder(c);
            QVERIFY2(p.fired == expected, qPrintable(p.target + " " + p.condition));
            fired += p.fired ? 1 : 0;
            if (p.fired) {
                QVERIFY(p.low > 0 && p.low < p.rate && p.rate < p.high);
            } else {
                // At the rate its clean runs rule out, with the bar down to the axis.
                double bound = 0;
                for (const auto& v : cells) {
                    const QJsonObject cell = v.toObject();
                    if (cell.value("condition").toInt() == condition &&
                        cell.value("target").toString() == p.target)
                        bound = cell.value("rules_out").toObject().value("rate_below").toDouble();
                }
                QVERIFY(bound > 0);
                QCOMPARE(p.rate, bound);
                QVERIFY(p.low < p.rate);
                QVERIFY(p.low >= plot->plot()->yAxis->range().lower);
            }
        }
        QCOMPARE(fired, 1);
        // Grouped by kind, in the report's order, with a separator between groups.
        QStringList kinds;
        for (const auto& v : conditions) {
            const QString kind = v.toObject().value("vary").toString();
            if (kinds.isEmpty() || kinds.last() != kind) kinds << kind;
        }
        QCOMPARE(plot->groupLabels(), kinds);
        QCOMPARE(kinds.size(), 2);
        // A log rate axis by default; linear at a click, the same points drawn.
        QCOMPARE(plot->plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
        const double floor = plot->plot()->yAxis->range().lower;
        QVERIFY(floor > 0);
        for (const auto& p : points) QVERIFY(p.rate > floor && p.high <= plot->plot()->yAxis->range().upper);
        plot->logBox()->click();
        QCOMPARE(plot->plot()->yAxis->scaleType(), QCPAxis::stLinear);
        QCOMPARE(plot->plot()->yAxis->range().lower, 0.0);
        QCOMPARE(plot->shownPoints().size(), points.size());
    }

    void tablesEveryCell()
    {
        auto view = openView(m_json);
        QVERIFY(view);
        ResultTableModel* model = view->model("Conditions");
        QVERIFY(model);
        const QJsonArray conditions = m_report.value("conditions").toArray();
        const QJsonArray cells = m_report.value("cells").toArray();
        QCOMPARE(model->rowCount(), cells.size());
        for (int row = 0; row < model->rowCount(); ++row) {
            const QJsonObject cell = cells.at(row).toObject();
            const QJsonObject c = conditions.at(cell.value("condition").toInt()).toObject();
            const QString target = model->index(row, model->column("Target")).data().toString();
            const QString fired = model->index(row, model->column("Fired")).data().toString();
            const QString rate = model->index(row, model->column("Rate (95%)")).data().toString();
            QCOMPARE(target, cell.value("target").toString());
            if (!cell.value("replayable").toBool()) {
                QCOMPARE(fired, QString("not replayable"));
            } else if (target == m_sim && firesUnder(c)) {
                QCOMPARE(fired, QString("fired"));
                QVERIFY2(rate.contains('['), qPrintable(rate));
            } else {
                QCOMPARE(fired, QString("never"));
                QVERIFY2(rate.startsWith("no failure in 20 runs: rate < "), qPrintable(rate));
            }
        }
        // The findings lead the headline: the dtype the defect fired on.
        QVERIFY2(view->headline()->text().contains("fired on bfloat16"),
                 qPrintable(view->headline()->text()));
    }

    void opensInTheMainWindow()
    {
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.openFiles({m_json});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 20000);
        ResultView* view = window.resultTabs()->viewOf(m_json);
        QVERIFY(view);
        QCOMPARE(view->kind(), ResultKind::Explore);
        QTRY_VERIFY_WITH_TIMEOUT(view->rates() != nullptr, 5000);
        QVERIFY(!view->rates()->shownPoints().empty());
    }

    // With FAULTLINE_DOC_SCREENSHOTS=DIR: the rate by condition of a gemm on the golden cpu and
    // two simulated defects (one on bfloat16 inputs in 5% of runs, one bound to SM 3 of 8), every
    // kind of condition (magnitude, sub-blocks, dtypes with TF32, smaller grids), as
    // docs/reproducing.md shows it.
    void screenshot()
    {
        const QString out = qEnvironmentVariable("FAULTLINE_DOC_SCREENSHOTS");
        if (out.isEmpty()) QSKIP("FAULTLINE_DOC_SCREENSHOTS is not set");
        const QString trace = m_dir.filePath("trace.h5");
        const QString h5 = m_dir.filePath("explore-screenshot.h5");
        auto r = runFaultline({"explore", trace, "--op", "1", "--targets",
                               "cpu,sim:flip:rate=1,only_dtype=bf16,run_rate=0.05,"
                               "sim:flip:rate=1,only_sm=3,sms=8,tile=8,run_rate=0.5",
                               "--vary", "scale,dtype,placement", "--runs", "40", "--out", h5});
        QVERIFY2(r.exitCode == 1, r.err.constData());
        auto view = openView(h5);
        QVERIFY(view);
        view->resize(1500, 850);
        QTest::qWait(300);
        QVERIFY(view->grab().save(out + "/screenshot-explore.png"));
    }
};

QTEST_MAIN(TestRateByCondition)
#include "test_rate_by_condition.moc"
