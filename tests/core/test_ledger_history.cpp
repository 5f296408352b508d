// One GPU's history as an evidence bundle carries it (core/ledger/LedgerHistory.h, case.json
// `ledger_history`) and the report's "Device history" section (core/evidence/DeviceHistorySection.h):
// the suspect's rows only (another board's serial, UUID, host and events never appear), found by
// serial or else by UUID, `found: false` for a GPU the ledger does not know, the field absent from
// case.json without a ledger; an event naming only a bus id goes to the board that sat in that slot
// at its time, never to a board seen there before or after (LedgerSlots.h), in the timeline
// (`ledger show`) and the history alike; on SQLite and on a PostgreSQL server the test starts.
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <set>
#include <tuple>

#include "core/evidence/DeviceHistorySection.h"
#include "core/evidence/EvidenceCase.h"
#include "core/ledger/LedgerHistory.h"
#include "core/ledger/LedgerSlots.h"
#include "core/ledger/LedgerTimeline.h"
#include "support/LedgerEngines.h"
#include "test_ledger_support.h"

using namespace faultline;

namespace {

// A snapshot of one board at slothost's 0000:3b:00.0 at `timestamp`: an identity record there.
nlohmann::json slotSighting(const std::string& serial, const std::string& uuid, const std::string& timestamp)
{
    const nlohmann::json identity = {
        {"bus_id", "0000:3b:00.0"}, {"uuid", uuid}, {"serial", serial}, {"product", "NVIDIA H100"}};
    return {{"format", "faultline-health"},
            {"version", 1},
            {"gpus",
             {{{"bus_id", "0000:3b:00.0"},
               {"uuid", uuid},
               {"serial", serial},
               {"identity", identity},
               {"snapshots",
                {{{"source", "smi-" + timestamp}, {"timestamp", timestamp}, {"identity", identity}}}}}}},
            {"unattributed_events", nlohmann::json::array()}};
}

// Kernel-log Xids that name only the bus id 0000:3b:00.0 (no serial, no UUID): {code, time}, a
// time "" for a line without a date.
nlohmann::json busOnlyXids(const std::vector<std::pair<int, std::string>>& xids)
{
    nlohmann::json events = nlohmann::json::array();
    for (const auto& [code, time] : xids)
        events.push_back({{"kind", "xid"},
                          {"xid", code},
                          {"time", time},
                          {"bus_id", "0000:3b:00.0"},
                          {"message", "bus-only event " + std::to_string(code)},
                          {"source", "dmesg"}});
    return {{"format", "faultline-health"},
            {"version", 1},
            {"gpus", nlohmann::json::array()},
            {"unattributed_events", events}};
}

std::multiset<int> xidCodes(const nlohmann::json& timeline)
{
    std::multiset<int> codes;
    for (const auto& e : timeline["timeline"])
        if (e["kind"] == "xid") codes.insert(e["xid"].get<int>());
    return codes;
}

std::multiset<int> historyCodes(const nlohmann::json& history)
{
    std::multiset<int> codes;
    for (const auto& e : history["event_summary"])
        for (int i = 0; i < e["count"].get<int>(); ++i) codes.insert(e["code"].get<int>());
    return codes;
}

}  // namespace

class TestLedgerHistory : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::optional<Ledger> m_ledger;

    nlohmann::json history(const std::string& serial, const std::string& uuid)
    {
        auto h = ledgerDeviceHistory(m_ledger->engine(), serial, uuid);
        if (!h) qFatal("%s", h.message().c_str());
        return *h;
    }

private slots:
    void initTestCase()
    {
        FL_LEDGER_ENGINE_INIT();
        m_ledger.reset();
        auto ledger = Ledger::open(test::ledgerSpec(m_dir.path(), "h"));
        QVERIFY2(ledger.ok(), ledger.ok() ? "" : ledger.message().c_str());
        m_ledger.emplace(std::move(*ledger));
        // The suspect S1: an Xid 79 and a snapshot on node1, two failing campaigns 10 days apart
        // there, then a clean one on node2.
        QVERIFY(m_ledger
                    ->addHealth(test::healthDocument("S1", "GPU-AB", "Sun Mar  1 08:00:00 2026", true, 79,
                                                     "2026-03-01T07:00:00Z"),
                                {"node1", "h1.json"})
                    .ok());
        QVERIFY(test::addS1Campaigns(*m_ledger));
        // Another board, S2 on node3: its own Xid 48, snapshot and failing campaign.
        QVERIFY(m_ledger
                    ->addHealth(test::healthDocument("S2", "GPU-CD", "Mon Mar  2 08:00:00 2026", true, 48,
                                                     "2026-03-02T07:00:00Z"),
                                {"node3", "h2.json"})
                    .ok());
        QVERIFY(m_ledger
                    ->addCampaign(
                        {test::campaignReport("node3", "S2", "GPU-CD", "persistent", 50, 100, "fourth.h5"),
                         "d.h5", std::string("2026-03-05T00:00:00Z")},
                        {"node3", "d.h5"})
                    .ok());
    }

    void theSuspectsHistoryOnly_data()
    {
        QTest::addColumn<QString>("serial");
        QTest::addColumn<QString>("uuid");
        QTest::addColumn<QString>("by");
        QTest::newRow("serial and uuid") << "S1"
                                         << "GPU-AB"
                                         << "serial";
        QTest::newRow("uuid alone") << ""
                                    << "gpu-ab"
                                    << "uuid";
        QTest::newRow("serial unknown, uuid known") << "NOT-IN-LEDGER"
                                                    << "GPU-AB"
                                                    << "uuid";
    }
    void theSuspectsHistoryOnly()
    {
        QFETCH(QString, serial);
        QFETCH(QString, uuid);
        QFETCH(QString, by);
        const nlohmann::json h = history(serial.toStdString(), uuid.toStdString());
        QCOMPARE(h["version"].get<int>(), 1);
        QVERIFY(h["found"].get<bool>());
        QCOMPARE(h["looked_up_by"].get<std::string>(), by.toStdString());
        QVERIFY(h["serials"].dump().find("\"S1\"") != std::string::npos);
        QVERIFY(h["uuids"].dump().find("gpu-ab") != std::string::npos);
        QCOMPARE(h["events"]["xid"].get<int>(), 1);
        QCOMPARE(h["events"]["sxid"].get<int>(), 0);
        QCOMPARE(h["event_summary"].size(), size_t(1));
        QCOMPARE(h["event_summary"][0]["code"].get<int>(), 79);
        QCOMPARE(h["event_summary"][0]["count"].get<int>(), 1);
        QCOMPARE(h["health_snapshots"].get<int>(), 1);
        QCOMPARE(h["first_seen"].get<std::string>(), std::string("2026-03-01T07:00:00Z"));
        QVERIFY(h["last_seen"].get<std::string>() >= std::string("2026-04-01T00:00:00Z"));
        std::set<std::string> hosts;
        for (const auto& l : h["locations"]) hosts.insert(l["host"].get<std::string>());
        QCOMPARE(hosts, (std::set<std::string>{"node1", "node2"}));
        // Campaigns with per-op rates and intervals, in time order.
        QCOMPARE(h["campaigns"].size(), size_t(3));
        QCOMPARE(h["campaigns"][1]["verdict"].get<std::string>(), std::string("persistent"));
        QCOMPARE(h["campaigns"][1]["failures"].get<int>(), 40);
        QCOMPARE(h["campaigns"][1]["ops"].size(), size_t(1));
        QCOMPARE(h["campaigns"][1]["ops"][0]["op"].get<std::string>(), std::string("gemm"));
        QCOMPARE(h["campaigns"][1]["ops"][0]["ci"].size(), size_t(2));
        // The rules that fired, each with its reason.
        std::map<std::string, std::string> rules;
        for (const auto& r : h["rules"]) rules[r["rule"].get<std::string>()] = r["reason"].get<std::string>();
        QVERIFY(rules.count("rma_candidate") && !rules["rma_candidate"].empty());
        QVERIFY(rules.count("moved") && rules["moved"].find("node2") != std::string::npos);
        // Trends: March's two failing campaigns, April's clean one (S2's March campaign not summed).
        const auto& rates = h["trends"]["failure_rate"];
        QCOMPARE(rates.size(), size_t(2));
        QCOMPARE(rates[0]["window"].get<std::string>(), std::string("2026-03"));
        QCOMPARE(rates[0]["campaigns"].get<int>(), 2);
        QCOMPARE(rates[0]["failures"].get<int>(), 43);
        // Nothing of the other board.
        const std::string all = h.dump();
        for (const char* other : {"S2", "GPU-CD", "gpu-cd", "node3", "fourth.h5"})
            QVERIFY2(all.find(other) == std::string::npos, other);
    }

    void busOnlyEventsGoToTheBoardInTheSlotAtTheirTime()
    {
        auto opened = Ledger::open(test::ledgerSpec(m_dir.path(), "slots"));
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.message().c_str());
        Ledger& ledger = *opened;
        // Board A at slothost 0000:3b:00.0 from May 1 (seen again May 20), board B in the same slot
        // from June 1 (seen again July 1).
        for (const auto& [serial, uuid, at] : {std::tuple{"SA", "GPU-A", "2026-05-01T00:00:00Z"},
                                               std::tuple{"SA", "GPU-A", "2026-05-20T00:00:00Z"},
                                               std::tuple{"SB", "GPU-B", "2026-06-01T00:00:00Z"},
                                               std::tuple{"SB", "GPU-B", "2026-07-01T00:00:00Z"}})
            QVERIFY(ledger.addHealth(slotSighting(serial, uuid, at), {"slothost", std::string(at) + ".json"})
                        .ok());
        // Xids naming only the bus id: 31 before anyone was seen there, 48 in A's time, 13 after A
        // was last seen but before B came (A still held the slot), 79 in B's time, 45 without a date.
        QVERIFY(ledger
                    .addHealth(busOnlyXids({{31, "2026-04-01T00:00:00Z"},
                                            {48, "2026-05-10T00:00:00Z"},
                                            {13, "2026-05-25T00:00:00Z"},
                                            {79, "2026-06-15T00:00:00Z"},
                                            {45, ""}}),
                               {"slothost", "dmesg"})
                    .ok());

        const std::map<std::string, std::multiset<int>> expected = {{"SA", {13, 48}}, {"SB", {79}}};
        for (const auto& [serial, codes] : expected) {
            auto timeline = ledgerTimeline(ledger.engine(), serial);
            QVERIFY2(timeline.ok(), timeline.ok() ? "" : timeline.message().c_str());
            const nlohmann::json shown = ledgerTimelineJson(*timeline);  // what `ledger show` prints
            QCOMPARE(xidCodes(shown), codes);
            auto h = ledgerDeviceHistory(ledger.engine(), serial, "");
            QVERIFY2(h.ok(), h.ok() ? "" : h.message().c_str());
            QCOMPARE(historyCodes(*h), codes);  // what `evidence --ledger` puts in case.json
            QCOMPARE((*h)["events"]["xid"].get<size_t>(), codes.size());
        }
        // Looked up by UUID: the same.
        auto byUuid = ledgerDeviceHistory(ledger.engine(), "", "GPU-B");
        QVERIFY(byUuid.ok());
        QCOMPARE(historyCodes(*byUuid), (std::multiset<int>{79}));
    }

    void slotSpans()
    {
        // Sightings in any order; at the same time another board's sighting ends the span.
        const SlotTenancy t = slotTenancy({{"h", "b", "2026-03-01", false},
                                           {"h", "b", "2026-01-01", true},
                                           {"h", "b", "2026-02-01", true},
                                           {"h", "b", "2026-04-01", true},
                                           {"h", "b", "2026-05-01", false},
                                           {"h", "b", "2026-05-01", true},
                                           {"h", "c", "2026-01-01", true}});
        QVERIFY(!t.holds("h", "b", std::string("2025-12-31")));
        QVERIFY(t.holds("h", "b", std::string("2026-01-01")));
        QVERIFY(t.holds("h", "b", std::string("2026-02-15")));
        QVERIFY(!t.holds("h", "b", std::string("2026-03-01")));
        QVERIFY(t.holds("h", "b", std::string("2026-04-30")));
        QVERIFY(!t.holds("h", "b", std::string("2026-05-01")));
        QVERIFY(!t.holds("h", "b", std::string("2027-01-01")));
        QVERIFY(!t.holds("h", "b", std::nullopt));  // another board was seen there
        QVERIFY(t.holds("h", "c", std::nullopt));   // only this board ever was
        QVERIFY(t.holds("h", "c", std::string("2030-01-01")));
        QVERIFY(!t.holds("h", "d", std::string("2026-01-01")));
    }

    void unknownSuspectIsFoundFalse()
    {
        const nlohmann::json h = history("S9", "GPU-ZZ");
        QCOMPARE(h["found"].get<bool>(), false);
        QCOMPARE(h["serial"].get<std::string>(), std::string("S9"));
        QVERIFY(!h["reason"].get<std::string>().empty());
        QVERIFY(!h.contains("campaigns"));
        // No serial or UUID (a bus id alone): nothing is looked up.
        const nlohmann::json none = history("", "");
        QCOMPARE(none["found"].get<bool>(), false);
        QVERIFY(none["reason"].get<std::string>().find("bus id") != std::string::npos);
    }

    void caseJsonCarriesItOnlyWithALedger()
    {
        EvidenceCase c;
        c.caseId = "CASE-H";
        c.suspect.serial = "S1";
        c.finish();
        QVERIFY(!evidenceCaseJson(c).contains("ledger_history"));
        QVERIFY(deviceHistoryMarkdown(evidenceCaseJson(c)).empty());
        c.ledgerHistory = history("S1", "GPU-AB");
        const nlohmann::json j = evidenceCaseJson(c);
        QVERIFY(j.contains("ledger_history"));
        QCOMPARE(j["ledger_history"]["serial"].get<std::string>(), std::string("S1"));
    }

    void reportSection()
    {
        const std::string md = deviceHistoryMarkdown({{"ledger_history", history("S1", "GPU-AB")}});
        QVERIFY(md.rfind("## Device history\n", 0) == 0);
        for (const char* expected : {"RMA candidate", "Xid 79", "node2", "persistent", "gemm", "2026-03"})
            QVERIFY2(md.find(expected) != std::string::npos, expected);
        QVERIFY(md.find("S2") == std::string::npos);
        // Failed runs and the rate are two cells of the campaigns' table.
        QVERIFY2(md.find("| persistent | 40/100 | 40.0% [") != std::string::npos, md.c_str());
        const std::string none = deviceHistoryMarkdown({{"ledger_history", history("S9", "")}});
        QVERIFY2(none.find("holds no history") != std::string::npos, none.c_str());
    }
};

FL_LEDGER_TEST_MAIN(TestLedgerHistory)
#include "test_ledger_history.moc"
