// Hostile paths and values around the replay, collective and sweep commands (issue #28,
// docs/threat-model.md): a link planted where a temporary or a lock used to be never redirects a
// write; a FIFO at the journal does not block --resume; non-finite timeouts and oversized groups
// are refused; --out of sweep and collective never overwrites; a campaign killed with -9 leaves
// no scratch directory; a collective's memory does not grow with --reps.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "ReplayTrace.h"
#include "support/CollectiveReplayTrace.h"
#include "support/TestSupport.h"

using faultline::test::runProcess;

namespace {

QByteArray contents(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

faultline::test::ProcessResult faultlineRun(const QStringList& args, int timeoutMs = 120000)
{
    return runProcess(QStringLiteral(FAULTLINE_EXE), args, timeoutMs);
}

QString lastErrorLine(const QByteArray& err)
{
    const QList<QByteArray> lines = err.trimmed().split('\n');
    return lines.isEmpty() ? QString() : QString::fromUtf8(lines.last());
}

}  // namespace

class TestCliHostileOutputs : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace, m_collectiveTrace;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        m_trace = m_dir.filePath("trace.h5");
        QCOMPARE(faultline::test::makeReplayTrace(m_trace), QString());
        m_collectiveTrace = m_dir.filePath("collectives.h5");
        QCOMPARE(
            QString::fromStdString(faultline::test::writeCollectiveTrace(m_collectiveTrace.toStdString(), 4)),
            QString());
    }

    // A link planted at OUT.h5.tmp, the name a results file used to be written through, points
    // at the trace: the replay writes its results and the trace is untouched.
    void linkAtTheOldTemporaryNameIsNeverWritten()
    {
        const QString out = m_dir.filePath("planted.h5");
        const QByteArray before = contents(m_trace);
        QVERIFY(QFile::link(m_trace, out + ".tmp"));
        auto r =
            faultlineRun({"replay", m_trace, "--targets", "cpu", "--ops", "0", "--reps", "1", "--out", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(contents(m_trace), before);
        QVERIFY(QFileInfo(out + ".tmp").isSymLink());
        QVERIFY(QFile::exists(out));
        QVERIFY(faultline::test::tempFilesBeside(out).size() == 1);  // only the planted link
    }

    // The journal's lock file, planted as a link to a file of the user's, is refused and the
    // file keeps its bytes (it used to be truncated to the campaign's pid).
    void linkAtTheJournalLockIsRefused()
    {
        const QString out = m_dir.filePath("locked.h5");
        const QString victim = m_dir.filePath("victim.txt");
        QVERIFY(writeFile(victim, "precious\n"));
        QVERIFY(QFile::link(victim, out + ".journal.jsonl.lock"));
        auto r =
            faultlineRun({"replay", m_trace, "--targets", "cpu", "--ops", "0", "--reps", "1", "--out", out});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(lastErrorLine(r.err).contains(".lock"), r.err.constData());
        QCOMPARE(contents(victim), QByteArray("precious\n"));
    }

    // The journal itself as a link: refused, the target untouched.
    void linkAtTheJournalIsRefused()
    {
        const QString out = m_dir.filePath("journal-link.h5");
        const QString victim = m_dir.filePath("victim2.txt");
        QVERIFY(writeFile(victim, "keep me\n"));
        QVERIFY(QFile::link(victim, out + ".journal.jsonl"));
        auto r = faultlineRun(
            {"replay", m_trace, "--targets", "cpu", "--ops", "0", "--reps", "1", "--out", out, "--resume"});
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(contents(victim), QByteArray("keep me\n"));
    }

    // A FIFO at the journal's path: --resume says so at once instead of waiting for a writer.
    void fifoJournalDoesNotBlockResume()
    {
        const QString out = m_dir.filePath("fifo.h5");
        const QString journal = out + ".journal.jsonl";
        QCOMPARE(::mkfifo(QFile::encodeName(journal).constData(), 0600), 0);
        QElapsedTimer t;
        t.start();
        auto r = faultlineRun(
            {"replay", m_trace, "--targets", "cpu", "--ops", "0", "--reps", "1", "--out", out, "--resume"},
            20000);
        QVERIFY2(!r.timedOut, "replay --resume blocked on a FIFO journal");
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(lastErrorLine(r.err).contains(journal) && lastErrorLine(r.err).contains("regular file"),
                 r.err.constData());
        QVERIFY(t.elapsed() < 15000);
    }

    void nonFiniteTimeoutsAreRefused_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("value");
        for (const char* v : {"nan", "inf", "-1", "0", "1e300", "5x"}) {
            QTest::newRow(qPrintable(QStringLiteral("replay %1").arg(v))) << "replay" << v;
            QTest::newRow(qPrintable(QStringLiteral("collective %1").arg(v))) << "collective" << v;
        }
    }
    void nonFiniteTimeoutsAreRefused()
    {
        QFETCH(QString, command);
        QFETCH(QString, value);
        const QStringList args =
            command == "replay"
                ? QStringList{"replay", m_trace, "--targets", "cpu", "--ops", "0", "--timeout", value}
                : QStringList{"collective",   m_collectiveTrace,
                              "--targets",    "sim:healthy,sim:healthy,sim:healthy,sim:healthy",
                              "--in-process", "--timeout",
                              value};
        auto r = faultlineRun(args, 30000);
        QVERIFY2(r.exitCode == 2, r.out.constData());
        QVERIFY2(r.err.contains("--timeout"), r.err.constData());
    }

    // Sweep and collective results are never overwritten (a second run would lose the first's
    // evidence), and the check comes before the work.
    void existingOutIsNotOverwritten_data()
    {
        QTest::addColumn<QString>("command");
        QTest::newRow("sweep") << "sweep";
        QTest::newRow("collective") << "collective";
    }
    void existingOutIsNotOverwritten()
    {
        QFETCH(QString, command);
        const QString out = m_dir.filePath(command + "-existing.h5");
        QVERIFY(writeFile(out, "earlier results\n"));
        const QString four = "sim:healthy,sim:healthy,sim:healthy,sim:healthy";
        const QStringList args =
            command == "sweep" ? QStringList{"sweep", "--targets", four, "--bytes", "4096", "--out", out}
                               : QStringList{"collective",   m_collectiveTrace, "--targets", four,
                                             "--in-process", "--out",           out};
        auto r = faultlineRun(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(lastErrorLine(r.err).contains(out) && lastErrorLine(r.err).contains("exists already"),
                 r.err.constData());
        QCOMPARE(contents(out), QByteArray("earlier results\n"));
        // --out naming the trace is refused the same way.
        if (command == "collective") {
            const QByteArray trace = contents(m_collectiveTrace);
            auto same = faultlineRun({"collective", m_collectiveTrace, "--targets", four, "--in-process",
                                      "--out", m_collectiveTrace});
            QCOMPARE(same.exitCode, 2);
            QCOMPARE(contents(m_collectiveTrace), trace);
        }
    }

    // A group larger than a results file can hold, and payloads beyond the sweep's memory bound.
    void oversizedGroupsAndPayloadsAreRefused()
    {
        QStringList many;
        for (int i = 0; i < 1025; ++i) many << "sim:healthy";
        auto sweep = faultlineRun({"sweep", "--targets", many.join(','), "--bytes", "4"});
        QCOMPARE(sweep.exitCode, 2);
        QVERIFY2(sweep.err.contains("1024"), sweep.err.constData());
        auto collective =
            faultlineRun({"collective", m_collectiveTrace, "--targets", many.join(','), "--in-process"});
        QCOMPARE(collective.exitCode, 2);
        QVERIFY2(collective.err.contains("1024"), collective.err.constData());
        auto big = faultlineRun({"sweep", "--targets", "sim:healthy,sim:healthy", "--bytes", "1073741824"});
        QCOMPARE(big.exitCode, 2);
        QVERIFY2(big.err.contains("--bytes"), big.err.constData());
    }

    // A sweep's memory is about three payloads (it held five copies and more).
    void sweepMemoryIsAboutThreePayloads()
    {
        QProcess p;
        p.setProgram(QStringLiteral(FAULTLINE_EXE));
        p.setArguments({"sweep", "--targets", "sim:healthy,sim:healthy", "--pattern", "allreduce", "--bytes",
                        QString::number(64 << 20), "--reps", "1", "--json"});
        p.start();
        QVERIFY(p.waitForFinished(300000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        struct rusage usage {};
        QCOMPARE(::getrusage(RUSAGE_CHILDREN, &usage), 0);
        const double peakMiB = double(usage.ru_maxrss) / 1024.0;  // the largest child so far
        qInfo("peak RSS of a 64 MiB allreduce sweep: %.0f MiB", peakMiB);
        QVERIFY2(peakMiB < 64 * 3.6 + 64, qPrintable(QString::number(peakMiB)));
    }

    // Runs beyond the listed ones are counted, not kept: the JSON lists at most 10,000 runs
    // plus the notable ones, and every run counts.
    void collectiveRunsAreCountedNotKept()
    {
        auto r = faultlineRun(
            {"collective", m_collectiveTrace, "--targets", "sim:healthy,sim:healthy,sim:healthy,sim:healthy",
             "--in-process", "--ops", "0", "--reps", "6000", "--json"},
            300000);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        const qint64 total = o.value("runs_total").toInteger();
        QCOMPARE(total, 6000 * o.value("rings").toArray().size());
        QCOMPARE(o.value("runs").toArray().size(), 10000);
        QCOMPARE(o.value("runs_not_listed").toInteger(), total - 10000);
        QCOMPARE(o.value("run_status_counts").toObject().value("ok").toInteger(), total);
    }

    // A campaign killed with -9 leaves no scratch directory behind (its guardian removes it).
    void killedCampaignLeavesNoScratchDirectory()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        QProcess p;
        p.setProgram(QStringLiteral(FAULTLINE_EXE));
        p.setArguments({"replay", m_trace, "--targets", "sim:hang:after=0,cpu", "--ops", "0", "--reps", "3",
                        "--timeout", "60"});
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("TMPDIR", tmp.path());
        env.insert("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        p.setProcessEnvironment(env);
        p.start();
        QVERIFY(p.waitForStarted());
        const QDir dir(tmp.path());
        QTRY_VERIFY_WITH_TIMEOUT(!dir.entryList({"faultline-replay-*"}, QDir::Dirs).isEmpty(), 20000);
        QThread::msleep(300);
        ::kill(pid_t(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(10000));
        QTRY_VERIFY_WITH_TIMEOUT(dir.entryList({"faultline-replay-*"}, QDir::Dirs).isEmpty(), 10000);
    }
};

QTEST_GUILESS_MAIN(TestCliHostileOutputs)
#include "test_cli_hostile_outputs.moc"
