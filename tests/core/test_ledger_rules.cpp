// The ledger's rules over one GPU's history (core/ledger/LedgerRules.h), on planted rows: two
// SDC-positive campaigns within 30 days make an RMA candidate (not 31 days apart, not one campaign
// counted twice), a clean campaign after a reboot that followed a failure is possibly masked (not
// when the reboot came before the failure), and a GPU seen in two places moved.
#include <QtTest>

#include "core/ledger/LedgerRules.h"

using namespace faultline;

namespace {

RuleCampaign campaign(int64_t id, const std::string& at, Verdict v, const std::string& host = "node1")
{
    RuleCampaign c;
    c.campaignId = id;
    c.at = at;
    c.target = "cuda:0";
    c.host = host;
    c.verdict = v;
    c.runs = 100;
    c.failures = sdcPositive(v) ? 5 : 0;
    return c;
}

bool has(const std::vector<RuleFinding>& f, const std::string& rule)
{
    for (const RuleFinding& x : f)
        if (x.rule == rule) return true;
    return false;
}

}  // namespace

class TestLedgerRules : public QObject {
    Q_OBJECT

private slots:
    void escalation_data()
    {
        QTest::addColumn<QString>("second");
        QTest::addColumn<int>("secondId");
        QTest::addColumn<bool>("rma");
        QTest::newRow("29 days") << "2026-03-30T00:00:00Z" << 2 << true;
        QTest::newRow("30 days") << "2026-03-31T00:00:00Z" << 2 << true;
        QTest::newRow("31 days") << "2026-04-01T00:00:00Z" << 2 << false;
        QTest::newRow("same campaign twice") << "2026-03-02T00:00:00Z" << 1 << false;
    }
    void escalation()
    {
        QFETCH(QString, second);
        QFETCH(int, secondId);
        QFETCH(bool, rma);
        RuleInputs in;
        in.campaigns = {campaign(1, "2026-03-01T00:00:00Z", Verdict::Transient),
                        campaign(secondId, second.toStdString(), Verdict::Persistent)};
        const auto found = applyLedgerRules(in);
        QCOMPARE(has(found, "rma_candidate"), rma);
        if (rma) {
            QVERIFY(found.front().reason.find("campaign 1") != std::string::npos);
            QVERIFY(found.front().reason.find("campaign 2") != std::string::npos);
        }
    }

    void healthyCampaignsNeverEscalate()
    {
        RuleInputs in;
        in.campaigns = {campaign(1, "2026-03-01T00:00:00Z", Verdict::Healthy),
                        campaign(2, "2026-03-02T00:00:00Z", Verdict::NoVerdict),
                        campaign(3, "2026-03-03T00:00:00Z", Verdict::DeviceSpecific)};
        QVERIFY(!has(applyLedgerRules(in), "rma_candidate"));
    }

    void possiblyMasked_data()
    {
        QTest::addColumn<QString>("failure");
        QTest::addColumn<QString>("boot");
        QTest::addColumn<QString>("bootHost");
        QTest::addColumn<bool>("masked");
        QTest::newRow("failure, reboot, clean") << "2026-05-01T00:00:00Z"
                                                << "2026-05-02T00:00:00Z"
                                                << "node1" << true;
        QTest::newRow("reboot before the failure") << "2026-05-03T00:00:00Z"
                                                   << "2026-05-02T00:00:00Z"
                                                   << "node1" << false;
        QTest::newRow("reboot of another host") << "2026-05-01T00:00:00Z"
                                                << "2026-05-02T00:00:00Z"
                                                << "node7" << false;
        QTest::newRow("no failure") << ""
                                    << "2026-05-02T00:00:00Z"
                                    << "node1" << false;
    }
    void possiblyMasked()
    {
        QFETCH(QString, failure);
        QFETCH(QString, boot);
        QFETCH(QString, bootHost);
        QFETCH(bool, masked);
        RuleInputs in;
        in.campaigns = {campaign(4, "2026-05-10T00:00:00Z", Verdict::Healthy)};
        if (!failure.isEmpty())
            in.failures.push_back({failure.toStdString(), "node1", "Xid 79 (GPU_HAS_FALLEN_OFF_THE_BUS)"});
        in.boots.push_back({boot.toStdString(), bootHost.toStdString(), "b2"});
        const auto found = applyLedgerRules(in);
        QCOMPARE(has(found, "possibly_masked"), masked);
        if (masked) QVERIFY(found.front().reason.find("Xid 79") != std::string::npos);
    }

    void aFailingCampaignIsAFailureToo()
    {
        RuleInputs in;
        in.campaigns = {campaign(1, "2026-05-01T00:00:00Z", Verdict::Persistent),
                        campaign(2, "2026-07-10T00:00:00Z", Verdict::Healthy)};
        in.boots.push_back({"2026-06-01T00:00:00Z", "node1", "b2"});
        QVERIFY(has(applyLedgerRules(in), "possibly_masked"));
    }

    void moved()
    {
        RuleInputs in;
        in.locations = {{"node1", "0000:3b:00.0", "2026-01-01", "2026-02-01"}};
        QVERIFY(!has(applyLedgerRules(in), "moved"));
        in.locations.push_back({"node1", "0000:86:00.0", "2026-03-01", "2026-04-01"});
        auto found = applyLedgerRules(in);
        QVERIFY(has(found, "moved"));
        QCOMPARE(found.front().conclusion, std::string("moved slot"));
        in.locations.push_back({"node9", "0000:3b:00.0", "2026-05-01", "2026-06-01"});
        found = applyLedgerRules(in);
        QCOMPARE(found.front().conclusion, std::string("moved host"));
        QVERIFY(found.front().reason.find("node9") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestLedgerRules)
#include "test_ledger_rules.moc"
