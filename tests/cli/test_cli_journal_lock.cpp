// A campaign's journal lock (RESULTS.h5.journal.jsonl.lock, held while the campaign writes) is
// gone when the command ends: `faultline demo` and `faultline replay --out` leave the journal
// and the results, never a stale lock; a resume finds none either.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "support/TestSupport.h"

using faultline::test::runProcess;

namespace {

// The lock files anywhere under `dir`.
QStringList locksUnder(const QString& dir)
{
    QStringList locks;
    QDirIterator it(dir, {"*.lock"}, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext()) locks << it.next();
    return locks;
}

}  // namespace

class TestCliJournalLock : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    static faultline::test::ProcessResult faultline(const QStringList& args)
    {
        return runProcess(QStringLiteral(FAULTLINE_EXE), args, 300000);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
    }

    void demoLeavesNoLock()
    {
        const QString out = m_dir.filePath("incident");
        auto demo = faultline({"demo", "--headless", "--out", out});
        QVERIFY2(demo.exitCode == 0, demo.err.constData());
        QVERIFY(QFile::exists(out + "/replay-results.h5.journal.jsonl"));
        QCOMPARE(locksUnder(out), QStringList());
    }

    void replayOutAndResumeLeaveNoLock()
    {
        const QString trace = m_dir.filePath("incident/incident-trace.h5");
        QVERIFY(QFile::exists(trace));
        const QString dir = m_dir.filePath("replay");
        QVERIFY(QDir().mkpath(dir));
        const QString out = dir + "/results.h5";
        auto replay =
            faultline({"replay", trace, "--targets", "cpu", "--ops", "gemm", "--reps", "1", "--out", out});
        QVERIFY2(replay.exitCode == 0, replay.err.constData());
        QVERIFY(QFile::exists(out));
        QVERIFY(QFile::exists(out + ".journal.jsonl"));
        QCOMPARE(locksUnder(dir), QStringList());
        // A resume of the finished campaign takes the lock and gives it back.
        QVERIFY(QFile::remove(out));
        auto resume = faultline(
            {"replay", trace, "--targets", "cpu", "--ops", "gemm", "--reps", "1", "--out", out, "--resume"});
        QVERIFY2(resume.exitCode == 0, resume.err.constData());
        QCOMPARE(locksUnder(dir), QStringList());
    }
};

QTEST_GUILESS_MAIN(TestCliJournalLock)
#include "test_cli_journal_lock.moc"
