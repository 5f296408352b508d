// The bitwise invariants of collectives on every rank's recorded output: each planted fault is
// found and attributed (ranks, source and destination of a block, differing bytes, signature),
// clean collectives hold, and bisect makes a failed invariant the op's divergence.
#include <QTemporaryDir>
#include <QtTest>

#include "core/replay/Bisect.h"
#include "core/replay/CollectiveInvariants.h"
#include "support/CollectiveTrace.h"

using namespace faultline;
using namespace faultline::test;

namespace {

std::vector<CollectiveInvariantReport> reportsOf(const QString& path)
{
    auto trace = readTrace(path.toStdString());
    if (!trace) qFatal("%s", trace.message().c_str());
    std::vector<CollectiveInvariantReport> reports;
    for (const TraceOp& op : trace->ops) {
        auto r = checkCollectiveInvariants(*trace, op);
        if (!r) qFatal("%s", r.message().c_str());
        reports.push_back(std::move(r).value());
    }
    return reports;
}

const InvariantCheck* find(const CollectiveInvariantReport& r, const std::string& invariant)
{
    for (const InvariantCheck& c : r.checks)
        if (c.invariant == invariant) return &c;
    return nullptr;
}

}  // namespace

class TestCollectiveInvariants : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString write(const char* name, Plant plant)
    {
        const QString path = m_dir.filePath(name);
        const QString error = writeMergedTrace(path, CollectiveCase(plant));
        if (!error.isEmpty()) qFatal("%s", qPrintable(error));
        return path;
    }

private slots:
    void cleanCollectivesHold()
    {
        const auto reports = reportsOf(write("clean.h5", Plant::None));
        QCOMPARE(reports.size(), size_t(4));
        for (const CollectiveInvariantReport& r : reports) {
            QVERIFY2(r.holds(), r.summary().c_str());
            QVERIFY(!r.checks.empty());
            QVERIFY(r.missingRanks.empty());
        }
        QVERIFY(find(reports[0], "identical_bits") && find(reports[0], "golden"));
        QCOMPARE(find(reports[0], "golden")->judged, std::string("bound"));  // normal floats
        QCOMPARE(find(reports[1], "gathered_inputs")->judged, std::string("bitwise"));
        QCOMPARE(find(reports[2], "golden")->judged, std::string("bitwise"));  // integers, exact
        QCOMPARE(find(reports[3], "root_input")->judged, std::string("bitwise"));
    }

    void allReduceNamesTheRankOffTheMajority()
    {
        const auto r = reportsOf(write("ar.h5", Plant::AllReduceRank2))[0];
        QVERIFY(!r.holds());
        const InvariantCheck* bits = find(r, "identical_bits");
        QVERIFY(bits && !bits->holds);
        QCOMPARE(bits->failures.size(), size_t(1));
        QCOMPARE(bits->failures[0].destinationRank, size_t(2));
        QCOMPARE(bits->failures[0].destination, std::string("g2"));
        QVERIFY(!bits->failures[0].sourceRank);
        QCOMPARE(bits->failures[0].differingElements, uint64_t(1));
        QVERIFY2(bits->detail.find("majority (g0, g1)") != std::string::npos, bits->detail.c_str());
        // The flipped exponent bit also leaves the golden sum's bound, on rank 2 only.
        const InvariantCheck* golden = find(r, "golden");
        QCOMPARE(golden->failures.size(), size_t(1));
        QCOMPARE(golden->failures[0].destinationRank, size_t(2));
        QCOMPARE(*golden->failures[0].beyondBound, uint64_t(1));
    }

    void allGatherNamesSourceAndDestination()
    {
        const auto r = reportsOf(write("ag.h5", Plant::GatherBlock2OnRank0))[1];
        const InvariantCheck* moved = find(r, "gathered_inputs");
        QVERIFY(moved && !moved->holds);
        QCOMPARE(moved->failures.size(), size_t(1));
        const CollectiveFailure& f = moved->failures[0];
        QCOMPARE(*f.sourceRank, size_t(2));
        QCOMPARE(f.source, std::string("g2"));
        QCOMPARE(f.destinationRank, size_t(0));
        QCOMPARE(f.elements, uint64_t(10));
        QCOMPARE(f.differingElements, uint64_t(1));
        QCOMPARE(f.differingBytes, uint64_t(1));  // mask 0x00ff0000: one byte
        QVERIFY(!f.signature.empty() && f.signature != "identical");
        const nlohmann::json j = collectiveInvariantJson(r);
        QCOMPARE(j["holds"], false);
        QCOMPARE(j["invariants"][0]["failures"][0]["source_rank"], 2);
        QCOMPARE(j["invariants"][0]["failures"][0]["destination_rank"], 0);
        QCOMPARE(j["invariants"][0]["failures"][0]["differing_bytes"], 1);
    }

    void exactSumsAreJudgedBitwise()
    {
        // One ulp in an integer sum is inside the bound but not exact.
        const auto r = reportsOf(write("rs.h5", Plant::ScatterLastBitRank1))[2];
        const InvariantCheck* golden = find(r, "golden");
        QVERIFY(golden && !golden->holds);
        QCOMPARE(golden->judged, std::string("bitwise"));
        QCOMPARE(golden->failures.size(), size_t(1));
        QCOMPARE(golden->failures[0].destinationRank, size_t(1));
        QCOMPARE(golden->failures[0].differingElements, uint64_t(1));
        QVERIFY(!golden->failures[0].beyondBound);
    }

    void broadcastNamesTheRoot()
    {
        const auto r = reportsOf(write("bc.h5", Plant::BroadcastRank0))[3];
        const InvariantCheck* moved = find(r, "root_input");
        QVERIFY(moved && !moved->holds);
        QCOMPARE(moved->failures.size(), size_t(1));
        QCOMPARE(*moved->failures[0].sourceRank, size_t(1));
        QCOMPARE(moved->failures[0].destination, std::string("g0"));
        QCOMPARE(moved->failures[0].differingBytes, uint64_t(1));
    }

    void missingRanksAreNamed()
    {
        const QString path = m_dir.filePath("rank1.h5");
        QCOMPARE(writeRankTrace(path, CollectiveCase(Plant::None), 1), QString());
        const auto reports = reportsOf(path);
        QCOMPARE(reports[0].op, std::string("add"));
        QVERIFY(reports[0].checks.empty());  // not a collective: nothing to judge
        const CollectiveInvariantReport& ag = reports[2];
        QCOMPARE(ag.missingRanks, (std::vector<std::string>{"g0", "g2"}));
        QVERIFY(ag.holds());
        QVERIFY(!find(reports[1], "identical_bits"));  // one rank: nothing to compare with
    }

    void bisectMakesAFailedInvariantDivergent()
    {
        // The suspect g1's own gather output is right; rank 0 holds a wrong block of rank 2's.
        auto trace = readTrace(write("bisect.h5", Plant::GatherBlock2OnRank0).toStdString());
        QVERIFY(trace.ok());
        auto report = bisectTrace(*trace, "g1");
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        QCOMPARE(report->ops.size(), size_t(4));
        QCOMPARE(report->ops[0].verdict, BisectVerdict::Ok);
        QCOMPARE(report->ops[1].verdict, BisectVerdict::Divergent);
        QVERIFY2(report->ops[1].detail.find("gathered_inputs") != std::string::npos,
                 report->ops[1].detail.c_str());
        QCOMPARE(report->ops[2].verdict, BisectVerdict::Ok);  // g1's reduce_scatter block
        QCOMPARE(report->ops[3].verdict, BisectVerdict::Ok);
        QCOMPARE(*report->firstDivergentOp, size_t(1));
        const nlohmann::json j = bisectJson(*report);
        QCOMPARE(j["ops"][1]["collective"]["invariants"][0]["failures"][0]["source"], "g2");
        QCOMPARE(j["ops"][1]["collective"]["invariants"][0]["failures"][0]["destination"], "g0");
        QVERIFY(j["ops"][0]["collective"]["holds"].get<bool>());
        const std::string text = bisectText(*report);
        QVERIFY2(text.find("the block from rank 2 (g2) on rank 0 (g0)") != std::string::npos, text.c_str());
    }

    void bisectJudgesTheSuspectsScatterBlock()
    {
        // g1's block is one ulp off: inside all_reduce's bound, so the verdict comes from the
        // exact-sum invariant.
        auto trace = readTrace(write("bisect-rs.h5", Plant::ScatterLastBitRank1).toStdString());
        auto report = bisectTrace(*trace, "g2");
        QVERIFY(report.ok());
        QCOMPARE(report->ops[2].verdict, BisectVerdict::Divergent);
        QCOMPARE(report->ops[0].verdict, BisectVerdict::Ok);
        QCOMPARE(report->ops[3].verdict, BisectVerdict::Ok);
    }
};

QTEST_GUILESS_MAIN(TestCollectiveInvariants)
#include "test_collective_invariants.moc"
