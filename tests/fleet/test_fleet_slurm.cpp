// The fleet on a real Slurm cluster: scripts/slurm-local starts munged, slurmctld and slurmd on
// this machine (one node), `faultline fleet submit` sends a 4-task job array of simulated nodes
// (two simulated production-BLAS GPUs each; task 2 has one whose gemm bits are flipped below the
// op's bound), `fleet status` follows it, and `faultline merge` must name exactly that GPU. A
// second job has a task whose replay fails and one that is cancelled while it hangs: status and
// merge report both as missing. A cluster that cannot start fails the test with the reason;
// nothing is skipped.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "cli/ReplayTrace.h"
#include "core/replay/CampaignResultsFile.h"
#include "support/TestSupport.h"

using faultline::test::ProcessResult;
using faultline::test::runProcess;

namespace {

// Two healthy peers per node; on task 2 the second has sub-bound gemm flips (peer key of both:
// a simulated device on the simulated production BLAS). Labels are normalised ('+').
const QString kHealthy = "sim:healthy:library=blas,seed=1,sim:healthy:library=blas,seed=2";
const QString kFaulty = "sim:flip:bit_hi=1,bit_lo=0,library=blas,op=gemm,rate=0.02";
const QString kFaultyLabel = "sim:flip:bit_hi=1+bit_lo=0+library=blas+op=gemm+rate=0.02";

QJsonObject json(const QByteArray& out)
{
    return QJsonDocument::fromJson(out).object();
}

ProcessResult runFaultline(const QStringList& args, int timeoutMs = 120000)
{
    return runProcess(QStringLiteral(FAULTLINE_EXE), args, timeoutMs);
}

}  // namespace

class TestFleetSlurm : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_cluster, m_trace;
    bool m_started = false;

    // Polls `fleet status` until no task is pending or running (at most `seconds`).
    QJsonObject waitForTasks(const QString& fleetDir, int seconds)
    {
        QElapsedTimer timer;
        timer.start();
        QJsonObject status;
        while (timer.elapsed() < seconds * 1000) {
            const ProcessResult r = runFaultline({"fleet", "status", fleetDir, "--json"});
            status = json(r.out);
            if (r.exitCode == 2) {
                qWarning("fleet status failed: %s", r.err.constData());
                return status;
            }
            if (status.value("pending").toInt() + status.value("running").toInt() == 0 &&
                status.value("tasks").toInt() > 0)
                return status;
            QThread::msleep(300);
        }
        return status;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("trace.h5");
        const QString err = faultline::test::makeReplayTrace(m_trace);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        m_cluster = m_dir.filePath("slurm");
        QElapsedTimer timer;
        timer.start();
        const ProcessResult r = runProcess(
            "/bin/bash", {QStringLiteral(FAULTLINE_SOURCE_DIR) + "/scripts/slurm-local", "start", m_cluster},
            90000);
        QVERIFY2(r.exitCode == 0,
                 qPrintable("the Slurm cluster did not start: " + QString::fromUtf8(r.err + r.out)));
        m_started = true;
        qInfo("Slurm cluster started in %.1f s: %s", timer.elapsed() / 1000.0, r.out.trimmed().constData());
        qputenv("SLURM_CONF", (m_cluster + "/slurm.conf").toUtf8());
    }

    void cleanupTestCase()
    {
        if (m_started)
            runProcess("/bin/bash",
                       {QStringLiteral(FAULTLINE_SOURCE_DIR) + "/scripts/slurm-local", "stop", m_cluster},
                       30000);
    }

    void mergedVerdictsNameExactlyThePlantedOutlier()
    {
        QElapsedTimer timer;
        timer.start();
        const QString fleetDir = m_dir.filePath("fleet");
        ProcessResult r = runFaultline({"fleet", "submit", m_trace, "--slurm", "--nodes", "4", "--reps", "2",
                                        "--ops", "gemm", "--targets", kHealthy, "--task-targets",
                                        "2=sim:healthy:library=blas,seed=1," + kFaulty, "--timeout", "30",
                                        "--out", fleetDir});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(QFile::exists(fleetDir + "/job.sbatch"));
        const QJsonObject status = waitForTasks(fleetDir, 180);
        QCOMPARE(status.value("tasks").toInt(), 4);
        QVERIFY2(status.value("done").toInt() == 4, QJsonDocument(status).toJson().constData());
        QCOMPARE(status.value("failed").toInt(), 0);
        const double ran = timer.elapsed() / 1000.0;

        const QString merged = m_dir.filePath("fleet.h5");
        r = runFaultline({"merge", "--fleet", fleetDir, "--out", merged, "--json"});
        QVERIFY2(r.exitCode == 1, r.err.constData());  // an outlier is a finding
        const QJsonObject fleet = json(r.out).value("fleet").toObject();
        QCOMPARE(fleet.value("node_count").toInt(), 4);
        QCOMPARE(fleet.value("gpu_count").toInt(), 8);
        QCOMPARE(fleet.value("missing_tasks").toArray().size(), 0);
        const QJsonArray outliers = fleet.value("outliers").toArray();
        QCOMPARE(outliers.size(), 1);
        const QJsonObject outlier = outliers.at(0).toObject();
        QCOMPARE(outlier.value("task").toString(), QString("2"));
        QCOMPARE(outlier.value("target").toString(), kFaultyLabel);
        QCOMPARE(outlier.value("host").toString(), QSysInfo::machineHostName().section(QChar(0x2e), 0, 0));
        // Both gemm ops (0 and 3), each with 7 of 8 peers agreeing on other bits.
        const QJsonArray ops = outlier.value("ops").toArray();
        QCOMPARE(ops.size(), 2);
        for (const QJsonValue& op : ops) {
            QCOMPARE(op["peers"].toInt(), 8);
            QCOMPARE(op["agreeing"].toInt(), 7);
        }
        // Every other GPU agrees with the majority.
        int withOutlierOps = 0;
        for (const QJsonValue& g : fleet.value("gpus").toArray()) {
            if (!g["outlier_ops"].toArray().isEmpty()) ++withOutlierOps;
            if (g["target"].toString() != kFaultyLabel) QCOMPARE(g["verdict"].toString(), QString("healthy"));
        }
        QCOMPARE(withOutlierOps, 1);
        // The merged file is a campaign results file.
        auto doc = faultline::readCampaignResults(merged.toStdString());
        QVERIFY2(doc.ok(), doc.ok() ? "" : doc.message().c_str());
        QCOMPARE(doc.value()["targets"].size(), size_t(8));
        qInfo("4-task fleet job submitted, run and followed in %.1f s", ran);
    }

    // A fleet directory whose path holds spaces, quotes, '#', '%', '$' and '`': sbatch reads the
    // quoted #SBATCH --output as one path (the task's log lands in DIR/logs), the shell lines run
    // nothing of it, and the task's results are where fleet status and merge look.
    void aDirectoryWithSpacesAndQuotesWorks()
    {
        const QString fleetDir = m_dir.filePath("run 1 \"it's\" #2 %a $(touch pwned) `touch pwned2`");
        ProcessResult r = runFaultline({"fleet", "submit", m_trace, "--nodes", "1", "--reps", "1", "--ops",
                                        "gemm", "--targets", "cpu", "--name", "odd-dir", "--out", fleetDir});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject status = waitForTasks(fleetDir, 120);
        QVERIFY2(status.value("done").toInt() == 1, QJsonDocument(status).toJson().constData());
        QVERIFY2(QFile::exists(fleetDir + "/logs/0.out"), qPrintable(QDir(fleetDir).entryList().join(", ")));
        QVERIFY(QFile::exists(fleetDir + "/results/0.h5"));
        for (const char* f : {"pwned", "pwned2"}) {
            QVERIFY(!QFile::exists(m_dir.filePath(f)));
            QVERIFY(!QFile::exists(fleetDir + "/" + f));
        }
        r = runFaultline({"merge", "--fleet", fleetDir, "--out", m_dir.filePath("odd.h5"), "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(json(r.out).value("fleet").toObject().value("node_count").toInt(), 1);
    }

    void failedAndCancelledTasksAreReportedMissing()
    {
        // Task 1's replay cannot start (exit 2); task 2 hangs until it is cancelled, like a task
        // the scheduler kills at its time limit: it leaves no exit code and leaves the queue.
        const QString fleetDir = m_dir.filePath("fleet-failing");
        ProcessResult r =
            runFaultline({"fleet", "submit", m_trace, "--nodes", "3", "--reps", "1", "--ops", "gemm",
                          "--targets", kHealthy, "--task-targets", "1=sim:no-such-model", "--task-targets",
                          "2=sim:hang:after=0", "--timeout", "600", "--out", fleetDir});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QFile manifest(fleetDir + "/fleet.json");
        QVERIFY(manifest.open(QIODevice::ReadOnly));
        const QString jobId = QJsonDocument::fromJson(manifest.readAll()).object()["job_ids"][0].toString();
        QVERIFY(!jobId.isEmpty());
        // Wait for task 2 to run (tasks take the node one at a time), then cancel it.
        QElapsedTimer timer;
        timer.start();
        bool running = false;
        while (!running && timer.elapsed() < 120000) {
            const QJsonObject s = json(runFaultline({"fleet", "status", fleetDir, "--json"}).out);
            running = s["task_states"].toArray().at(2)["state"].toString() == "running";
            if (!running) QThread::msleep(300);
        }
        QVERIFY2(running, "task 2 never ran");
        QThread::msleep(500);  // its replay is hanging now
        r = runProcess("/usr/bin/scancel", {jobId + "_2"}, 30000);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject status = waitForTasks(fleetDir, 120);
        QCOMPARE(status.value("done").toInt(), 1);
        QCOMPARE(status.value("failed").toInt(), 2);
        const QJsonArray states = status.value("task_states").toArray();
        QVERIFY2(states.at(1)["detail"].toString().contains("exited 2"),
                 qPrintable(states.at(1)["detail"].toString()));
        QVERIFY2(states.at(2)["detail"].toString().contains("not in the queue"),
                 qPrintable(states.at(2)["detail"].toString()));
        r = runFaultline({"fleet", "status", fleetDir});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.out.contains("task 2: failed"));
        r = runFaultline({"merge", "--fleet", fleetDir, "--out", m_dir.filePath("failing.h5"), "--json"});
        QCOMPARE(r.exitCode, 1);
        const QJsonArray missing = json(r.out).value("fleet").toObject().value("missing_tasks").toArray();
        QCOMPARE(missing.size(), 2);
        QCOMPARE(missing.at(0)["task"].toInt(), 1);
        QVERIFY(missing.at(0)["reason"].toString().contains("exited 2"));
        QCOMPARE(missing.at(1)["task"].toInt(), 2);
        QVERIFY2(missing.at(1)["reason"].toString().contains("no exit code"),
                 qPrintable(missing.at(1)["reason"].toString()));
    }
};

QTEST_GUILESS_MAIN(TestFleetSlurm)
#include "test_fleet_slurm.moc"
