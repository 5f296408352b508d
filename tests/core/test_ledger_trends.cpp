// Trends in a GPU's history (core/ledger/LedgerTrends.h): the failure rate of its campaigns per
// month and per week with Wilson intervals, overall and per op, and its ECC and row-remap counters'
// growth across health snapshots (first, last, delta, per day), in `ledger show`'s JSON and text;
// on SQLite and on a PostgreSQL server the test starts (support/LedgerEngines.h).
#include <QTemporaryDir>
#include <QtTest>

#include "core/ledger/LedgerTimeline.h"
#include "core/ledger/LedgerTrends.h"
#include "support/LedgerEngines.h"
#include "test_ledger_support.h"

using namespace faultline;

namespace {

const nlohmann::json* counterIn(const nlohmann::json& trends, const std::string& name)
{
    for (const nlohmann::json& c : trends["counters"])
        if (c["counter"] == name) return &c;
    return nullptr;
}

}  // namespace

class TestLedgerTrends : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::optional<Ledger> m_ledger;

    void addCampaign(const std::string& verdict, int failures, int runs, const std::string& trace,
                     const std::string& at)
    {
        auto added = m_ledger->addCampaign(
            {test::campaignReport("node1", "S9", "GPU-99", verdict, failures, runs, trace), trace, at},
            {"node1", trace});
        QVERIFY2(added.ok(), added.ok() ? "" : added.message().c_str());
    }

private slots:
    void windows_data()
    {
        QTest::addColumn<QString>("at");
        QTest::addColumn<QString>("window");
        QTest::addColumn<QString>("label");
        QTest::addColumn<QString>("start");
        QTest::addColumn<QString>("end");
        QTest::newRow("month") << "2026-03-12T10:00:00Z"
                               << "month"
                               << "2026-03"
                               << "2026-03-01"
                               << "2026-04-01";
        QTest::newRow("december") << "2026-12-31"
                                  << "month"
                                  << "2026-12"
                                  << "2026-12-01"
                                  << "2027-01-01";
        QTest::newRow("thursday") << "2026-03-12T23:59:59Z"
                                  << "week"
                                  << "2026-03-09"
                                  << "2026-03-09"
                                  << "2026-03-16";
        QTest::newRow("monday") << "2026-03-02T00:00:00Z"
                                << "week"
                                << "2026-03-02"
                                << "2026-03-02"
                                << "2026-03-09";
        QTest::newRow("sunday") << "2026-03-01T08:00:00"
                                << "week"
                                << "2026-02-23"
                                << "2026-02-23"
                                << "2026-03-02";
        QTest::newRow("across the year") << "2027-01-01T00:00:00Z"
                                         << "week"
                                         << "2026-12-28"
                                         << "2026-12-28"
                                         << "2027-01-04";
    }
    void windows()
    {
        QFETCH(QString, at);
        QFETCH(QString, window);
        QFETCH(QString, label);
        QFETCH(QString, start);
        QFETCH(QString, end);
        const auto w = parseTrendWindow(window.toStdString());
        QVERIFY(w);
        const auto span = trendWindowOf(at.toStdString(), *w);
        QVERIFY(span);
        QCOMPARE(QString::fromStdString(span->label), label);
        QCOMPARE(QString::fromStdString(span->start), start);
        QCOMPARE(QString::fromStdString(span->end), end);
    }

    void noDateNoWindow()
    {
        QVERIFY(!trendWindowOf("Dec 01 10:00:07", TrendWindow::Month));
        QVERIFY(!trendWindowOf("", TrendWindow::Week));
        QVERIFY(!parseTrendWindow("year"));
    }

    void initTestCase()
    {
        FL_LEDGER_ENGINE_INIT();
        m_ledger.reset();
        auto ledger = Ledger::open(test::ledgerSpec(m_dir.path(), "trends"));
        QVERIFY2(ledger.ok(), ledger.ok() ? "" : ledger.message().c_str());
        m_ledger.emplace(std::move(*ledger));
        // Two snapshots ten days apart: corrected ECC 12 -> 42, correctable remaps 2 -> 5.
        auto first = test::healthDocument("S9", "GPU-99", "Sun Mar  1 08:00:00 2026", false, 48,
                                          "2026-03-01T07:00:00Z");
        QVERIFY(m_ledger->addHealth(first, {"node1", "h1.json"}).ok());
        auto second = test::healthDocument("S9", "GPU-99", "Wed Mar 11 08:00:00 2026", true, 48,
                                           "2026-03-11T07:00:00Z");
        auto& counters = second["gpus"][0]["snapshots"][0]["counters"];
        counters["ecc_corrected_aggregate"] = 42;
        counters["remapped_rows"]["correctable"] = 5;
        second["gpus"][0]["snapshots"][0]["source"] = "smi2.xml";
        QVERIFY(m_ledger->addHealth(second, {"node1", "h2.json"}).ok());
        // March: 3/100 (Monday 2nd) and 40/100 (Thursday 12th); April: 0/500 (Wednesday 1st).
        addCampaign("transient", 3, 100, "a.h5", "2026-03-02T00:00:00Z");
        addCampaign("persistent", 40, 100, "b.h5", "2026-03-12T00:00:00Z");
        addCampaign("healthy", 0, 500, "c.h5", "2026-04-01T00:00:00Z");
    }

    void failureRatePerMonth()
    {
        auto t = ledgerTimeline(m_ledger->engine(), "S9");
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        const LedgerTrends& trends = t->trends;
        QCOMPARE(trends.failureRate.size(), size_t(2));
        const TrendRate& march = trends.failureRate[0];
        QCOMPARE(QString::fromStdString(march.window.label), QString("2026-03"));
        QCOMPARE(march.campaigns, uint64_t(2));
        QCOMPARE(march.runs, uint64_t(200));
        QCOMPARE(march.failures, uint64_t(43));
        QCOMPARE(march.rate.rate, 43.0 / 200.0);
        QVERIFY(march.rate.low < 0.215 && march.rate.high > 0.215 && march.rate.low > 0.15);
        QCOMPARE(march.ops.size(), size_t(1));
        QCOMPARE(march.ops[0].failures, uint64_t(43));
        QCOMPARE(QString::fromStdString(march.ops[0].op), QString("gemm"));
        const TrendRate& april = trends.failureRate[1];
        QCOMPARE(april.failures, uint64_t(0));
        QCOMPARE(april.runs, uint64_t(500));
        QVERIFY(april.rate.low < 1e-9);
        QVERIFY(april.rate.high > 0 && april.rate.high < 0.01);

        const nlohmann::json j = ledgerTimelineJson(*t);
        QCOMPARE(j["trends"]["window"].get<std::string>(), std::string("month"));
        QCOMPARE(j["trends"]["failure_rate"][0]["failures"].get<int>(), 43);
        QCOMPARE(j["trends"]["failure_rate"][0]["ci"].size(), size_t(2));
        QCOMPARE(j["trends"]["failure_rate"][1]["start"].get<std::string>(), std::string("2026-04-01"));
        QVERIFY(j.contains("timeline") && j.contains("rules"));  // the names before trends stay
        const std::string text = ledgerTimelineText(*t);
        QVERIFY2(text.find("trend: month 2026-03: 43/200 failed in 2 campaign(s)") != std::string::npos,
                 text.c_str());
    }

    void failureRatePerWeek()
    {
        auto t = ledgerTimeline(m_ledger->engine(), "GPU-99", TrendWindow::Week);
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        std::vector<std::string> labels;
        for (const TrendRate& r : t->trends.failureRate) labels.push_back(r.window.label);
        QCOMPARE(labels, (std::vector<std::string>{"2026-03-02", "2026-03-09", "2026-03-30"}));
        QCOMPARE(t->trends.failureRate[1].failures, uint64_t(40));
    }

    void countersGrowth()
    {
        auto t = ledgerTimeline(m_ledger->engine(), "S9");
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        const nlohmann::json j = ledgerTrendsJson(t->trends);
        const nlohmann::json* ecc = counterIn(j, "ecc_corrected_aggregate");
        QVERIFY(ecc);
        QCOMPARE((*ecc)["snapshots"].get<int>(), 2);
        QCOMPARE((*ecc)["first"]["value"].get<int>(), 12);
        QCOMPARE((*ecc)["last"]["value"].get<int>(), 42);
        QCOMPARE((*ecc)["delta"].get<int>(), 30);
        QCOMPARE((*ecc)["days"].get<double>(), 10.0);
        QCOMPARE((*ecc)["per_day"].get<double>(), 3.0);
        const nlohmann::json* remaps = counterIn(j, "remapped_rows_correctable");
        QVERIFY(remaps);
        QCOMPARE((*remaps)["delta"].get<int>(), 3);
        const nlohmann::json* uncorrected = counterIn(j, "ecc_uncorrected_aggregate");
        QVERIFY(uncorrected);
        QCOMPARE((*uncorrected)["delta"].get<int>(), 0);
        const std::string text = ledgerTimelineText(*t);
        QVERIFY2(text.find("counter: ecc_corrected_aggregate 12 -> 42 (+30 over 2 snapshot(s), 10.000 days, "
                           "3.000/day)") != std::string::npos,
                 text.c_str());
    }

    void oneSnapshotHasNoGrowthRate()
    {
        std::vector<TimelineEntry> entries = {
            {"2026-03-01T08:00:00", "health", "", {{"ecc_corrected_aggregate", 7}}}};
        const LedgerTrends trends = ledgerTrends(entries, TrendWindow::Month);
        QCOMPARE(trends.counters.size(), size_t(1));
        QCOMPARE(trends.counters[0].delta, int64_t(0));
        QVERIFY(!trends.counters[0].perDay);
        QVERIFY(trends.failureRate.empty());
        QVERIFY(ledgerTrendsJson(trends)["counters"][0]["per_day"].is_null());
    }
};

FL_LEDGER_TEST_MAIN(TestLedgerTrends)
#include "test_ledger_trends.moc"
