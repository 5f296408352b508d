// `faultline ledger` through the real executable: adding the same logs twice adds nothing; several
// processes adding different and overlapping files at once lose and duplicate nothing; a writer
// killed (SIGKILL) inside its transaction leaves the ledger consistent and its file addable again;
// hostile and unknown files are exit 2 naming the file; `show` and `query` print their documents;
// `--ledger` on health and replay records what they produce, and nothing is written without it. On
// SQLite and on a PostgreSQL server the test starts (support/LedgerEngines.h).
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <memory>

#include "ReplayTrace.h"
#include "core/health/BootId.h"
#include "core/ledger/Ledger.h"
#include "core/ledger/LedgerLocation.h"
#include "support/LedgerEngines.h"
#include "support/TestSupport.h"

using faultline::test::ProcessResult;
using faultline::test::runProcess;
using faultline::test::sourcePath;

namespace {

ProcessResult run(const QStringList& args)
{
    qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
    qputenv("FAULTLINE_HOST", "testhost");
    return runProcess(FAULTLINE_EXE, args, 120000);
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes), qint64(bytes.size()));
}

// A dmesg log of `n` Xid 48 lines on GPU bus 3b, their stamps starting at `first`: logs written
// with overlapping stamps share those events.
QByteArray dmesgLog(int first, int n)
{
    QByteArray log =
        "[    0.000000] Linux version 6.1.0\n"
        "[    5.000000] NVRM: GPU at PCI:0000:3b:00: GPU-3b8e5a55-1f4c-2e9b-8a5e-0c7d1e2f3a4b\n"
        "[    5.000001] NVRM: GPU Board Serial Number: 1650122005678\n";
    for (int i = first; i < first + n; ++i)
        log += QStringLiteral(
                   "[%1.000000] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python3, An uncorrectable "
                   "double bit error (DBE) has been detected on GPU in the framebuffer at partition %2.\n")
                   .arg(100 + i, 5)
                   .arg(i)
                   .toUtf8();
    return log;
}

bool onSqlite()
{
    return faultline::test::ledgerEngine() == faultline::test::LedgerEngineKind::Sqlite;
}

// The engine of a ledger (a path or a URL), opened without migrating it.
std::unique_ptr<faultline::LedgerEngine> engineOf(const QString& ledger)
{
    auto location = faultline::parseLedgerLocation(ledger.toStdString());
    if (!location) qFatal("%s", location.message().c_str());
    auto engine = faultline::openLedgerEngine(*location);
    if (!engine) qFatal("%s", engine.message().c_str());
    return std::move(*engine);
}

int64_t scalar(const QString& ledger, const std::string& sql)
{
    auto engine = engineOf(ledger);
    auto rows = faultline::runSql(*engine, sql);
    if (!rows) qFatal("%s", rows.message().c_str());
    return faultline::sqlInt(rows->front().front());
}

// "ok" when the ledger is consistent: SQLite's integrity check; on PostgreSQL (whose server keeps
// its own consistency) no write lock is left behind.
std::string integrity(const QString& ledger)
{
    auto engine = engineOf(ledger);
    auto rows = faultline::runSql(*engine, onSqlite() ? "PRAGMA integrity_check"
                                                      : "SELECT CASE WHEN count(*) = 0 THEN 'ok' ELSE "
                                                        "'a write lock is held' END FROM pg_locks WHERE "
                                                        "locktype = 'advisory'");
    if (!rows || rows->empty()) return "no answer";
    return faultline::sqlText(rows->front().front());
}

QJsonObject jsonOf(const ProcessResult& r)
{
    return QJsonDocument::fromJson(r.out).object();
}

}  // namespace

class TestCliLedger : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;  // a new one for each engine's run

    // A new ledger for the engine of this run: a file, or a database on the test's server.
    QString ledgerPath(const QString& name) const
    {
        return QString::fromStdString(faultline::test::ledgerSpec(m_dir->path(), name));
    }

private slots:
    void initTestCase() { m_dir = std::make_unique<QTemporaryDir>(); }
    void init() { FL_LEDGER_ENGINE_INIT(); }

    void sameLogsTwiceAddNothing()
    {
        const QString ledger = ledgerPath("twice");
        const QStringList files = {sourcePath("tests/fixtures/health/journal-k.json"),
                                   sourcePath("tests/fixtures/health/dmesg-stamps.log"),
                                   sourcePath("tests/fixtures/health/nvidia-bug-report.log.gz")};
        ProcessResult first = run(QStringList{"ledger", "add", "--ledger", ledger, "--json"} + files);
        QVERIFY2(first.exitCode == 0, first.err.constData());
        const QJsonObject total = jsonOf(first)["total"].toObject();
        QVERIFY(total["events"].toInt() > 0);
        QCOMPARE(jsonOf(first)["files"].toArray().size(), 3);
        QCOMPARE(jsonOf(first)["files"].toArray()[0].toObject()["kind"].toString(), QString("log"));
        const int64_t events = scalar(ledger, "SELECT count(*) FROM xid_events");
        QCOMPARE(events, int64_t(total["events"].toInt()));

        ProcessResult second = run(QStringList{"ledger", "add", "--ledger", ledger, "--json"} + files);
        QVERIFY2(second.exitCode == 0, second.err.constData());
        const QJsonObject again = jsonOf(second)["total"].toObject();
        for (const char* k : {"identities", "snapshots", "events", "boots", "campaigns", "targets"})
            QCOMPARE(again[k].toInt(), 0);
        QVERIFY(again["repeated"].toInt() > 0);
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM xid_events"), events);
    }

    void concurrentWritersLoseAndDuplicateNothing()
    {
        // Six processes at once; logs 0-2 overlap (events 0..59, 40..99, 80..139), 3-5 are copies
        // of 0-2 under other names: 140 distinct events in all.
        const QString ledger = ledgerPath("concurrent");
        QStringList logs;
        for (int i = 0; i < 3; ++i) {
            const QByteArray log = dmesgLog(i * 40, 60);
            for (int copy = 0; copy < 2; ++copy) {
                const QString path = m_dir->path() + QStringLiteral("/node-%1-%2.log").arg(i).arg(copy);
                writeFile(path, log);
                logs << path;
            }
        }
        qputenv("FAULTLINE_HOST", "testhost");
        std::vector<std::unique_ptr<QProcess>> procs;
        for (int p = 0; p < 6; ++p) {
            auto proc = std::make_unique<QProcess>();
            // Each process adds two files: its own and the next one (more overlap).
            proc->start(FAULTLINE_EXE, {"ledger", "add", "--ledger", ledger, logs[p], logs[(p + 1) % 6]});
            procs.push_back(std::move(proc));
        }
        for (auto& p : procs) {
            QVERIFY(p->waitForFinished(120000));
            QVERIFY2(p->exitCode() == 0, p->readAllStandardError().constData());
        }
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM xid_events"), int64_t(140));
        QCOMPARE(scalar(ledger, "SELECT count(DISTINCT dedup_key) FROM xid_events"), int64_t(140));
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM gpu_identities"), int64_t(1));
        QCOMPARE(integrity(ledger), std::string("ok"));
    }

    void writerKilledMidTransactionLeavesItConsistent()
    {
        const QString ledger = ledgerPath("killed");
        const QString before = m_dir->path() + "/before.log", during = m_dir->path() + "/during.log";
        writeFile(before, dmesgLog(0, 10));
        writeFile(during, dmesgLog(1000, 25));
        QCOMPARE(run({"ledger", "add", "--ledger", ledger, before}).exitCode, 0);
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM xid_events"), int64_t(10));

        QProcess writer;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("FAULTLINE_LEDGER_TEST_SLEEP_MS", "60000");
        writer.setProcessEnvironment(env);
        writer.start(FAULTLINE_EXE, {"ledger", "add", "--ledger", ledger, during});
        QVERIFY(writer.waitForStarted());
        // Inside its transaction: it holds the write lock, so another writer cannot take it now.
        bool locked = false;
        for (int i = 0; i < 100 && !locked; ++i) {
            QThread::msleep(100);
            auto engine = engineOf(ledger);
            QVERIFY(engine->exec(onSqlite() ? "PRAGMA busy_timeout = 0" : "SET lock_timeout = 100").ok());
            if (!engine->begin().ok())
                locked = true;
            else
                QVERIFY(engine->rollback().ok());
        }
        QVERIFY2(locked, "the writer never held the write lock");
        QCOMPARE(::kill(static_cast<pid_t>(writer.processId()), SIGKILL), 0);
        QVERIFY(writer.waitForFinished(10000));
        QCOMPARE(writer.exitStatus(), QProcess::CrashExit);

        QCOMPARE(integrity(ledger), std::string("ok"));
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM xid_events"), int64_t(10));
        // The killed writer's file is added whole by the next one.
        ProcessResult again = run({"ledger", "add", "--ledger", ledger, during});
        QVERIFY2(again.exitCode == 0, again.err.constData());
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM xid_events"), int64_t(35));
    }

    void badFilesAreExit2NamingTheFile_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("name");
        QTest::newRow("prose") << QByteArray("dear diary,\nthe GPU was fine today\n") << "notes.txt";
        QTest::newRow("empty") << QByteArray() << "empty.log";
        QTest::newRow("binary") << QByteArray("\x00\x01\x02\xff\xfe garbage \x7f\x00", 17) << "blob.bin";
        QTest::newRow("other JSON") << QByteArray("{\"hello\": \"world\"}") << "other.json";
        QTest::newRow("broken JSON") << QByteArray("{\"format\": \"faultline-health\", ") << "broken.json";
        QTest::newRow("newer health")
            << QByteArray("{\"format\": \"faultline-health\", \"version\": 9, \"gpus\": []}")
            << "health-v9.json";
        QTest::newRow("unknown verdict")
            << QByteArray("{\"targets\": [{\"target\": \"cpu\", \"verdict\": \"meh\"}], \"ops\": []}")
            << "campaign.json";
        QTest::newRow("fake HDF5") << QByteArray("\x89HDF\r\n\x1a\nnot really", 18) << "fake.h5";
        QTest::newRow("fake tar") << (QByteArray(257, 'a') + QByteArray("ustar") + QByteArray(250, '\0'))
                                  << "fake.tar";
    }
    void badFilesAreExit2NamingTheFile()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, name);
        const QString ledger = ledgerPath("bad-" + name);
        const QString path = m_dir->path() + "/" + name;
        writeFile(path, content);
        ProcessResult r = run({"ledger", "add", "--ledger", ledger, path});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(!r.crashed);
        QVERIFY2(r.err.contains(path.toUtf8()), r.err.constData());
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM campaigns") +
                     scalar(ledger, "SELECT count(*) FROM xid_events"),
                 int64_t(0));
    }

    void specialPathsAreExit2()
    {
        const QString ledger = ledgerPath("special");
        const QString fifo = m_dir->path() + "/fifo";
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        for (const QString& path : {fifo, m_dir->path() + "/missing.log", m_dir->path()}) {
            ProcessResult r = run({"ledger", "add", "--ledger", ledger, path});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(path.toUtf8()), r.err.constData());
        }
        // A ledger that is not one, and a PostgreSQL server that is not there (named without its
        // password).
        const QString notLedger = m_dir->path() + "/not-a-ledger.sqlite";
        writeFile(notLedger, QByteArray(8192, 'z'));
        ProcessResult r = run({"ledger", "query", "--ledger", notLedger});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains(notLedger.toUtf8()));
        r = run({"ledger", "query", "--ledger",
                 "postgresql://fleet:s3cret@/ledger?host=/nonexistent-faultline-dir"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("postgresql://fleet:***@/ledger?host=/nonexistent-faultline-dir"),
                 r.err.constData());
        QVERIFY(!r.err.contains("s3cret"));
        r = run({"ledger", "query", "--ledger", ledger, "--verdict", "fine"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("--verdict fine"));
        // Reading a ledger that does not exist says so and creates nothing.
        const QString none = m_dir->path() + "/never-written.sqlite";
        for (const char* command : {"show", "query"}) {
            QStringList args{"ledger", command};
            if (QByteArray(command) == "show") args << "GPU-0";
            r = run(args + QStringList{"--ledger", none});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains((none + ": no ledger here yet").toUtf8()), r.err.constData());
            QVERIFY(!QFile::exists(none));
        }
        if (!onSqlite()) {
            // A database without the ledger's tables, likewise.
            const QString empty = ledgerPath("never-written");
            for (const char* command : {"show", "query"}) {
                QStringList args{"ledger", command};
                if (QByteArray(command) == "show") args << "GPU-0";
                r = run(args + QStringList{"--ledger", empty});
                QCOMPARE(r.exitCode, 2);
                QVERIFY2(r.err.contains(": no ledger here yet"), r.err.constData());
            }
            QCOMPARE(scalar(empty, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"), int64_t(0));
        }
    }

    void showAndQuery()
    {
        const QString ledger = ledgerPath("show");
        const QString log = m_dir->path() + "/show.log";
        writeFile(log, dmesgLog(0, 3));
        QCOMPARE(run({"ledger", "add", "--ledger", ledger, log}).exitCode, 0);
        ProcessResult show = run({"ledger", "show", "1650122005678", "--ledger", ledger, "--json"});
        QVERIFY2(show.exitCode == 0, show.err.constData());
        const QJsonObject doc = jsonOf(show);
        QCOMPARE(doc["format"].toString(), QString("faultline-ledger-timeline"));
        int xids = 0;
        for (const auto& e : doc["timeline"].toArray()) xids += e.toObject()["kind"].toString() == "xid";
        QCOMPARE(xids, 3);
        QCOMPARE(doc["locations"].toArray()[0].toObject()["host"].toString(), QString("testhost"));
        QCOMPARE(doc["trends"].toObject()["window"].toString(), QString("month"));
        QVERIFY(doc["trends"].toObject()["failure_rate"].isArray());
        ProcessResult weekly =
            run({"ledger", "show", "1650122005678", "--window", "week", "--ledger", ledger, "--json"});
        QVERIFY2(weekly.exitCode == 0, weekly.err.constData());
        QCOMPARE(jsonOf(weekly)["trends"].toObject()["window"].toString(), QString("week"));
        ProcessResult yearly =
            run({"ledger", "show", "1650122005678", "--window", "year", "--ledger", ledger});
        QCOMPARE(yearly.exitCode, 2);
        QVERIFY2(yearly.err.contains("--window"), yearly.err.constData());
        ProcessResult text =
            run({"ledger", "show", "GPU-3B8E5A55-1F4C-2E9B-8A5E-0C7D1E2F3A4B", "--ledger", ledger});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("Xid 48"));
        ProcessResult unknown = run({"ledger", "show", "NO-SUCH-GPU", "--ledger", ledger});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY(unknown.err.contains("NO-SUCH-GPU"));
        ProcessResult q =
            run({"ledger", "query", "--xid", "48", "--host", "testhost", "--ledger", ledger, "--json"});
        QVERIFY2(q.exitCode == 0, q.err.constData());
        QCOMPARE(jsonOf(q)["count"].toInt(), 3);
        q = run({"ledger", "query", "--xid", "79", "--ledger", ledger, "--json"});
        QCOMPARE(jsonOf(q)["count"].toInt(), 0);
    }

    void campaignsFleetMergesAndBundles()
    {
        // Two simulated nodes' campaigns (results files), merged with --ledger, then an evidence
        // bundle of the merged campaign recorded by evidence --ledger and added again by hand.
        const QString ledger = ledgerPath("fleet");
        const QString trace = m_dir->path() + "/fleet-trace.h5";
        QVERIFY(faultline::test::makeReplayTrace(trace).isEmpty());
        QStringList results;
        for (const char* host : {"node-a", "node-b"}) {
            const QString out = m_dir->path() + QStringLiteral("/fleet-%1.h5").arg(host);
            qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
            qputenv("FAULTLINE_HOST", host);
            const QString targets =
                QByteArray(host) == "node-b" ? "cpu,sim:flip:op=gemm,rate=1" : "cpu,sim:healthy";
            ProcessResult r = runProcess(FAULTLINE_EXE,
                                         {"replay", trace, "--targets", targets, "--ops", "gemm", "--reps",
                                          "2", "--quiet", "--out", out},
                                         120000);
            QVERIFY2(r.exitCode == 0 || r.exitCode == 1, r.err.constData());
            results << out;
        }
        ProcessResult added = run(QStringList{"ledger", "add", "--ledger", ledger, "--json"} + results);
        QVERIFY2(added.exitCode == 0, added.err.constData());
        QCOMPARE(jsonOf(added)["files"].toArray()[0].toObject()["kind"].toString(), QString("campaign"));
        QCOMPARE(jsonOf(added)["total"].toObject()["campaigns"].toInt(), 2);
        QCOMPARE(jsonOf(added)["total"].toObject()["targets"].toInt(), 4);
        ProcessResult again = run(QStringList{"ledger", "add", "--ledger", ledger, "--json"} + results);
        QCOMPARE(jsonOf(again)["total"].toObject()["campaigns"].toInt(), 0);
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM campaigns"), int64_t(2));
        // The node's host is the campaign's own, not the --host of ledger add.
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM campaigns WHERE host = 'node-b'"), int64_t(1));
        QCOMPARE(scalar(ledger,
                        "SELECT count(*) FROM campaign_targets WHERE verdict = 'persistent' OR verdict = "
                        "'device-specific'"),
                 int64_t(1));

        const QString fleet = m_dir->path() + "/fleet.h5";
        ProcessResult merge =
            run(QStringList{"merge"} + results + QStringList{"--out", fleet, "--ledger=" + ledger});
        QVERIFY2(merge.exitCode == 0 || merge.exitCode == 1, merge.err.constData());
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM fleet_merges"), int64_t(1));
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM campaigns WHERE fleet = 1"), int64_t(1));

        const QString bundle = m_dir->path() + "/fleet-case";
        ProcessResult evidence = run({"evidence", "--out", bundle, "--campaign", fleet, "--trace", trace,
                                      "--suspect", "0000:2a:00.0", "--ledger", ledger});
        QVERIFY2(evidence.exitCode == 0, evidence.err.constData());
        QCOMPARE(scalar(ledger, "SELECT count(*) FROM evidence_bundles WHERE intact = 1"), int64_t(1));
        for (const QString& b : {bundle, bundle + ".tar"}) {
            ProcessResult r = run({"ledger", "add", "--ledger", ledger, "--json", b});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            QCOMPARE(jsonOf(r)["files"].toArray()[0].toObject()["kind"].toString(), QString("bundle"));
            QCOMPARE(jsonOf(r)["total"].toObject()["bundles"].toInt(), 0);
            QCOMPARE(jsonOf(r)["total"].toObject()["repeated"].toInt(), 1);
        }
    }

    void healthAndReplayRecordWithLedgerOnly()
    {
        QTemporaryDir data;
        qputenv("XDG_DATA_HOME", data.path().toUtf8());
        const QString defaultLedger = data.path() + "/faultline/ledger.sqlite";
        const QString log = sourcePath("tests/fixtures/health/dmesg-stamps.log");
        // Without --ledger nothing is written.
        ProcessResult plain = run({"health", "--logs", log, "--json"});
        QCOMPARE(plain.exitCode, 1);
        // The report names the boot it was taken in (this machine's, as journald writes it).
        QCOMPARE(jsonOf(plain)["boot_id"].toString().toStdString(), faultline::readBootId());
        QVERIFY(!QFile::exists(defaultLedger));
        // --ledger alone: the default ledger.
        ProcessResult recorded = run({"health", "--logs", log, "--ledger"});
        QCOMPARE(recorded.exitCode, 1);
        QVERIFY2(QFile::exists(defaultLedger), recorded.err.constData());
        QVERIFY(scalar(defaultLedger, "SELECT count(*) FROM xid_events") > 0);

        const QString trace = m_dir->path() + "/trace.h5";
        QVERIFY(faultline::test::makeReplayTrace(trace).isEmpty());
        const QString explicitLedger = ledgerPath("replay");
        ProcessResult replay = run({"replay", trace, "--targets", "cpu", "--reps", "2", "--quiet", "--ledger",
                                    onSqlite() ? "sqlite://" + explicitLedger : explicitLedger});
        QVERIFY2(replay.exitCode == 0, replay.err.constData());
        QCOMPARE(scalar(explicitLedger, "SELECT count(*) FROM campaigns"), int64_t(1));
        QCOMPARE(scalar(explicitLedger, "SELECT count(*) FROM campaign_targets WHERE verdict = 'healthy'"),
                 int64_t(1));
        QVERIFY(scalar(explicitLedger, "SELECT count(*) FROM campaign_op_rates") > 0);
        qunsetenv("XDG_DATA_HOME");
    }
};

FL_LEDGER_TEST_MAIN(TestCliLedger)
#include "test_cli_ledger.moc"
