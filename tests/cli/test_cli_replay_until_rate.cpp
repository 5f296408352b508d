// `faultline replay --until-rate`: adaptive repetitions per op and target. A healthy target stops
// at the theoretical minimum number of clean runs that rules out the rate (computed here from the
// formula, not by Faultline's helper) and says so in JSON, text and the results file, also when
// resumed; a simulated defect that fires in 1e-3 of runs is found after a number of runs the
// geometric distribution allows; a budget stops a campaign that cannot reach its rate; and the
// options are checked (exit 2).
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "ReplayTrace.h"
#include "core/replay/CampaignResultsFile.h"
#include "core/replay/StoppingRule.h"
#include "support/TestSupport.h"

using namespace faultline;
using faultline::test::jsonObject;
using faultline::test::makeReplayTrace;
using faultline::test::runFaultline;
using faultline::test::runProcess;

namespace {

// The one op of the campaign's JSON: its stats on `target`.
QJsonObject opTarget(const QJsonObject& report, const QString& target)
{
    return report.value("ops")
        .toArray()
        .at(0)
        .toObject()
        .value("targets")
        .toObject()
        .value(target)
        .toObject();
}

// log P(X = k) for X ~ Binomial(n, p).
double logBinomial(uint64_t n, uint64_t k, double p)
{
    return std::lgamma(double(n) + 1) - std::lgamma(double(k) + 1) - std::lgamma(double(n - k) + 1) +
           double(k) * std::log(p) + double(n - k) * std::log1p(-p);
}

// P(S <= s) for S the sum of `r` independent geometric counts of trials up to and including the
// first success at rate p: at least r successes in s trials.
double sumOfGeometricCdf(uint64_t s, uint64_t r, double p)
{
    if (s < r) return 0;
    double below = 0;  // P(fewer than r successes in s trials)
    for (uint64_t k = 0; k < r; ++k) below += std::exp(logBinomial(s, k, p));
    return 1 - below;
}

}  // namespace

class TestCliReplayUntilRate : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

private slots:
    void initTestCase()
    {
        m_trace = m_dir.filePath("trace.h5");
        const QString err = makeReplayTrace(m_trace, -1);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    void healthyTargetStopsAtTheMinimumRuns()
    {
        // The fewest clean runs N with 1 - 0.05^(1/N) < 1e-3: N > ln(0.05) / ln(1 - 1e-3).
        const double rate = 1e-3;
        const uint64_t minimum = uint64_t(std::floor(std::log(0.05) / std::log(1 - rate))) + 1;
        QCOMPARE(minimum, uint64_t(2995));
        const QString out = m_dir.filePath("healthy.h5");
        auto r = runFaultline({"replay", m_trace, "--targets", "sim:healthy", "--ops", "2", "--until-rate",
                               "1e-3", "--out", out, "--json", "--quiet"});
        QVERIFY2(!r.crashed && !r.timedOut, r.err.constData());
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = jsonObject(r.out);
        const QJsonObject s = opTarget(o, "sim:healthy");
        const uint64_t runs = uint64_t(s.value("runs").toInteger());
        QVERIFY2(runs >= minimum && double(runs) <= 1.05 * double(minimum),
                 qPrintable(QString::number(runs)));
        QCOMPARE(s.value("failures").toInt(), 0);
        QCOMPARE(s.value("stopped_by").toString(), QString("rate"));
        QVERIFY(s.value("rules_out").toObject().value("rate_below").toDouble() < rate);
        QCOMPARE(s.value("rules_out").toObject().value("confidence").toDouble(), 0.95);
        QCOMPARE(o.value("until_rate").toObject().value("rate").toDouble(), rate);
        QVERIFY(o.value("until_rate").toObject().value("budget_s").isNull());
        QCOMPARE(o.value("reps").toInt(), 0);
        const QJsonObject target = o.value("targets").toArray().at(0).toObject();
        QVERIFY2(target.value("explanation").toString().contains(QString("no failure in %1 runs").arg(runs)),
                 qPrintable(target.value("explanation").toString()));
        // The results file holds the same.
        auto file = readCampaignResults(out.toStdString());
        QVERIFY2(file, file ? "" : file.message().c_str());
        QCOMPARE(QString::fromStdString((*file)["ops"][0]["targets"]["sim:healthy"].value("stopped_by", "")),
                 QString("rate"));
        // Resumed, the journal already holds every run: nothing more runs, and the text says what
        // the runs rule out and why they stopped.
        QFile::remove(out);
        r = runFaultline({"replay", m_trace, "--targets", "sim:healthy", "--ops", "2", "--until-rate", "1e-3",
                          "--out", out, "--resume", "--quiet"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QString("op 2 add on sim:healthy: no failure in %1 runs").arg(runs).toUtf8()),
                 r.out.constData());
        QVERIFY2(r.out.contains("stopped by rate: rate < 1e-3 at 95% reached"), r.out.constData());
        QVERIFY2(r.out.contains("rate < 0.1% at 95%"), r.out.constData());
        // A journal of an adaptive campaign is not continued as a fixed one.
        QFile::remove(out);
        r = runFaultline({"replay", m_trace, "--targets", "sim:healthy", "--ops", "2", "--reps", "3", "--out",
                          out, "--resume", "--quiet"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("--until-rate"), r.err.constData());
    }

    void rareDefectIsFoundAtItsRate()
    {
        // Eight devices with the same defect, firing in 1e-3 of runs, each with its own seed.
        constexpr int kDevices = 8;
        constexpr double kRate = 1e-3;
        QStringList targets;
        for (int i = 1; i <= kDevices; ++i)
            targets << QString("sim:flip:rate=1+run_rate=0.001+seed=%1").arg(i);
        auto r = runFaultline({"replay", m_trace, "--targets", targets.join(","), "--ops", "2",
                               "--until-rate", "1e-4", "--seed", "7", "--json", "--quiet"});
        QVERIFY2(!r.crashed && !r.timedOut, r.err.constData());
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = jsonObject(r.out);
        uint64_t total = 0;
        for (const QString& t : targets) {
            const QJsonObject s = opTarget(o, t);
            QCOMPARE(s.value("stopped_by").toString(), QString("failure"));
            QCOMPARE(s.value("failures").toInt(), 1);  // stopped at the first failure
            QVERIFY(s.value("rules_out").isNull());
            total += uint64_t(s.value("runs").toInteger());
        }
        // The runs to the first failure of each device are geometric at 1e-3; their sum over the
        // devices lies inside the distribution's central 99.9% (about 1900 to 18000 runs): a
        // defect firing at 1e-2 or 1e-4 lands outside.
        uint64_t lo = kDevices, hi = kDevices;
        while (sumOfGeometricCdf(lo, kDevices, kRate) < 0.0005) lo += 10;
        hi = lo;
        while (sumOfGeometricCdf(hi, kDevices, kRate) < 0.9995) hi += 10;
        QVERIFY2(total >= lo - 10 && total <= hi,
                 qPrintable(QString("%1 runs, expected %2..%3").arg(total).arg(lo).arg(hi)));
    }

    void budgetStopsWhatCannotReachItsRate()
    {
        auto r = runFaultline({"replay", m_trace, "--targets", "cpu", "--ops", "2", "--until-rate", "1e-7",
                               "--budget", "2s", "--json", "--quiet"},
                              60000);
        QVERIFY2(!r.crashed && !r.timedOut, r.err.constData());
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = jsonObject(r.out);
        const QJsonObject s = opTarget(o, "cpu");
        QCOMPARE(s.value("stopped_by").toString(), QString("budget"));
        QVERIFY(s.value("runs").toInteger() > 0);
        QVERIFY(s.value("rules_out").toObject().value("rate_below").toDouble() > 1e-7);
        QCOMPARE(o.value("until_rate").toObject().value("budget_s").toDouble(), 2.0);
    }

    void aPercentageIsTheSameRate()
    {
        // --until-rate 1% is 0.01: the 299 clean runs that rule it out at 95%.
        auto r = runFaultline({"replay", m_trace, "--targets", "sim:healthy", "--ops", "2", "--until-rate",
                               "1%", "--json", "--quiet"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = jsonObject(r.out);
        QCOMPARE(o.value("until_rate").toObject().value("rate").toDouble(), 0.01);
        QCOMPARE(opTarget(o, "sim:healthy").value("runs").toInteger(), qint64(runsToRuleOut(0.01, 0.95)));
        QCOMPARE(runsToRuleOut(0.01, 0.95), uint64_t(299));
    }

    void optionsAreChecked_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("reps and until-rate")
            << QStringList{"--reps", "3", "--until-rate", "1e-3"} << "excludes";
        QTest::newRow("rate too high") << QStringList{"--until-rate", "0.9"} << "between 1e-7 and 0.5";
        QTest::newRow("rate zero") << QStringList{"--until-rate", "0"} << "between 1e-7 and 0.5";
        QTest::newRow("not a rate") << QStringList{"--until-rate", "often"} << "--until-rate 'often'";
        QTest::newRow("percent too high") << QStringList{"--until-rate", "60%"} << "between 1e-7 and 0.5";
        QTest::newRow("confidence") << QStringList{"--until-rate", "1e-3", "--confidence", "1"}
                                    << "--confidence";
        QTest::newRow("budget unit") << QStringList{"--until-rate", "1e-3", "--budget", "5x"}
                                     << "--budget '5x'";
        QTest::newRow("budget zero") << QStringList{"--until-rate", "1e-3", "--budget", "0s"}
                                     << "more than 0";
        QTest::newRow("budget alone") << QStringList{"--budget", "10m"} << "requires";
        QTest::newRow("trigger range")
            << QStringList{"--until-rate", "1e-3", "--targets", "sim:flip:run_rate=0"}
            << "run_rate must be a number";
    }
    void optionsAreChecked()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, phrase);
        QStringList all{"replay", m_trace, "--ops", "2", "--quiet"};
        if (!args.contains("--targets"))
            all << "--targets"
                << "cpu";
        auto r = runFaultline(all + args, 60000);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(phrase.toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliReplayUntilRate)
#include "test_cli_replay_until_rate.moc"
