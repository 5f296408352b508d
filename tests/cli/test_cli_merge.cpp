// `faultline merge` and `faultline fleet` without a cluster: two real replays (simulated nodes,
// host names from FAULTLINE_HOST) merged into a fleet campaign that names the GPU with other
// bits; bad inputs and an existing --out are exit 2 naming the file; `fleet submit --dry-run`
// prints the batch script and writes nothing; `fleet submit` refuses a directory that holds a job.
// Hostile inputs: values that would inject lines or options into the job script are refused
// before anything is written; a node given twice counts once; a node of another trace does not
// vote; fleet.json's task count is checked; control characters from node files never reach the
// terminal.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <tuple>

#include "ReplayTrace.h"
#include "support/TestSupport.h"

using faultline::test::ProcessResult;

namespace {

const QString kHealthy = "sim:healthy:library=blas,seed=1,sim:healthy:library=blas,seed=2";
const QString kFaulty = "sim:flip:bit_hi=1,bit_lo=0,library=blas,op=gemm,rate=0.02";

QJsonObject fleetOf(const QByteArray& out)
{
    return QJsonDocument::fromJson(out).object().value("fleet").toObject();
}

ProcessResult run(const QStringList& args, const QByteArray& host = {})
{
    qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
    if (host.isEmpty())
        qunsetenv("FAULTLINE_HOST");
    else
        qputenv("FAULTLINE_HOST", host);
    return faultline::test::runProcess(QStringLiteral(FAULTLINE_EXE), args, 120000);
}

}  // namespace

class TestCliMerge : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace, m_trace2;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("trace.h5");
        const QString err = faultline::test::makeReplayTrace(m_trace);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        // Three "nodes": node-b's second GPU flips low mantissa bits of gemm outputs.
        const QStringList hosts = {"node-a", "node-b", "node-c"};
        for (const QString& h : hosts) {
            const QString targets = h == "node-b" ? "sim:healthy:library=blas,seed=1," + kFaulty : kHealthy;
            const ProcessResult r = run({"replay", m_trace, "--targets", targets, "--ops", "gemm", "--reps",
                                         "2", "--quiet", "--out", m_dir.filePath(h + ".h5")},
                                        h.toUtf8());
            QVERIFY2(r.exitCode == 0 || r.exitCode == 1, r.err.constData());
        }
        // node-f: one GPU, the faulty one; node-x: two healthy GPUs replaying another trace (other
        // bytes: gpu1's recorded output of op 0 differs).
        m_trace2 = m_dir.filePath("trace-2.h5");
        const QString err2 = faultline::test::makeReplayTrace(m_trace2, 0);
        QVERIFY2(err2.isEmpty(), qPrintable(err2));
        for (const auto& [host, trace, targets] : {std::tuple{QString("node-f"), m_trace, kFaulty},
                                                   std::tuple{QString("node-x"), m_trace2, kHealthy}}) {
            const ProcessResult r = run({"replay", trace, "--targets", targets, "--ops", "gemm", "--reps",
                                         "2", "--quiet", "--out", m_dir.filePath(host + ".h5")},
                                        host.toUtf8());
            QVERIFY2(r.exitCode == 0 || r.exitCode == 1, r.err.constData());
        }
    }

    void mergeNamesTheOutlier()
    {
        const QString out = m_dir.filePath("fleet.h5");
        ProcessResult r = run({"merge", m_dir.filePath("node-a.h5"), m_dir.filePath("node-b.h5"),
                               m_dir.filePath("node-c.h5"), "--out", out, "--json"});
        QCOMPARE(r.exitCode, 1);
        const QJsonObject report = QJsonDocument::fromJson(r.out).object();
        const QJsonObject fleet = report.value("fleet").toObject();
        QCOMPARE(fleet.value("gpu_count").toInt(), 6);
        const QJsonArray outliers = fleet.value("outliers").toArray();
        QCOMPARE(outliers.size(), 1);
        QCOMPARE(outliers.at(0)["host"].toString(), QString("node-b"));
        QVERIFY(outliers.at(0)["target"].toString().startsWith("sim:flip:"));
        QCOMPARE(outliers.at(0)["ops"].toArray().at(0)["agreeing"].toInt(), 5);
        QCOMPARE(report.value("targets").toArray().size(), 6);
        QVERIFY(QFile::exists(out));
        // The text form says the same.
        r = run({"merge", m_dir.filePath("node-a.h5"), m_dir.filePath("node-b.h5"),
                 m_dir.filePath("node-c.h5"), "--out", m_dir.filePath("fleet-text.h5")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.out.contains("OUTLIER node-b/sim:flip:"), r.out.constData());
        QVERIFY(r.out.contains("5 of 6 peers"));
        // Healthy nodes only: exit 0, nobody named.
        r = run({"merge", m_dir.filePath("node-a.h5"), m_dir.filePath("node-c.h5"), "--out",
                 m_dir.filePath("healthy.h5")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("no outlier"));
    }

    void badInputIsExit2NamingTheFile()
    {
        // Not a campaign results file.
        ProcessResult r = run({"merge", m_trace, "--out", m_dir.filePath("x.h5")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(m_trace.toUtf8()), r.err.constData());
        QVERIFY(!QFile::exists(m_dir.filePath("x.h5")));
        // An --out that exists is not overwritten.
        const QString mine = m_dir.filePath("mine.h5");
        QFile f(mine);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("mine");
        f.close();
        r = run({"merge", m_dir.filePath("node-a.h5"), "--out", mine});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("mine.h5"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("mine"));
        // A missing file.
        r = run({"merge", m_dir.filePath("nope.h5"), "--out", m_dir.filePath("y.h5")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("nope.h5"));
        // --tasks names the tasks no file came from (these files came from no task at all).
        r = run({"merge", m_dir.filePath("node-a.h5"), "--tasks", "2", "--out", m_dir.filePath("z.h5"),
                 "--json"});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(QJsonDocument::fromJson(r.out)
                     .object()
                     .value("fleet")
                     .toObject()
                     .value("missing_tasks")
                     .toArray()
                     .size(),
                 2);
    }

    void submitDryRunWritesNothing()
    {
        const QString dir = m_dir.filePath("dry");
        ProcessResult r = run({"fleet", "submit", m_trace, "--slurm", "--nodes", "3", "--gpus-per-node", "4",
                               "--partition", "gpu", "--out", dir, "--dry-run"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.out.contains("#SBATCH --array=0-2"));
        QVERIFY(r.out.contains("#SBATCH --gpus-per-node=4"));
        QVERIFY(r.out.contains("#SBATCH --partition=gpu"));
        QVERIFY(r.out.contains("targets='cuda:0,cuda:1,cuda:2,cuda:3'"));
        QVERIFY(!QDir(dir).exists());
        // Usage errors: no node count, a task that does not exist, a trace that is not there.
        r = run({"fleet", "submit", m_trace, "--out", dir, "--dry-run"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("--nodes"));
        r = run({"fleet", "submit", m_trace, "--nodes", "2", "--task-targets", "7=cpu", "--out", dir,
                 "--dry-run"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("only 2 task(s)"));
        r = run({"fleet", "submit", m_dir.filePath("none.h5"), "--nodes", "2", "--out", dir, "--dry-run"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("none.h5"));
    }

    void submitRefusesADirectoryThatHoldsAJob()
    {
        const QString dir = m_dir.filePath("taken");
        QVERIFY(QDir().mkpath(dir));
        QFile f(dir + "/job.sbatch");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("mine\n");
        f.close();
        const ProcessResult r = run({"fleet", "submit", m_trace, "--nodes", "2", "--out", dir});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("exists already"), r.err.constData());
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("mine\n"));
    }

    // Every value that reaches job.sbatch is checked before anything is written: exit 2, the
    // option named, no directory made (sbatch is not reached either).
    void submitRefusesHostileValues_data()
    {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("out");
        QTest::addColumn<QString>("named");
        QTest::newRow("partition with options") << QStringList{"--partition", "gpu --uid=0 --wrap=id"} << "p1"
                                                << "--partition";
        QTest::newRow("partition with a newline")
            << QStringList{"--partition", "gpu\ntouch /tmp/pwned"} << "p2"
            << "--partition";
        QTest::newRow("name with a newline") << QStringList{"--name", "x\ntouch /tmp/pwned"} << "n1"
                                             << "--name";
        QTest::newRow("out with a newline") << QStringList{} << "o\ntouch pwned"
                                            << "--out";
        QTest::newRow("nodelist with options") << QStringList{"--nodelist", "n1,n2 --uid=0"} << "l1"
                                               << "--nodelist";
        QTest::newRow("task number too large")
            << QStringList{"--task-targets", "99999999999999999999=cpu"} << "t1"
            << "--task-targets";
        QTest::newRow("task targets with a newline") << QStringList{"--task-targets", "1=cpu\nid"} << "t2"
                                                     << "--task-targets";
        QTest::newRow("timeout nan") << QStringList{"--timeout", "nan"} << "x1"
                                     << "0.001 to 604800";
        QTest::newRow("timeout inf") << QStringList{"--timeout", "inf"} << "x2"
                                     << "0.001 to 604800";
        QTest::newRow("timeout -1") << QStringList{"--timeout", "-1"} << "x3"
                                    << "0.001 to 604800";
        QTest::newRow("timeout 1e300") << QStringList{"--timeout", "1e300"} << "x4"
                                       << "0.001 to 604800";
        QTest::newRow("time 0") << QStringList{"--time", "0"} << "r1"
                                << "--time";
        QTest::newRow("time too long") << QStringList{"--time", "100001"} << "r2"
                                       << "--time";
        QTest::newRow("reps 0") << QStringList{"--reps", "0"} << "r3"
                                << "--reps";
        QTest::newRow("gpus too many") << QStringList{"--gpus-per-node", "1025"} << "r4"
                                       << "--gpus-per-node";
        QTest::newRow("nodes too many") << QStringList{"--nodes", "100001"} << "r5"
                                        << "--nodes";
        QTest::newRow("nodes negative") << QStringList{"--nodes", "-1"} << "r6"
                                        << "--nodes";
    }

    void submitRefusesHostileValues()
    {
        QFETCH(QStringList, extra);
        QFETCH(QString, out);
        QFETCH(QString, named);
        const QString dir = m_dir.filePath("hostile-" + out);
        QStringList args = {"fleet", "submit", m_trace, "--out", dir};
        if (!extra.contains("--nodelist") && !extra.contains("--nodes")) args += {"--nodes", "2"};
        const ProcessResult r = run(args + extra);
        QVERIFY2(!r.crashed, r.err.constData());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(named.toUtf8()), r.err.constData());
        QVERIFY2(!QFileInfo::exists(dir), qPrintable(dir));
        QVERIFY(!QFile::exists("/tmp/pwned"));
    }

    void submitRefusesATracePathWithANewline()
    {
        const QString odd = m_dir.filePath("trace\ntouch pwned.h5");
        QVERIFY(QFile::copy(m_trace, odd));
        const QString dir = m_dir.filePath("hostile-trace");
        const ProcessResult r = run({"fleet", "submit", odd, "--nodes", "2", "--out", dir});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("the trace path"), r.err.constData());
        QVERIFY(!QFileInfo::exists(dir));
    }

    // Spaces and quotes in paths are quoted: the dry-run script parses under sh -n.
    void submitQuotesPathsWithSpacesAndQuotes()
    {
        const QString odd = m_dir.filePath("run 1 \"it's\" $(touch pwned) #2");
        QVERIFY(QDir().mkpath(odd));
        QVERIFY(QFile::copy(m_trace, odd + "/trace 'a'.h5"));
        const ProcessResult r = run({"fleet", "submit", odd + "/trace 'a'.h5", "--nodes", "2", "--targets",
                                     "cpu", "--out", odd + "/fleet", "--dry-run"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const ProcessResult sh =
            faultline::test::runProcess("/bin/sh", {"-n", "-c", QString::fromUtf8(r.out)});
        QVERIFY2(sh.exitCode == 0, sh.err.constData());
        QString quoted = odd + "/fleet";
        quoted.replace("\"", "\\\"");
        QVERIFY2(r.out.contains("#SBATCH --output=\"" + quoted.toUtf8() + "/logs/%a.out\"\n"),
                 r.out.constData());
    }

    // `merge a.h5 a.h5` is one node; copies of a faulty node once outvoted the healthy one.
    void aRepeatedNodeCountsOnce()
    {
        const QString a = m_dir.filePath("node-a.h5");
        ProcessResult r = run({"merge", a, a, "--out", m_dir.filePath("twice.h5"), "--json"});
        QCOMPARE(r.exitCode, 0);
        QJsonObject fleet = fleetOf(r.out);
        QCOMPARE(fleet.value("node_count").toInt(), 1);
        QCOMPARE(fleet.value("gpu_count").toInt(), 2);
        QCOMPARE(fleet.value("repeated_nodes").toArray().size(), 1);
        r = run({"merge", a, a, "--out", m_dir.filePath("twice-text.h5")});
        QVERIFY2(r.out.contains("warning: " + a.toUtf8() + " repeats " + a.toUtf8() + " (the same file)"),
                 r.out.constData());

        // One healthy node (2 GPUs) and one faulty node (1 GPU), the faulty file given 3 times.
        const QString f = m_dir.filePath("node-f.h5");
        for (const char* copy : {"node-f-copy1.h5", "node-f-copy2.h5"})
            QVERIFY(QFile::copy(f, m_dir.filePath(copy)));
        r = run({"merge", a, f, m_dir.filePath("node-f-copy1.h5"), m_dir.filePath("node-f-copy2.h5"), "--out",
                 m_dir.filePath("copies.h5"), "--json"});
        QCOMPARE(r.exitCode, 1);
        fleet = fleetOf(r.out);
        QCOMPARE(fleet.value("node_count").toInt(), 2);
        QCOMPARE(fleet.value("repeated_nodes").toArray().size(), 2);
        QCOMPARE(fleet.value("repeated_nodes").toArray().at(0)["reason"].toString(),
                 QString("identical content"));
        const QJsonArray outliers = fleet.value("outliers").toArray();
        QCOMPARE(outliers.size(), 1);
        QCOMPARE(outliers.at(0)["host"].toString(), QString("node-f"));
    }

    // A node that replayed another trace is listed and does not vote; --trace names the campaign's.
    void aNodeOfAnotherTraceDoesNotVote()
    {
        const QString a = m_dir.filePath("node-a.h5"), c = m_dir.filePath("node-c.h5"),
                      x = m_dir.filePath("node-x.h5");
        ProcessResult r = run({"merge", a, c, x, "--out", m_dir.filePath("traces.h5"), "--json"});
        QCOMPARE(r.exitCode, 1);  // part of the fleet was not judged with the campaign
        QJsonObject fleet = fleetOf(r.out);
        QCOMPARE(fleet.value("node_count").toInt(), 2);
        QCOMPARE(fleet.value("gpu_count").toInt(), 4);
        const QJsonArray other = fleet.value("other_trace_nodes").toArray();
        QCOMPARE(other.size(), 1);
        QCOMPARE(other.at(0)["host"].toString(), QString("node-x"));
        QCOMPARE(fleet.value("peer_votes").toArray().at(0)["gpus"].toInt(), 4);
        r = run({"merge", a, c, x, "--out", m_dir.filePath("traces-text.h5")});
        QVERIFY2(r.out.contains("NOT MERGED " + x.toUtf8()), r.out.constData());
        QVERIFY(r.out.contains("replayed another trace"));
        // Named, the other trace is the campaign's.
        r = run({"merge", a, c, x, "--trace", m_trace2, "--out", m_dir.filePath("traces-2.h5"), "--json"});
        fleet = fleetOf(r.out);
        QCOMPARE(fleet.value("node_count").toInt(), 1);
        QCOMPARE(fleet.value("other_trace_nodes").toArray().size(), 2);
        // A trace no node replayed is exit 2 naming it.
        const QString third = m_dir.filePath("trace-3.h5");
        QVERIFY(faultline::test::makeReplayTrace(third, 3).isEmpty());
        r = run({"merge", a, c, "--trace", third, "--out", m_dir.filePath("traces-3.h5")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("trace-3.h5"), r.err.constData());
    }

    void fleetJsonFieldsAreChecked_data()
    {
        QTest::addColumn<QByteArray>("tasks");
        QTest::newRow("-1") << QByteArray(",\"tasks\":-1");
        QTest::newRow("1e12") << QByteArray(",\"tasks\":1000000000000");
        QTest::newRow("0") << QByteArray(",\"tasks\":0");
        QTest::newRow("text") << QByteArray(",\"tasks\":\"4\"");
        QTest::newRow("missing") << QByteArray("");
    }

    void fleetJsonFieldsAreChecked()
    {
        QFETCH(QByteArray, tasks);
        const QString dir = m_dir.filePath("manifest-" + QString(QTest::currentDataTag()));
        QVERIFY(QDir().mkpath(dir + "/results"));
        QFile f(dir + "/fleet.json");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"faultline_format\":\"fleet-job\",\"faultline_version\":1,\"scheduler\":\"slurm\"" +
                tasks + ",\"trace\":\"/t.h5\",\"job_ids\":[]}");
        f.close();
        ProcessResult r = run({"merge", "--fleet", dir, "--out", m_dir.filePath("m.h5")});
        QVERIFY2(!r.crashed && !r.timedOut, r.err.constData());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("fleet.json") && r.err.contains("\"tasks\""), r.err.constData());
        QVERIFY(r.err.contains("1 to 100000"));
        r = run({"fleet", "status", dir});
        QVERIFY2(!r.crashed && !r.timedOut, r.err.constData());
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("fleet.json"));
    }

    // A host name from a node file with control characters reaches the terminal escaped.
    void controlCharactersFromNodeFilesAreEscaped()
    {
        const QString evil = m_dir.filePath("node-evil.h5");
        const ProcessResult replay = run({"replay", m_trace, "--targets", kHealthy, "--ops", "gemm", "--reps",
                                          "1", "--quiet", "--out", evil},
                                         "evil\x1b]0;owned\x07\nhost");
        QVERIFY2(replay.exitCode == 0 || replay.exitCode == 1, replay.err.constData());
        const ProcessResult r =
            run({"merge", m_dir.filePath("node-a.h5"), evil, "--out", m_dir.filePath("evil.h5")});
        QVERIFY2(r.exitCode == 0 || r.exitCode == 1, r.err.constData());
        QVERIFY2(!r.out.contains('\x1b') && !r.out.contains('\x07'), r.out.constData());
        QVERIFY2(r.out.contains("control characters"), r.out.constData());
        const ProcessResult j = run(
            {"merge", m_dir.filePath("node-a.h5"), evil, "--out", m_dir.filePath("evil-json.h5"), "--json"});
        QVERIFY(!j.out.contains('\x1b') && !j.out.contains("\\u001b"));
        QVERIFY(j.out.contains("evil\\\\x1b]0;owned\\\\x07\\\\x0ahost"));
    }

    void statusOfADirectoryWithoutAJobIsExit2()
    {
        const ProcessResult r = run({"fleet", "status", m_dir.path()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("fleet.json"));
    }
};

QTEST_GUILESS_MAIN(TestCliMerge)
#include "test_cli_merge.moc"
