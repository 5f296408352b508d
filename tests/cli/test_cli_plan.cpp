// `faultline plan`: the runs `replay --until-rate` needs per op and target (computed here from
// the formula) and their time from run times measured now or read from a campaign's journal.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "ReplayTrace.h"
#include "support/TestSupport.h"

using faultline::test::jsonObject;
using faultline::test::makeReplayTrace;
using faultline::test::runFaultline;
using faultline::test::runProcess;

namespace {

// The fewest clean runs N with 1 - (1 - confidence)^(1/N) < rate.
qint64 minimumRuns(double rate, double confidence)
{
    return qint64(std::floor(std::log(1 - confidence) / std::log(1 - rate))) + 1;
}

}  // namespace

class TestCliPlan : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

private slots:
    void initTestCase()
    {
        m_trace = m_dir.filePath("trace.h5");
        QVERIFY(makeReplayTrace(m_trace, -1).isEmpty());
    }

    void measuresRunTimes()
    {
        auto r = runFaultline(
            {"plan", m_trace, "--rate", "1e-3", "--targets", "cpu,sim:healthy", "--ops", "1,2", "--json"});
        QVERIFY2(!r.crashed && !r.timedOut, r.err.constData());
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = jsonObject(r.out);
        QCOMPARE(o.value("source").toString(), QString("measured"));
        QVERIFY(o.value("source_path").isNull());
        QCOMPARE(o.value("runs_needed_per_op").toInteger(), minimumRuns(1e-3, 0.95));
        QVERIFY(o.value("complete").toBool());
        const QJsonArray ops = o.value("ops").toArray();
        QCOMPARE(ops.size(), 4);  // 2 ops x 2 targets
        QMap<QString, double> perTarget;
        for (const auto& v : ops) {
            const QJsonObject row = v.toObject();
            QCOMPARE(row.value("runs_needed").toInteger(), minimumRuns(1e-3, 0.95));
            QCOMPARE(row.value("timed_runs").toInt(), 3);
            const double ms = row.value("ms_per_run").toDouble();
            QVERIFY(ms > 0);
            QVERIFY(std::fabs(row.value("seconds").toDouble() - ms * double(minimumRuns(1e-3, 0.95)) / 1000) <
                    1e-9 * (1 + ms));
            perTarget[row.value("target").toString()] += row.value("seconds").toDouble();
        }
        const double slowest = std::max(perTarget["cpu"], perTarget["sim:healthy"]);
        QVERIFY(std::fabs(o.value("seconds").toDouble() - slowest) < 1e-9 * (1 + slowest));
        // The text says where the times come from.
        r = runFaultline(
            {"plan", m_trace, "--rate", "1e-3", "--targets", "cpu", "--ops", "2", "--confidence", "0.99"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("measured now"), r.out.constData());
        QVERIFY2(r.out.contains(QByteArray::number(minimumRuns(1e-3, 0.99)) + " clean runs"),
                 r.out.constData());
    }

    void readsAJournal()
    {
        const QString out = m_dir.filePath("results.h5");
        auto r = runFaultline(
            {"replay", m_trace, "--targets", "cpu", "--ops", "2", "--reps", "5", "--out", out, "--quiet"});
        QCOMPARE(r.exitCode, 0);
        r = runFaultline(
            {"plan", m_trace, "--rate", "0.01", "--targets", "cpu", "--ops", "2", "--from", out, "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = jsonObject(r.out);
        QCOMPARE(o.value("source").toString(), QString("journal"));
        QCOMPARE(o.value("source_path").toString(), out + ".journal.jsonl");
        const QJsonObject row = o.value("ops").toArray().at(0).toObject();
        QCOMPARE(row.value("timed_runs").toInt(), 5);
        QCOMPARE(row.value("runs_needed").toInteger(), minimumRuns(0.01, 0.95));
        // A target the journal never ran has no time: said, not invented.
        r = runFaultline(
            {"plan", m_trace, "--rate", "0.01", "--targets", "cpu,sim:healthy", "--ops", "2", "--from", out});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("read from the journal") && r.out.contains("unknown"), r.out.constData());
    }

    // --rate reads rates as replay --until-rate does: a percentage is its fraction.
    void percentRateIsItsFraction()
    {
        auto r =
            runFaultline({"plan", m_trace, "--rate", "0.5%", "--targets", "cpu", "--ops", "2", "--json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(jsonObject(r.out).value("runs_needed_per_op").toInteger(), minimumRuns(5e-3, 0.95));
    }

    void errors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("rate") << QStringList{"--rate", "0.9", "--targets", "cpu"} << "--rate 0.9";
        QTest::newRow("rate text") << QStringList{"--rate", "often", "--targets", "cpu"} << "--rate 'often'";
        QTest::newRow("confidence") << QStringList{"--rate", "1e-3",      "--confidence",
                                                   "0.2",    "--targets", "cpu"}
                                    << "--confidence";
        QTest::newRow("no journal") << QStringList{"--rate", "1e-3",   "--targets",
                                                   "cpu",    "--from", "nowhere.h5"}
                                    << "nowhere.h5";
        QTest::newRow("bad target") << QStringList{"--rate", "1e-3", "--targets", "sim:flip:run_rate=3"}
                                    << "run_rate must be";
    }
    void errors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, phrase);
        auto r = runFaultline(QStringList{"plan", m_trace, "--ops", "2"} + args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(phrase.toUtf8()), r.err.constData());
        // A file that is not a trace is named.
        r = runFaultline({"plan", m_dir.filePath("missing.h5"), "--rate", "1e-3", "--targets", "cpu"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("missing.h5"));
    }
};

QTEST_GUILESS_MAIN(TestCliPlan)
#include "test_cli_plan.moc"
