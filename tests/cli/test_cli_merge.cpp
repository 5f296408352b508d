// `faultline merge` and `faultline fleet` without a cluster: two real replays (simulated nodes,
// host names from FAULTLINE_HOST) merged into a fleet campaign that names the GPU with other
// bits; bad inputs and an existing --out are exit 2 naming the file; `fleet submit --dry-run`
// prints the batch script and writes nothing; `fleet submit` refuses a directory that holds a job.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "ReplayTrace.h"
#include "support/TestSupport.h"

using faultline::test::ProcessResult;

namespace {

const QString kHealthy = "sim:healthy:library=blas,seed=1,sim:healthy:library=blas,seed=2";
const QString kFaulty = "sim:flip:bit_hi=1,bit_lo=0,library=blas,op=gemm,rate=0.02";

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
    QString m_trace;

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

    void statusOfADirectoryWithoutAJobIsExit2()
    {
        const ProcessResult r = run({"fleet", "status", m_dir.path()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("fleet.json"));
    }
};

QTEST_GUILESS_MAIN(TestCliMerge)
#include "test_cli_merge.moc"
