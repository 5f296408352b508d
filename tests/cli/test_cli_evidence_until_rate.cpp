// `faultline evidence` over an adaptive campaign (`replay --until-rate`): the bundle's case and
// report say, per op and target, what stopped its runs (failure, rate, budget), and every clean
// result reads as what it rules out ("no failure in N runs: rate < X at 95%"), in the targets'
// table too, never a bare 0% interval. The number of clean runs is computed here from the formula.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "ReplayTrace.h"
#include "support/TestSupport.h"

using faultline::test::makeReplayTrace;
using faultline::test::runFaultline;
using faultline::test::sourcePath;

namespace {

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The adaptive_ops line of `target` in the case's replay object.
QJsonObject adaptiveOp(const QJsonObject& replay, const QString& target)
{
    for (const auto& v : replay.value("adaptive_ops").toArray())
        if (v.toObject().value("target").toString() == target) return v.toObject();
    return {};
}

// The report's line of the table that starts with `start` and holds `target`.
QString reportLine(const QString& report, const QString& start, const QString& target)
{
    for (const QString& line : report.split('\n'))
        if (line.startsWith(start) && line.contains("| " + target + " |")) return line;
    return {};
}

}  // namespace

class TestCliEvidenceUntilRate : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

    // A bundle of `campaign`: its case.json's replay object and report.md.
    bool makeBundle(const QString& campaign, const QString& out, QJsonObject& replay, QString& report)
    {
        auto r =
            runFaultline({"evidence", "--out", out, "--case-id", "CASE-RATE", "--campaign", campaign,
                          "--nvidia-smi", sourcePath("tests/fixtures/evidence/nvidia-smi-before-reset.xml"),
                          "--suspect", "1652822001234"});
        if (r.exitCode != 0) {
            qWarning("evidence exit %d: %s", r.exitCode, r.err.constData());
            return false;
        }
        replay = QJsonDocument::fromJson(readFile(out + "/case.json")).object().value("replay").toObject();
        report = QString::fromUtf8(readFile(out + "/report.md"));
        return !replay.isEmpty() && !report.isEmpty();
    }

private slots:
    void initTestCase()
    {
        m_trace = m_dir.filePath("trace.h5");
        const QString err = makeReplayTrace(m_trace, -1);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    void saysWhatStoppedEachOpAndWhatCleanRunsRuleOut()
    {
        const QString campaign = m_dir.filePath("adaptive.h5");
        auto r = runFaultline({"replay", m_trace, "--targets", "sim:healthy,sim:flip:rate=1", "--ops", "2",
                               "--until-rate", "1e-2", "--out", campaign, "--quiet"});
        QVERIFY2(r.exitCode == 1, r.err.constData());
        QJsonObject replay;
        QString report;
        QVERIFY(makeBundle(campaign, m_dir.filePath("bundle"), replay, report));
        QCOMPARE(replay.value("until_rate").toObject().value("rate").toDouble(), 1e-2);
        // The fewest clean runs N with 1 - 0.05^(1/N) < 1e-2.
        const qint64 cleanRuns = qint64(std::floor(std::log(0.05) / std::log(1 - 1e-2))) + 1;
        const QJsonObject healthy = adaptiveOp(replay, "sim:healthy");
        QCOMPARE(healthy.value("stopped_by").toString(), QString("rate"));
        QCOMPARE(healthy.value("runs").toInteger(), cleanRuns);
        QVERIFY(healthy.value("rules_out").toObject().value("rate_below").toDouble() < 1e-2);
        const QJsonObject flip = adaptiveOp(replay, "sim:flip:rate=1");
        QCOMPARE(flip.value("stopped_by").toString(), QString("failure"));
        QCOMPARE(flip.value("runs").toInteger(), 1);
        QVERIFY(flip.value("rules_out").isNull());

        QVERIFY2(report.contains("### What stopped each op"), qPrintable(report));
        const QString clean = reportLine(report, "| 2 ", "sim:healthy");
        QVERIFY2(clean.contains(QString("| rate | no failure in %1 runs: rate < ").arg(cleanRuns)) &&
                     clean.contains(" at 95% |"),
                 qPrintable(clean));
        const QString failed = reportLine(report, "| 2 ", "sim:flip:rate=1");
        QVERIFY2(failed.contains("| 1 | 1 | failure | 100"), qPrintable(failed));
        // The targets' table: the clean target reads as what it rules out.
        const QString row = [&] {
            for (const QString& line : report.split('\n'))
                if (line.startsWith("| sim:healthy |")) return line;
            return QString();
        }();
        QVERIFY2(row.contains(QString("no failure in %1 runs: rate < ").arg(cleanRuns)), qPrintable(report));
        QVERIFY2(!row.contains("0.0% ["), qPrintable(row));
    }

    void saysWhenTheBudgetRanOut()
    {
        const QString campaign = m_dir.filePath("budget.h5");
        auto r = runFaultline({"replay", m_trace, "--targets", "cpu", "--ops", "2", "--until-rate", "1e-7",
                               "--budget", "1s", "--out", campaign, "--quiet"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QJsonObject replay;
        QString report;
        QVERIFY(makeBundle(campaign, m_dir.filePath("bundle-budget"), replay, report));
        const QJsonObject cpu = adaptiveOp(replay, "cpu");
        QCOMPARE(cpu.value("stopped_by").toString(), QString("budget"));
        const QString line = reportLine(report, "| 2 ", "cpu");
        QVERIFY2(line.contains("| budget | no failure in ") &&
                     line.contains("(the budget ran out before rate < 1e-7 at 95%)"),
                 qPrintable(line));
    }
};

QTEST_MAIN(TestCliEvidenceUntilRate)
#include "test_cli_evidence_until_rate.moc"
