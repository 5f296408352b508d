// The ledger's store (core/ledger), on SQLite and on a PostgreSQL server the test starts
// (support/LedgerEngines.h): the same facts added twice add nothing (health documents, kernel logs,
// campaigns), the schema's migrations bring an older ledger up to date and refuse a newer one, and a
// ledger's location is parsed as --ledger documents it.
#include <QTemporaryDir>
#include <QtTest>

#include "core/ledger/LedgerFiles.h"
#include "core/ledger/LedgerLocation.h"
#include "core/ledger/LedgerSchema.h"
#include "core/ledger/PostgresEngine.h"
#include "core/ledger/SqliteEngine.h"
#include "support/LedgerEngines.h"
#include "support/TestSupport.h"
#include "test_ledger_support.h"

using namespace faultline;

namespace {

int64_t count(Ledger& ledger, const std::string& table)
{
    auto rows = runSql(ledger.engine(), "SELECT count(*) FROM " + table);
    if (!rows) qFatal("%s", rows.message().c_str());
    return sqlInt(rows->front().front());
}

bool onSqlite()
{
    return test::ledgerEngine() == test::LedgerEngineKind::Sqlite;
}

}  // namespace

class TestLedgerStore : public QObject {
    Q_OBJECT

private slots:
    void init() { FL_LEDGER_ENGINE_INIT(); }

    void parametersAreMappedOutsideQuotes()
    {
        QCOMPARE(sqliteParameters("SELECT $1, '$2', \"$3\", $10"),
                 std::string("SELECT ?1, '$2', \"$3\", ?10"));
    }

    void healthDocumentTwiceAddsNothing()
    {
        QTemporaryDir dir;
        auto ledger = Ledger::open(test::ledgerSpec(dir.path(), "l"));
        QVERIFY2(ledger.ok(), ledger.ok() ? "" : ledger.message().c_str());
        auto doc = test::healthDocument("1650122005678", "GPU-AAAA", "Tue Dec  1 10:00:00 2026", true, 79,
                                        "2026-12-01T09:00:00Z");
        doc["gpus"][0]["snapshots"][0]["boot_id"] = "6c1b1d2e3f404142434445464748494a";
        auto first = ledger->addHealth(doc, {"node1", "health.json"});
        QVERIFY(first.ok());
        QCOMPARE(first->snapshots, uint64_t(1));
        QCOMPARE(first->events, uint64_t(1));
        QVERIFY(first->identities >= 1);
        auto second = ledger->addHealth(doc, {"node1", "health.json"});
        QVERIFY(second.ok());
        QCOMPARE(second->total(), uint64_t(0));
        QVERIFY(second->repeated >= 2);
        QCOMPARE(count(*ledger, "health_snapshots"), int64_t(1));
        QCOMPARE(count(*ledger, "xid_events"), int64_t(1));
        // The flag was derived from the counters; the UUID is stored in lower case.
        auto rows = runSql(ledger->engine(), "SELECT flags, uuid, at, boot_id FROM health_snapshots");
        QVERIFY(rows.ok());
        QCOMPARE(sqlText((*rows)[0][0]), std::string("row_remap_pending"));
        QCOMPARE(sqlText((*rows)[0][1]), std::string("gpu-aaaa"));
        QCOMPARE(sqlText((*rows)[0][2]), std::string("2026-12-01T10:00:00"));
        QCOMPARE(sqlText((*rows)[0][3]),
                 std::string("6c1b1d2e3f404142434445464748494a"));  // the boot it was taken in
        // The same document seen on another host is another fact.
        auto other = ledger->addHealth(doc, {"node2", "health.json"});
        QVERIFY(other.ok());
        QCOMPARE(other->events, uint64_t(1));
    }

    void kernelLogTwiceAddsNothing_data()
    {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("boots");
        QTest::newRow("journal json") << "journal-k.json" << -1 << 2;
        QTest::newRow("dmesg stamps") << "dmesg-stamps.log" << -1 << 0;
        QTest::newRow("bug report gz") << "nvidia-bug-report.log.gz" << -1 << -1;
    }
    void kernelLogTwiceAddsNothing()
    {
        QFETCH(QString, fixture);
        QFETCH(int, events);
        QFETCH(int, boots);
        QTemporaryDir dir;
        auto ledger = Ledger::open(test::ledgerSpec(dir.path(), "l"));
        QVERIFY(ledger.ok());
        const std::string path = test::sourcePath("tests/fixtures/health/" + fixture).toStdString();
        auto first = addLedgerFile(*ledger, path, "node1");
        QVERIFY2(first.ok(), first.ok() ? "" : first.message().c_str());
        QCOMPARE(first->kind, std::string("log"));
        QVERIFY(first->added.events > 0);
        if (events >= 0) QCOMPARE(first->added.events, uint64_t(events));
        if (boots >= 0) QCOMPARE(first->added.boots, uint64_t(boots));
        const int64_t rows = count(*ledger, "xid_events");
        auto second = addLedgerFile(*ledger, path, "node1");
        QVERIFY(second.ok());
        QCOMPARE(second->added.total(), uint64_t(0));
        QCOMPARE(count(*ledger, "xid_events"), rows);
        QCOMPARE(second->added.repeated, first->added.total());
    }

    void eventBatchesAddEachFactOnce()
    {
        // 600 events in one add (PostgreSQL sends them in pipelined slices of 256): 100 of them
        // repeat earlier ones of the same batch, and a second add of the first 300 adds nothing.
        QTemporaryDir dir;
        auto ledger = Ledger::open(test::ledgerSpec(dir.path(), "l"));
        QVERIFY2(ledger.ok(), ledger.ok() ? "" : ledger.message().c_str());
        std::vector<LedgerEventRow> events;
        for (int i = 0; i < 600; ++i) {
            LedgerEventRow e;
            e.serial = "S" + std::to_string(i % 7);
            e.host = "node1";
            e.busId = "0000:3b:00.0";
            e.code = 48;
            e.timeText = "2026-12-01T10:00:00Z";
            e.at = e.timeText;
            e.uptimeSeconds = i < 500 ? i : i - 500;  // the last 100 repeat the first 100
            e.message = "event " + std::to_string(i < 500 ? i : i - 500);
            events.push_back(e);
        }
        auto added = ledger->addEvents(events);
        QVERIFY2(added.ok(), added.ok() ? "" : added.message().c_str());
        QCOMPARE(added->events, uint64_t(500));
        QCOMPARE(added->repeated, uint64_t(100));
        auto again = ledger->addEvents({events.begin(), events.begin() + 300});
        QVERIFY(again.ok());
        QCOMPARE(again->events, uint64_t(0));
        QCOMPARE(again->repeated, uint64_t(300));
        QCOMPARE(count(*ledger, "xid_events"), int64_t(500));
        if (onSqlite()) return;
        // A value PostgreSQL cannot store, in the middle of a slice: an error naming the ledger,
        // and nothing of the add is kept.
        std::vector<LedgerEventRow> bad(events.begin(), events.begin() + 40);
        for (LedgerEventRow& e : bad) e.host = "node2";
        bad[20].message = std::string("nul\0byte", 8);
        auto refused = ledger->addEvents(bad);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.message().find(ledger->location()) != std::string::npos, refused.message().c_str());
        QCOMPARE(count(*ledger, "xid_events"), int64_t(500));
        // The connection is usable after it.
        for (LedgerEventRow& e : bad) e.message = "fine";
        QVERIFY(ledger->addEvents(bad).ok());
    }

    void nvidiaSmiTwiceAddsNothing()
    {
        QTemporaryDir dir;
        auto ledger = Ledger::open(test::ledgerSpec(dir.path(), "l"));
        QVERIFY(ledger.ok());
        const std::string path = test::sourcePath("tests/fixtures/health/nvidia-smi-v13.xml").toStdString();
        auto first = addLedgerFile(*ledger, path, "node1");
        QVERIFY2(first.ok(), first.ok() ? "" : first.message().c_str());
        QCOMPARE(first->kind, std::string("nvidia-smi"));
        QVERIFY(first->added.snapshots > 0);
        QVERIFY(first->added.identities > 0);
        auto second = addLedgerFile(*ledger, path, "node1");
        QVERIFY(second.ok());
        QCOMPARE(second->added.total(), uint64_t(0));
        QCOMPARE(count(*ledger, "health_snapshots"), int64_t(first->added.snapshots));
    }

    void campaignTwiceAddsNothing()
    {
        QTemporaryDir dir;
        auto ledger = Ledger::open(test::ledgerSpec(dir.path(), "l"));
        QVERIFY(ledger.ok());
        const auto report = test::campaignReport("node1", "S1", "GPU-1", "persistent", 9);
        auto first =
            ledger->addCampaign({report, "r.h5", std::string("2026-03-01T00:00:00Z")}, {"node1", "r.h5"});
        QVERIFY2(first.ok(), first.ok() ? "" : first.message().c_str());
        QCOMPARE(first->campaigns, uint64_t(1));
        QCOMPARE(first->targets, uint64_t(1));
        auto second =
            ledger->addCampaign({report, "r.h5", std::string("2026-03-01T00:00:00Z")}, {"node1", "r.h5"});
        QVERIFY(second.ok());
        QCOMPARE(second->total(), uint64_t(0));
        QCOMPARE(count(*ledger, "campaigns"), int64_t(1));
        QCOMPARE(count(*ledger, "campaign_op_rates"), int64_t(1));
        auto rows =
            runSql(ledger->engine(), "SELECT serial, uuid, host, verdict, ci_high FROM campaign_targets");
        QVERIFY(rows.ok());
        QCOMPARE(sqlText((*rows)[0][0]), std::string("S1"));
        QCOMPARE(sqlText((*rows)[0][1]), std::string("gpu-1"));
        QCOMPARE(sqlText((*rows)[0][2]), std::string("node1"));
        QCOMPARE(sqlText((*rows)[0][3]), std::string("persistent"));
        QVERIFY(qAbs(sqlReal((*rows)[0][4]) - 0.14) < 1e-9);
    }

    void unknownVerdictIsRefusedWithNothingWritten()
    {
        QTemporaryDir dir;
        auto ledger = Ledger::open(test::ledgerSpec(dir.path(), "l"));
        QVERIFY(ledger.ok());
        auto report = test::campaignReport("node1", "S1", "GPU-1", "sort-of-broken", 9);
        auto added = ledger->addCampaign({report, "bad.json", std::nullopt}, {"node1", "bad.json"});
        QVERIFY(!added.ok());
        QVERIFY(added.message().find("bad.json") != std::string::npos);
        QVERIFY(added.message().find("sort-of-broken") != std::string::npos);
        QCOMPARE(count(*ledger, "campaigns"), int64_t(0));
    }

    void migratesAnOlderLedger()
    {
        QTemporaryDir dir;
        const std::string path = test::ledgerSpec(dir.path(), "old");
        {
            auto engine = openLedgerEngine(*parseLedgerLocation(path));
            QVERIFY2(engine.ok(), engine.ok() ? "" : engine.message().c_str());
            QVERIFY(engine.ok());
            QVERIFY(migrateLedger(**engine, 1).ok());
            auto v = ledgerVersionOf(**engine);
            QVERIFY(v.ok());
            QCOMPARE(*v, 1);
            QVERIFY(
                runSql(
                    **engine,
                    "INSERT INTO xid_events (serial, uuid, host, bus_id, kind, code, time_text, boot_id, "
                    "name, "
                    "message, action, source, recorded_at, dedup_key) VALUES ('S9', '', 'h', 'b', 'xid', 79, "
                    "'', '', 'n', 'm', 'drain', 's', '2026-01-01T00:00:00Z', 'k1')")
                    .ok());
        }
        QVERIFY(ledgerSchemaVersion() > 1);
        auto ledger = Ledger::open(path);
        QVERIFY2(ledger.ok(), ledger.ok() ? "" : ledger.message().c_str());
        auto v = ledgerVersionOf(ledger->engine());
        QVERIFY(v.ok());
        QCOMPARE(*v, ledgerSchemaVersion());
        QCOMPARE(count(*ledger, "xid_events"), int64_t(1));
        auto index =
            runSql(ledger->engine(),
                   onSqlite() ? "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = "
                                "'xid_events_serial'"
                              : "SELECT count(*) FROM pg_indexes WHERE indexname = 'xid_events_serial'");
        QVERIFY(index.ok());
        QCOMPARE(sqlInt((*index)[0][0]), int64_t(1));
        // Opening again applies nothing.
        auto again = Ledger::open(path);
        QVERIFY(again.ok());
        auto rows = runSql(again->engine(), "SELECT count(*) FROM schema_version");
        QCOMPARE(sqlInt((*rows)[0][0]), int64_t(1));
    }

    void refusesANewerLedger()
    {
        QTemporaryDir dir;
        const std::string path = test::ledgerSpec(dir.path(), "new");
        {
            auto ledger = Ledger::open(path);
            QVERIFY(ledger.ok());
            QVERIFY(runSql(ledger->engine(), "UPDATE schema_version SET version = 999").ok());
        }
        auto ledger = Ledger::open(path);
        QVERIFY(!ledger.ok());
        QVERIFY(ledger.message().find(path) != std::string::npos);
        QVERIFY(ledger.message().find("999") != std::string::npos);
    }

    void refusesAFileThatIsNotALedger()
    {
        if (!onSqlite()) QSKIP("SQLite only: a PostgreSQL ledger is a database, not a file");
        QTemporaryDir dir;
        const QString path = dir.path() + "/notes.txt";
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(4096, 'x'));
        f.close();
        auto ledger = Ledger::open(path.toStdString());
        QVERIFY(!ledger.ok());
        QVERIFY(ledger.message().find(path.toStdString()) != std::string::npos);
    }

    void locations()
    {
        auto env = [](std::optional<std::string> xdg, std::optional<std::string> home) {
            return [=](const std::string& name) -> std::optional<std::string> {
                if (name == "XDG_DATA_HOME") return xdg;
                if (name == "HOME") return home;
                return std::nullopt;
            };
        };
        QCOMPARE(*defaultLedgerPath(env("/x/data", "/home/u")),
                 std::string("/x/data/faultline/ledger.sqlite"));
        QCOMPARE(*defaultLedgerPath(env(std::nullopt, "/home/u")),
                 std::string("/home/u/.local/share/faultline/ledger.sqlite"));
        QVERIFY(!defaultLedgerPath(env(std::nullopt, std::nullopt)).ok());
        auto url = parseLedgerLocation("sqlite:///var/lib/l.sqlite", env(std::nullopt, "/h"));
        QVERIFY(url.ok());
        QCOMPARE(url->path, std::string("/var/lib/l.sqlite"));
        QVERIFY(!parseLedgerLocation("sqlite://relative.sqlite", env(std::nullopt, "/h")).ok());
        QVERIFY(!parseLedgerLocation("mysql://db/x", env(std::nullopt, "/h")).ok());
        for (const char* scheme : {"postgresql", "postgres"}) {
            auto pg =
                parseLedgerLocation(std::string(scheme) + "://fleet-db/ledger", env(std::nullopt, "/h"));
            QVERIFY(pg.ok());
            QVERIFY(pg->kind == LedgerLocation::Kind::Postgresql);
            QCOMPARE(pg->url, std::string(scheme) + "://fleet-db/ledger");
        }
    }

    void postgresErrorsNameTheUrlWithoutItsPassword()
    {
        QCOMPARE(redactedLedgerUrl("postgresql://fleet:s3cret@db:5433/ledger?sslmode=require&password=x2"),
                 std::string("postgresql://fleet:***@db:5433/ledger?sslmode=require&password=***"));
        QCOMPARE(redactedLedgerUrl("postgres:///ledger?host=/run/pg"),
                 std::string("postgres:///ledger?host=/run/pg"));
        QCOMPARE(redactedLedgerUrl("postgresql://u@h/d?password=p"),
                 std::string("postgresql://u@h/d?password=***"));
        // A server that is not there: the error names the URL, never the password.
        auto engine = openLedgerEngine(
            *parseLedgerLocation("postgresql://fleet:s3cret@/ledger?host=/nonexistent-faultline-dir"));
        QVERIFY(!engine.ok());
        QVERIFY2(engine.message().find("postgresql://fleet:***@/ledger?host=/nonexistent-faultline-dir") !=
                     std::string::npos,
                 engine.message().c_str());
        QVERIFY(engine.message().find("s3cret") == std::string::npos);
    }
};

FL_LEDGER_TEST_MAIN(TestLedgerStore)
#include "test_ledger_store.moc"
