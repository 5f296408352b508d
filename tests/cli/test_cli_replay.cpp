// `faultline bisect`, `faultline replay` and `faultline demo` through the real executables:
// bisection finds the corrupted op and none in a clean trace whose outputs differ only by
// summation order; campaigns on hang/crash/intermittent targets record every outcome; a killed
// campaign resumes from its journal without redoing finished runs.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstring>

#include "ReplayTrace.h"
#include "core/golden/OpRegistry.h"
#include "support/TestSupport.h"

using namespace faultline;
using faultline::test::jsonObject;
using faultline::test::makeReplayTrace;
using faultline::test::runFaultline;
using faultline::test::runProcess;

namespace {

}  // namespace

class TestCliReplay : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void bisectFindsTheCorruptedOp_data()
    {
        QTest::addColumn<int>("corrupt");
        QTest::newRow("clean: summation order only") << -1;
        QTest::newRow("op 1 corrupted") << 1;
        QTest::newRow("op 3 corrupted") << 3;
    }
    void bisectFindsTheCorruptedOp()
    {
        QFETCH(int, corrupt);
        const QString path = m_dir.filePath(QString("bisect-%1.h5").arg(corrupt + 1));
        const QString err = makeReplayTrace(path, corrupt);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        auto r = runFaultline({"bisect", path, "--suspect", "gpu1", "--json", "--quiet"});
        QVERIFY2(!r.crashed, r.err.constData());
        QCOMPARE(r.exitCode, corrupt < 0 ? 0 : 1);
        const QJsonObject o = jsonObject(r.out);
        QCOMPARE(o.value("trace").toString(), path);
        QCOMPARE(o.value("suspect").toString(), QString("gpu1"));
        if (corrupt < 0)
            QVERIFY(o.value("first_divergent_op").isNull());
        else
            QCOMPARE(o.value("first_divergent_op").toInt(), corrupt);
        const QJsonArray ops = o.value("ops").toArray();
        QCOMPARE(ops.size(), 4);
        for (int i = 0; i < 4; ++i) {
            const QJsonObject op = ops.at(i).toObject();
            QCOMPARE(op.value("index").toInt(), i);
            QCOMPARE(op.value("verdict").toString(), QString(i == corrupt ? "divergent" : "ok"));
            QVERIFY(op.contains("elements") && op.contains("max_ulp") && op.contains("signature"));
            QCOMPARE(op.value("beyond_tolerance").toInteger(), i == corrupt ? 1 : 0);
        }
        // The healthy device never diverges.
        r = runFaultline({"bisect", path, "--suspect", "gpu0", "--json", "--quiet"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(jsonObject(r.out).value("first_divergent_op").isNull());
        // An unknown label is an error naming the devices.
        r = runFaultline({"bisect", path, "--suspect", "gpu7"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("gpu0") && r.err.contains("gpu7"));
    }

    void campaignRecordsHangsCrashesAndIntermittentFaults()
    {
        const QString path = m_dir.filePath("campaign.h5");
        QVERIFY(makeReplayTrace(path, -1).isEmpty());
        auto r = runFaultline(
            {"replay", path, "--targets",
             "cpu,sim:hang:after=2,sim:crash:after=2,sim:intermittent:k=1,n=3,rate=0.05,bit_lo=23,bit_hi=29",
             "--ops", "0-2", "--reps", "3", "--timeout", "1.5", "--json", "--quiet"});
        QVERIFY2(!r.crashed && !r.timedOut, r.err.constData());
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = jsonObject(r.out);
        const QJsonArray runs = o.value("runs").toArray();
        QCOMPARE(runs.size(), 4 * 3 * 3);
        QMap<QString, QMap<QString, int>> outcomes;
        for (const QJsonValue& v : runs) {
            const QJsonObject run = v.toObject();
            outcomes[run.value("target").toString()][run.value("outcome").toString()]++;
            if (run.value("outcome").toString() == "crash")
                QVERIFY2(run.value("stderr").toString().contains("simulated device fault"),
                         qPrintable(run.value("stderr").toString()));
        }
        QCOMPARE(outcomes["cpu"]["ok"], 9);
        QCOMPARE(outcomes["sim:hang:after=2"]["hang"], 3);
        QCOMPARE(outcomes["sim:hang:after=2"]["ok"], 6);
        QCOMPARE(outcomes["sim:crash:after=2"]["crash"], 3);
        QCOMPARE(outcomes["sim:crash:after=2"]["ok"], 6);
        const QString inter = "sim:intermittent:bit_hi=29+bit_lo=23+k=1+n=3+rate=0.05";
        QCOMPARE(outcomes[inter]["mismatch"], 3);  // rep 0 of each op
        QMap<QString, QString> verdicts;
        for (const QJsonValue& v : o.value("targets").toArray())
            verdicts[v.toObject().value("target").toString()] = v.toObject().value("verdict").toString();
        QCOMPARE(verdicts["cpu"], QString("healthy"));
        QCOMPARE(verdicts[inter], QString("transient"));
        QVERIFY(verdicts["sim:hang:after=2"] != "healthy");
        const QJsonObject cpu = o.value("targets").toArray().at(0).toObject();
        QVERIFY(cpu.value("determinism").toObject().value("certified").toBool());
        QCOMPARE(cpu.value("ci").toArray().size(), 2);
    }

    void killedCampaignResumesFromItsJournal()
    {
        const QString path = m_dir.filePath("resume.h5");
        const QString out = m_dir.filePath("resume-results.h5");
        QVERIFY(makeReplayTrace(path, 2).isEmpty());
        const QStringList args = {"replay", path,     "--targets", "cpu,sim:stuck-bit:bit=22",
                                  "--reps", "2",      "--out",     out,
                                  "--json", "--quiet"};
        auto r = runFaultline(args);
        QCOMPARE(r.exitCode, 1);
        QVERIFY(QFile::exists(out));
        const QString journal = out + ".journal.jsonl";
        QFile f(journal);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().split('\n');
        f.close();
        QCOMPARE(lines.size(), 1 + 4 * 2 * 2 + 1);  // the header, 16 runs, the empty tail
        QVERIFY(lines[0].contains("\"journal\":\"faultline-campaign\""));
        QVERIFY(lines[0].contains("\"trace_digest\""));
        // As if the orchestrator was killed after 6 runs, in the middle of writing the 7th.
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        for (int i = 0; i <= 6; ++i) f.write(lines[i] + '\n');
        f.write(lines[7].left(lines[7].size() / 2));
        f.close();
        QFile::remove(out);

        auto again = runFaultline(args);  // without --resume: refuses to overwrite the journal
        QCOMPARE(again.exitCode, 2);
        QVERIFY(again.err.contains("--resume"));

        auto resumed = runFaultline(args + QStringList{"--resume"});
        QCOMPARE(resumed.exitCode, 1);
        const QJsonObject o = jsonObject(resumed.out);
        const QJsonArray runs = o.value("runs").toArray();
        QCOMPARE(runs.size(), 16);
        // The six journaled runs were kept as they were, not run again.
        int kept = 0;
        for (int i = 1; i <= 6; ++i) {
            const QJsonObject before = QJsonDocument::fromJson(lines[i]).object();
            for (const QJsonValue& v : runs)
                if (v.toObject() == before) ++kept;
        }
        QCOMPARE(kept, 6);
        QVERIFY(o.value("warnings").toArray().size() >= 1);  // the torn line
        QVERIFY(QFile::exists(out));
    }

    void demoTellsTheStory()
    {
        const QString dir = m_dir.filePath("demo");
        auto r = runFaultline({"demo", "--headless", "--out", dir});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString text = QString::fromUtf8(r.out);
        QVERIFY2(text.contains("first divergent op:") && text.contains("blocks.0.mlp.fc1"), qPrintable(text));
        QVERIFY(text.contains("tile_clustered"));
        QVERIFY(text.contains("device-specific"));
        QVERIFY(QFile::exists(dir + "/incident-trace.h5"));
        QVERIFY(QFile::exists(dir + "/checkpoints/healthy/step-003-rank-1.h5"));
        QVERIFY(QFile::exists(dir + "/checkpoints/incident/step-003-rank-1.h5"));
        auto b =
            runFaultline({"bisect", dir + "/incident-trace.h5", "--suspect", "gpu1", "--json", "--quiet"});
        QCOMPARE(b.exitCode, 1);
        const QJsonObject o = jsonObject(b.out);
        const int first = o.value("first_divergent_op").toInt(-1);
        QVERIFY(first >= 0);
        QCOMPARE(o.value("ops").toArray().at(first).toObject().value("op").toString(), QString("gemm"));
        // The healthy re-run recorded in the same trace is clean.
        b = runFaultline({"bisect", dir + "/incident-trace.h5", "--suspect", "gpu0", "--json", "--quiet"});
        QCOMPARE(b.exitCode, 0);
    }
};

QTEST_GUILESS_MAIN(TestCliReplay)
#include "test_cli_replay.moc"
