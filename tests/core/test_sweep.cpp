// faultline sweep on simulated groups of 8 ranks: one faulty link, one faulty GPU, both, and a
// healthy group, in the two-round and the all-pairs modes. Exactly the planted parts are named.
#include <QtTest>
#include <algorithm>
#include <set>

#include "core/collectives/LinkFault.h"
#include "core/collectives/Sweep.h"

using namespace faultline;

namespace {

std::vector<std::string> group(size_t n, const std::map<size_t, std::string>& planted)
{
    std::vector<std::string> targets;
    for (size_t i = 0; i < n; ++i) {
        const auto p = planted.find(i);
        targets.push_back(p == planted.end() ? "sim:healthy" : p->second);
    }
    return targets;
}

SweepReport sweep(std::vector<std::string> targets, SweepPattern pattern = SweepPattern::AllGather,
                  bool allPairs = false)
{
    SweepOptions o;
    o.targets = std::move(targets);
    o.pattern = pattern;
    o.bytes = 64 * 1024;
    o.reps = 4;
    o.allPairs = allPairs;
    auto r = runSweep(o);
    if (!r) qFatal("sweep failed: %s", r.message().c_str());
    return *r;
}

using Links = std::vector<std::pair<size_t, size_t>>;

Links linksOf(const SweepReport& r)
{
    Links out;
    for (const SweepLink& l : r.faultyLinks) out.emplace_back(l.src, l.dst);
    return out;
}

}  // namespace

class TestSweep : public QObject {
    Q_OBJECT

private slots:
    void findsExactlyThePlantedParts_data()
    {
        QTest::addColumn<std::vector<std::string>>("targets");
        QTest::addColumn<std::vector<size_t>>("gpus");
        QTest::addColumn<Links>("links");
        QTest::addColumn<int>("pattern");
        QTest::addColumn<bool>("allPairs");
        const int gather = int(SweepPattern::AllGather), reduce = int(SweepPattern::AllReduce),
                  sendrecv = int(SweepPattern::SendRecv);
        QTest::newRow("healthy") << group(8, {}) << std::vector<size_t>{} << Links{} << gather << false;
        QTest::newRow("faulty GPU 3")
            << group(8, {{3, "sim:flip:rate=0.01"}}) << std::vector<size_t>{3} << Links{} << gather << false;
        QTest::newRow("faulty link 1->0") << group(8, {{1, "sim:healthy:link_to=0,link_rate=0.001"}})
                                          << std::vector<size_t>{} << Links{{1, 0}} << gather << false;
        QTest::newRow("both") << group(8, {{6, "sim:stuck-bit:bit=30"},
                                           {5, "sim:healthy:link_to=4,link_drop=0.5"}})
                              << std::vector<size_t>{6} << Links{{5, 4}} << gather << false;
        QTest::newRow("faulty GPU, allreduce")
            << group(8, {{0, "sim:nan:rate=0.001"}}) << std::vector<size_t>{0} << Links{} << reduce << false;
        QTest::newRow("stuck link bit, sendrecv")
            << group(8, {{7, "sim:healthy:link_to=6,link_bit=3"}}) << std::vector<size_t>{} << Links{{7, 6}}
            << sendrecv << false;
        QTest::newRow("link across pairs, all pairs")
            << group(6, {{2, "sim:healthy:link_to=5,link_repeat=0.5,link_chunk=256"}})
            << std::vector<size_t>{} << Links{{2, 5}} << gather << true;
        QTest::newRow("two faulty GPUs in one pair")
            << group(8, {{2, "sim:flip:rate=0.01"}, {3, "sim:flip:rate=0.01,seed=9"}})
            << std::vector<size_t>{2, 3} << Links{} << gather << false;
    }
    void findsExactlyThePlantedParts()
    {
        QFETCH(std::vector<std::string>, targets);
        QFETCH(std::vector<size_t>, gpus);
        QFETCH(Links, links);
        QFETCH(int, pattern);
        QFETCH(bool, allPairs);
        const SweepReport r = sweep(targets, SweepPattern(pattern), allPairs);
        QCOMPARE(r.faultyGpus(), gpus);
        QCOMPARE(linksOf(r), links);
        QCOMPARE(r.healthy(), gpus.empty() && links.empty());
        // Every failing transfer says how many bytes and what pattern; passing ones say nothing.
        for (const SweepRound& round : r.rounds)
            for (const SweepTransfer& t : round.transfers) {
                QCOMPARE(t.failures == 0, t.corruptedBytes == 0);
                QCOMPARE(t.failures == 0, t.signature.empty());
            }
        for (size_t g : gpus) {
            QVERIFY(r.gpus[g].failures > 0);
            QVERIFY(r.gpus[g].rate.low > 0);
        }
        const nlohmann::json j = sweepJson(r);
        QCOMPARE(j["faulty_gpus"].get<std::vector<size_t>>(), gpus);
        QCOMPARE(j["faulty_links"].size(), links.size());
        QVERIFY(j["rounds"][0]["pairs"][0].contains("gbps"));
    }

    // Round two pairs each GPU of a failing pair with a GPU of a passing pair.
    void secondRoundPairsTheFailingWithThePassing()
    {
        const SweepReport r = sweep(group(8, {{3, "sim:flip:rate=0.01"}}));
        QCOMPARE(r.rounds.size(), size_t(2));
        QCOMPARE(r.rounds[0].transfers.size(), size_t(8));  // 4 pairs x 2 directions
        for (const SweepTransfer& t : r.rounds[1].transfers) {
            const bool failingSide = t.a == 2 || t.a == 3 || t.b == 2 || t.b == 3;
            QVERIFY(failingSide);
            QVERIFY(!(std::min(t.a, t.b) == 2 && std::max(t.a, t.b) == 3));
        }
        // A healthy group needs one round.
        QCOMPARE(sweep(group(8, {})).rounds.size(), size_t(1));
    }

    // With an odd count rank 0 is in two first-round pairs; when one passes and the other fails,
    // round two must not pair rank 0 with itself, repeat a pair, or retry the failing pair.
    void secondRoundNeverPairsAGpuWithItself()
    {
        SweepRound first;
        auto direction = [](size_t a, size_t b, uint32_t failures) {
            SweepTransfer t;
            t.a = a;
            t.b = b;
            t.reps = 3;
            t.failures = failures;
            return t;
        };
        first.transfers = {direction(0, 1, 0), direction(0, 1, 0), direction(2, 3, 0),
                           direction(2, 3, 0), direction(0, 4, 2), direction(0, 4, 0)};
        const auto second = sweepSecondRound(5, first);
        QVERIFY(!second.empty());
        std::set<std::pair<size_t, size_t>> seen;
        for (const auto& [a, b] : second) {
            QVERIFY2(a != b, qPrintable(QStringLiteral("GPU %1 paired with itself").arg(a)));
            QVERIFY(!(a == 0 && b == 4));
            QVERIFY(seen.insert({a, b}).second);
            QVERIFY(a == 0 || a == 4 || b == 0 || b == 4);
        }
        // Every GPU of the failing pair meets someone.
        bool met4 = false;
        for (const auto& [a, b] : second) met4 = met4 || a == 4 || b == 4;
        QVERIFY(met4);
        // Through the whole sweep: five GPUs, GPU 4 faulty.
        const SweepReport r = sweep(group(5, {{4, "sim:flip:rate=0.05"}}));
        for (const SweepRound& round : r.rounds)
            for (const SweepTransfer& t : round.transfers) QVERIFY(t.a != t.b);
    }

    void sameSeedSameResult()
    {
        const auto targets = group(8, {{4, "sim:flip:rate=0.001"}});
        const nlohmann::json a = sweepJson(sweep(targets)), b = sweepJson(sweep(targets));
        QCOMPARE(a["rounds"].dump().size() > 0, true);
        nlohmann::json ra = a["rounds"], rb = b["rounds"];
        for (auto* r : {&ra, &rb})
            for (auto& round : *r)
                for (auto& p : round["pairs"]) {
                    p.erase("gbps");  // measured, not computed
                    p.erase("seconds");
                }
        QCOMPARE(ra, rb);
    }

    void badSetupsAreErrors_data()
    {
        QTest::addColumn<std::vector<std::string>>("targets");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("one target") << std::vector<std::string>{"sim:healthy"} << "at least two";
        QTest::newRow("link to itself")
            << std::vector<std::string>{"sim:healthy:link_to=0,link_rate=0.1", "sim:healthy"}
            << "this rank itself";
        QTest::newRow("link beyond the group")
            << std::vector<std::string>{"sim:healthy:link_to=5,link_rate=0.1", "sim:healthy"}
            << "link_to must be";
        QTest::newRow("link without a defect")
            << std::vector<std::string>{"sim:healthy:link_to=1", "sim:healthy"} << "without a defect";
        QTest::newRow("link parameter without link_to")
            << std::vector<std::string>{"sim:healthy:link_rate=0.1", "sim:healthy"} << "without link_to";
        QTest::newRow("unknown link parameter")
            << std::vector<std::string>{"sim:healthy:link_to=1,link_speed=3", "sim:healthy"} << "link_speed";
        QTest::newRow("cuda") << std::vector<std::string>{"cuda:0", "cuda:1"} << "not built into sweep";
    }
    void badSetupsAreErrors()
    {
        QFETCH(std::vector<std::string>, targets);
        QFETCH(QString, phrase);
        SweepOptions o;
        o.targets = targets;
        auto r = runSweep(o);
        QVERIFY(!r);
        QVERIFY2(QString::fromStdString(r.message()).contains(phrase), r.message().c_str());
    }

    void linkFaultsAreSeededAndCounted()
    {
        TargetSpec spec = *parseTargetSpec("sim:healthy:link_to=1,link_rate=0.05,link_seed=3");
        auto link = takeLinkFault(spec, 0, 2);
        QVERIFY(link);
        QVERIFY(!spec.params.count("link_to"));  // taken out: the fault model never sees it
        std::vector<unsigned char> a(4096, 0x5a), b = a;
        const uint64_t changedA = link->corrupt(a.data(), a.size(), 0, 7);
        const uint64_t changedB = link->corrupt(b.data(), b.size(), 0, 7);
        QVERIFY(changedA > 0);
        QCOMPARE(changedA, changedB);
        QVERIFY(a == b);
        uint64_t differing = 0;
        for (unsigned char c : a) differing += c != 0x5a;
        QCOMPARE(differing, changedA);
    }
};

QTEST_APPLESS_MAIN(TestSweep)
#include "test_sweep.moc"
