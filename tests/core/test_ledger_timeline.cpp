// A GPU's timeline and queries over the ledger (core/ledger/LedgerTimeline.h, LedgerQuery.h):
// found by serial or UUID (any case), its rows in time order across health, events and campaigns
// (with per-op rates), the rules applied to them, and queries by verdict, Xid, flag, host and time;
// on SQLite and on a PostgreSQL server the test starts (support/LedgerEngines.h).
#include <QTemporaryDir>
#include <QtTest>

#include "core/ledger/LedgerQuery.h"
#include "core/ledger/LedgerTimeline.h"
#include "support/LedgerEngines.h"
#include "test_ledger_support.h"

using namespace faultline;

class TestLedgerTimeline : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::optional<Ledger> m_ledger;

private slots:
    void initTestCase()
    {
        FL_LEDGER_ENGINE_INIT();
        m_ledger.reset();
        auto ledger = Ledger::open(test::ledgerSpec(m_dir.path(), "l"));
        QVERIFY2(ledger.ok(), ledger.ok() ? "" : ledger.message().c_str());
        m_ledger.emplace(std::move(*ledger));
        // GPU S1: a health snapshot and an Xid 79 on node1, two failing campaigns 10 days apart,
        // then moved to node2 where a clean campaign ran.
        // (a live snapshot, with the boot it was taken in)
        auto health = test::healthDocument("S1", "GPU-AB", "Sun Mar  1 08:00:00 2026", true, 79,
                                           "2026-03-01T07:00:00Z");
        health["gpus"][0]["snapshots"][0]["boot_id"] = "b0000000000000000000000000000001";
        QVERIFY(m_ledger->addHealth(health, {"node1", "h.json"}).ok());
        QVERIFY(test::addS1Campaigns(*m_ledger));
        // Another GPU, healthy, on node3.
        QVERIFY(m_ledger
                    ->addCampaign({test::campaignReport("node3", "S2", "GPU-CD", "healthy", 0), "d.h5",
                                   std::string("2026-03-05T00:00:00Z")},
                                  {"node3", "d.h5"})
                    .ok());
    }

    void showBySerialOrUuid_data()
    {
        QTest::addColumn<QString>("key");
        QTest::newRow("serial") << "S1";
        QTest::newRow("uuid") << "GPU-AB";
        QTest::newRow("uuid lower case") << "gpu-ab";
    }
    void showBySerialOrUuid()
    {
        QFETCH(QString, key);
        auto t = ledgerTimeline(m_ledger->engine(), key.toStdString());
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        int campaigns = 0, xids = 0, health = 0;
        for (const TimelineEntry& e : t->entries) {
            campaigns += e.kind == "campaign";
            xids += e.kind == "xid";
            health += e.kind == "health";
        }
        QCOMPARE(campaigns, 3);
        QCOMPARE(xids, 1);
        QCOMPARE(health, 1);
        for (size_t i = 1; i < t->entries.size(); ++i) QVERIFY(t->entries[i - 1].at <= t->entries[i].at);
        std::set<std::string> rules;
        for (const RuleFinding& f : t->findings) rules.insert(f.rule);
        QVERIFY(rules.count("rma_candidate"));
        QVERIFY(rules.count("moved"));
        const nlohmann::json j = ledgerTimelineJson(*t);
        QCOMPARE(j["format"].get<std::string>(), std::string("faultline-ledger-timeline"));
        bool sawOps = false;
        std::string bootId;
        for (const auto& e : j["timeline"]) {
            if (e["kind"] == "campaign") sawOps = sawOps || e["ops"].size() == 1;
            if (e["kind"] == "health") bootId = e.value("boot_id", "");
        }
        QVERIFY(sawOps);
        QCOMPARE(bootId, std::string("b0000000000000000000000000000001"));
    }

    void unknownGpuIsAnError()
    {
        auto t = ledgerTimeline(m_ledger->engine(), "NOPE");
        QVERIFY(!t.ok());
        QVERIFY(t.message().find("NOPE") != std::string::npos);
    }

    void queries()
    {
        LedgerQueryFilter f;
        f.verdict = Verdict::Healthy;
        auto r = queryLedger(m_ledger->engine(), f);
        QVERIFY(r.ok());
        QCOMPARE(r->rows.size(), size_t(2));
        f.host = "node3";
        r = queryLedger(m_ledger->engine(), f);
        QCOMPARE(r->rows.size(), size_t(1));
        QCOMPARE(r->rows[0]["serial"].get<std::string>(), std::string("S2"));

        LedgerQueryFilter x;
        x.xid = 79;
        r = queryLedger(m_ledger->engine(), x);
        QCOMPARE(r->rows.size(), size_t(1));
        x.xid = 48;
        r = queryLedger(m_ledger->engine(), x);
        QCOMPARE(r->rows.size(), size_t(0));

        LedgerQueryFilter flag;
        flag.flag = "row_remap_pending";
        r = queryLedger(m_ledger->engine(), flag);
        QCOMPARE(r->rows.size(), size_t(1));
        flag.flag = "row_remap_failure";
        r = queryLedger(m_ledger->engine(), flag);
        QCOMPARE(r->rows.size(), size_t(0));
        flag.flag = "no_such_flag";
        QVERIFY(!queryLedger(m_ledger->engine(), flag).ok());

        LedgerQueryFilter range;
        range.verdict = Verdict::Persistent;
        range.since = "2026-03-10";
        range.until = "2026-03-13";
        r = queryLedger(m_ledger->engine(), range);
        QCOMPARE(r->rows.size(), size_t(1));
        range.until = "2026-03-12";  // exclusive
        r = queryLedger(m_ledger->engine(), range);
        QCOMPARE(r->rows.size(), size_t(0));
        range.since = "last tuesday";
        QVERIFY(!queryLedger(m_ledger->engine(), range).ok());
    }
};

FL_LEDGER_TEST_MAIN(TestLedgerTimeline)
#include "test_ledger_timeline.moc"
