// Stopping a campaign: the first Ctrl-C or SIGTERM ends it within a second even while a run
// hangs (not at the run's timeout), the results say it was cancelled, and workers never outlive
// their orchestrator, also when it is killed with -9 (they would keep a GPU).
#include <signal.h>
#include <sys/types.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "ReplayTrace.h"
#include "support/TestSupport.h"

using faultline::test::makeReplayTrace;

namespace {

// The pids of processes whose parent is `parent` (from /proc/<pid>/stat).
QList<qint64> childrenOf(qint64 parent)
{
    QList<qint64> out;
    for (const QString& entry : QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        bool number = false;
        const qint64 pid = entry.toLongLong(&number);
        if (!number) continue;
        QFile stat("/proc/" + entry + "/stat");
        if (!stat.open(QIODevice::ReadOnly)) continue;
        const QByteArray text = stat.readAll();
        const qsizetype close = text.lastIndexOf(')');  // the command may hold spaces
        const QList<QByteArray> fields = text.mid(close + 2).split(' ');
        if (fields.size() > 1 && fields[1].toLongLong() == parent) out.push_back(pid);
    }
    return out;
}

bool alive(qint64 pid)
{
    QFile stat("/proc/" + QString::number(pid) + "/stat");
    if (!stat.open(QIODevice::ReadOnly)) return false;
    const QByteArray text = stat.readAll();
    const qsizetype close = text.lastIndexOf(')');
    return text.mid(close + 2, 1) != "Z";  // a zombie has ended
}

// Waits until `p` has a worker child (at most 20 s); its pids.
QList<qint64> waitForWorkers(const QProcess& p, int count)
{
    QElapsedTimer t;
    t.start();
    QList<qint64> workers;
    while (t.elapsed() < 20000) {
        workers = childrenOf(p.processId());
        if (workers.size() >= count) break;
        QThread::msleep(50);
    }
    return workers;
}

}  // namespace

class TestCliReplaySignals : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

    void start(QProcess& p, const QString& out)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        p.setProcessEnvironment(env);
        // The hang target hangs from its first run on; the run's timeout is a minute.
        p.start(QStringLiteral(FAULTLINE_EXE),
                {"replay", m_trace, "--targets", "sim:hang:after=0,cpu", "--ops", "0", "--reps", "3",
                 "--timeout", "60", "--out", out, "--json"});
        QVERIFY(p.waitForStarted());
    }

private slots:
    void initTestCase()
    {
        m_trace = m_dir.filePath("t.h5");
        QCOMPARE(makeReplayTrace(m_trace), QString());
    }

    void firstSignalStopsAHungCampaignWithinASecond_data()
    {
        QTest::addColumn<int>("signal");
        QTest::newRow("Ctrl-C") << SIGINT;
        QTest::newRow("SIGTERM") << SIGTERM;
    }
    void firstSignalStopsAHungCampaignWithinASecond()
    {
        QFETCH(int, signal);
        const QString out = m_dir.filePath(QStringLiteral("stopped-%1.h5").arg(signal));
        QProcess p;
        start(p, out);
        const QList<qint64> workers = waitForWorkers(p, 1);
        QVERIFY(!workers.isEmpty());
        QThread::msleep(500);  // the hang target's first run is in flight
        QElapsedTimer stopping;
        stopping.start();
        ::kill(pid_t(p.processId()), signal);
        QVERIFY(p.waitForFinished(30000));
        const qint64 ms = stopping.elapsed();
        qInfo("stopped %lld ms after the signal", ms);
        QVERIFY2(ms < 5000, qPrintable(QString::number(ms)));  // the run's timeout is 60 s
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 2);  // no complete verdict
        const QJsonObject report = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(report.value("cancelled").toBool(), true);
        for (qint64 w : workers) QVERIFY2(!alive(w), qPrintable(QString::number(w)));
        // The results file says the campaign was cancelled.
        QVERIFY(QFile::exists(out));
        QProcess inspect;
        inspect.start(QStringLiteral(FAULTLINE_EXE), {"inspect", out});
        QVERIFY(inspect.waitForFinished(30000));
        QVERIFY2(inspect.readAllStandardOutput().contains("cancelled = 1"), "no cancelled attribute");
    }

    // kill -9 gives the orchestrator no chance to clean up: its workers die with it
    // (the parent-death signal), and their scratch directory goes with the next campaign.
    void workersDieWithAKilledOrchestrator()
    {
        QProcess p;
        start(p, m_dir.filePath("killed.h5"));
        const QList<qint64> workers = waitForWorkers(p, 1);
        QVERIFY(!workers.isEmpty());
        ::kill(pid_t(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(10000));
        QElapsedTimer t;
        t.start();
        bool any = true;
        while (any && t.elapsed() < 5000) {
            any = false;
            for (qint64 w : workers) any = any || alive(w);
            if (any) QThread::msleep(50);
        }
        QVERIFY2(!any, "a worker outlived its orchestrator");
    }
};

QTEST_GUILESS_MAIN(TestCliReplaySignals)
#include "test_cli_replay_signals.moc"
