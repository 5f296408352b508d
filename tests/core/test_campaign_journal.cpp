// The campaign journal as evidence: one writer at a time (the second names the holder's pid), a
// torn last line cut before appending, a failed write (a full disk, here a file-size limit)
// undone so the journal stays whole, and headers that say which trace and campaign it belongs to.
#include <sys/resource.h>

#include <unistd.h>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <fstream>

#include "core/replay/CampaignJournal.h"

using namespace faultline;

namespace {

RunRecord run(const std::string& target, size_t op, uint32_t rep)
{
    RunRecord r;
    r.target = target;
    r.opIndex = op;
    r.op = "gemm";
    r.rep = rep;
    r.outcome = RunOutcome::Ok;
    r.digest = std::string(32, 'a');
    return r;
}

JournalHeader header()
{
    JournalHeader h;
    h.traceDigest = "0123456789abcdef0123456789abcdef";
    h.targets = {"cpu"};
    h.ops = {0, 1};
    h.reps = 3;
    h.seed = 1;
    return h;
}

QByteArray contents(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestCampaignJournal : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void headerAndRunsRoundTrip()
    {
        const std::string path = m_dir.filePath("a.jsonl").toStdString();
        {
            CampaignJournal j;
            QVERIFY(j.open(path, header()).ok());
            QVERIFY(j.append(run("cpu", 0, 0)).ok());
            QVERIFY(j.append(run("cpu", 1, 0)).ok());
        }
        std::vector<std::string> warnings;
        const JournalContents c = readCampaignJournalContents(path, warnings);
        QVERIFY(c.header);
        QCOMPARE(c.header->traceDigest, header().traceDigest);
        QCOMPARE(c.header->ops, header().ops);
        QCOMPARE(c.runs.size(), size_t(2));
        QVERIFY(warnings.empty());
        QVERIFY(checkJournalBelongs(path, c, header(), warnings).ok());

        JournalHeader other = header();
        other.traceDigest = "ffffffffffffffffffffffffffffffff";
        const Status refused = checkJournalBelongs(path, c, other, warnings);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.message().find("belongs to another trace") != std::string::npos,
                 refused.message().c_str());
        QVERIFY2(refused.message().find(path) != std::string::npos, refused.message().c_str());
        QCOMPARE(refused.code(), ErrorCode::Usage);
    }

    void secondWriterIsRefusedWithThePid()
    {
        const std::string path = m_dir.filePath("locked.jsonl").toStdString();
        {
            CampaignJournal first;
            QVERIFY(first.open(path, header()).ok());
            CampaignJournal second;
            const Status st = second.open(path, header());
            QVERIFY(!st.ok());
            QVERIFY2(st.message().find("in use by another campaign (pid " + std::to_string(::getpid()) +
                                       ")") != std::string::npos,
                     st.message().c_str());
        }
        // Once the first lets go, the journal can be opened again.
        CampaignJournal third;
        QVERIFY(third.open(path, header()).ok());
    }

    void tornTailIsCutBeforeAppending()
    {
        const std::string path = m_dir.filePath("torn.jsonl").toStdString();
        {
            CampaignJournal j;
            QVERIFY(j.open(path, header()).ok());
            QVERIFY(j.append(run("cpu", 0, 0)).ok());
        }
        {
            std::ofstream f(path, std::ios::app);
            f << "{\"target\":\"cpu\",\"op_index\":0,\"rep\":1,\"outc";  // killed mid-line
        }
        {
            CampaignJournal j;
            QVERIFY(j.open(path, header()).ok());
            QVERIFY(j.append(run("cpu", 0, 2)).ok());
        }
        std::vector<std::string> warnings;
        const JournalContents c = readCampaignJournalContents(path, warnings);
        QCOMPARE(c.runs.size(), size_t(2));
        QCOMPARE(c.runs[1].rep, uint32_t(2));  // the appended run was not glued to the torn line
        QVERIFY(warnings.empty());
        QVERIFY(contents(QString::fromStdString(path)).endsWith('\n'));
    }

    void failedWriteLeavesTheJournalWhole()
    {
        const std::string path = m_dir.filePath("full.jsonl").toStdString();
        CampaignJournal j;
        QVERIFY(j.open(path, header()).ok());
        QVERIFY(j.append(run("cpu", 0, 0)).ok());
        const QByteArray before = contents(QString::fromStdString(path));

        // A disk with 40 bytes left: the size limit makes the next write fail part-way (EFBIG).
        rlimit old{};
        QVERIFY(::getrlimit(RLIMIT_FSIZE, &old) == 0);
        auto* previous = std::signal(SIGXFSZ, SIG_IGN);
        rlimit limit = old;
        limit.rlim_cur = rlim_t(before.size() + 40);
        QVERIFY(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
        const Status st = j.append(run("cpu", 1, 0));
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, previous);

        QVERIFY(!st.ok());
        QCOMPARE(st.code(), ErrorCode::Io);
        QVERIFY2(st.message().find(path + ": cannot append to journal") == 0, st.message().c_str());
        QCOMPARE(contents(QString::fromStdString(path)), before);  // the partial line was undone
        // And the journal goes on once there is room.
        QVERIFY(j.append(run("cpu", 1, 0)).ok());
        std::vector<std::string> warnings;
        QCOMPARE(readCampaignJournalContents(path, warnings).runs.size(), size_t(2));
        QVERIFY(warnings.empty());
    }

    void repeatedAndUnknownLinesAreReportedNotCounted()
    {
        const std::string path = m_dir.filePath("dup.jsonl").toStdString();
        {
            CampaignJournal j;
            QVERIFY(j.open(path, header()).ok());
            QVERIFY(j.append(run("cpu", 0, 0)).ok());
            QVERIFY(j.append(run("cpu", 0, 0)).ok());
        }
        {
            std::ofstream f(path, std::ios::app);
            f << "{\"target\":\"cpu\",\"op_index\":1,\"rep\":0,\"outcome\":\"sideways\"}\n";
        }
        std::vector<std::string> warnings;
        const JournalContents c = readCampaignJournalContents(path, warnings);
        QCOMPARE(c.runs.size(), size_t(1));
        QCOMPARE(warnings.size(), size_t(2));
    }

    void traceDigestFollowsContent()
    {
        const QString a = m_dir.filePath("t1"), b = m_dir.filePath("t2");
        for (const QString& p : {a, b}) {
            QFile f(p);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray(100000, 'x'));
        }
        QCOMPARE(*traceContentDigest(a.toStdString()), *traceContentDigest(b.toStdString()));
        {
            QFile f(b);
            QVERIFY(f.open(QIODevice::ReadWrite));
            f.seek(77777);
            f.write("y");
        }
        QVERIFY(*traceContentDigest(a.toStdString()) != *traceContentDigest(b.toStdString()));
        const auto missing = traceContentDigest(m_dir.filePath("nope").toStdString());
        QVERIFY(!missing.ok());
        QCOMPARE(missing.code(), ErrorCode::Io);
    }
};

QTEST_GUILESS_MAIN(TestCampaignJournal)
#include "test_campaign_journal.moc"
