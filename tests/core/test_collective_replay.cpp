// The collective replay with every rank in this process: groups of 8 simulated ranks, healthy,
// with one faulty link, one faulty GPU, both, and a GPU that hangs; exactly the planted parts are
// named, for all_reduce, all_gather and every collective of the trace. The invariants, the ring
// schedules against a clean run, and the setups that are errors.
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "core/collectives/CollectiveReplay.h"
#include "support/CollectiveReplayTrace.h"

using namespace faultline;

namespace {

using Links = std::vector<std::pair<size_t, size_t>>;

std::vector<std::string> group(size_t n, const std::map<size_t, std::string>& planted)
{
    std::vector<std::string> targets;
    for (size_t i = 0; i < n; ++i) {
        const auto p = planted.find(i);
        targets.push_back(p == planted.end() ? "sim:healthy" : p->second);
    }
    return targets;
}

}  // namespace

class TestCollectiveReplay : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_trace;

    CollectiveOptions options(std::vector<std::string> targets, const std::string& ops = "")
    {
        CollectiveOptions o;
        o.tracePath = m_trace;
        o.targets = std::move(targets);
        o.ops = ops;
        o.reps = 2;
        return o;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("collectives.h5").toStdString();
        QCOMPARE(QString::fromStdString(test::writeCollectiveTrace(m_trace, 8)), QString());
    }

    void namesExactlyThePlantedParts_data()
    {
        QTest::addColumn<std::vector<std::string>>("targets");
        QTest::addColumn<QString>("ops");
        QTest::addColumn<std::vector<size_t>>("gpus");
        QTest::addColumn<Links>("links");
        const auto link = group(8, {{2, "sim:healthy:link_to=3,link_rate=0.01"}});
        const auto gpu = group(8, {{5, "sim:flip:rate=0.01"}});
        const auto both = group(8, {{6, "sim:stuck-bit:bit=30"}, {1, "sim:healthy:link_to=2,link_drop=0.5"}});
        for (const char* ops : {"all_reduce", "all_gather", ""}) {
            const QString sel = *ops ? QString(ops) : QStringLiteral("every collective");
            QTest::addRow("healthy, %s", qPrintable(sel))
                << group(8, {}) << ops << std::vector<size_t>{} << Links{};
            QTest::addRow("link 2->3, %s", qPrintable(sel))
                << link << ops << std::vector<size_t>{} << Links{{2, 3}};
            QTest::addRow("GPU 5, %s", qPrintable(sel)) << gpu << ops << std::vector<size_t>{5} << Links{};
            QTest::addRow("GPU 6 and link 1->2, %s", qPrintable(sel))
                << both << ops << std::vector<size_t>{6} << Links{{1, 2}};
        }
        QTest::newRow("link against a custom ring 0,2,4,6,1,3,5,7: 4->6")
            << group(8, {{4, "sim:healthy:link_to=6,link_bit=3"}}) << QString("all_reduce")
            << std::vector<size_t>{} << Links{{4, 6}};
        QTest::newRow("GPU 0 hangs") << group(8, {{0, "sim:hang:after=4"}}) << QString("all_gather")
                                     << std::vector<size_t>{0} << Links{};
    }
    void namesExactlyThePlantedParts()
    {
        QFETCH(std::vector<std::string>, targets);
        QFETCH(QString, ops);
        QFETCH(std::vector<size_t>, gpus);
        QFETCH(Links, links);
        CollectiveOptions o = options(targets, ops.toStdString());
        if (QByteArray(QTest::currentDataTag()).contains("custom ring")) o.ring = {0, 2, 4, 6, 1, 3, 5, 7};
        auto r = runCollectiveReplay(o);
        QVERIFY2(r, r ? "" : r.message().c_str());
        QCOMPARE(r->mode, std::string("in-process"));
        QCOMPARE(r->faultyGpus(), gpus);
        QCOMPARE(r->faultyLinks(), links);
        const bool healthy = gpus.empty() && links.empty();
        QCOMPARE(r->healthy(), healthy);
        // Two rings: the order given and its reverse.
        QCOMPARE(r->rings.size(), size_t(2));
        std::vector<size_t> reversed = r->rings[0];
        std::reverse(reversed.begin(), reversed.end());
        QCOMPARE(r->rings[1], reversed);
        // Every run judged; a healthy group passes every invariant, a faulty one breaks some.
        size_t bad = 0;
        for (const CollectiveRun& run : r->runs) {
            QVERIFY(!run.judged.empty() || run.status == RunOutcome::Hang);
            bad += run.status != RunOutcome::Ok;
            if (run.status == RunOutcome::Ok) {
                QCOMPARE(run.violations, uint64_t(0));
                QVERIFY(run.identical);
                QVERIFY(run.differingBlocks.empty());
            }
        }
        QCOMPARE(bad == 0, healthy);
        // The per-link table: every ring link used, failures only where corruption entered.
        for (const CollectiveLink& l : r->links) {
            QVERIFY(l.transfers > 0 || !gpus.empty());
            QCOMPARE(l.failures == 0, l.corruptedBytes == 0);
            QCOMPARE(l.failures == 0, l.signature.empty());
            QVERIFY(l.gbps() >= 0);
            if (l.faulty) QVERIFY(l.rate.low > 0);
        }
        for (size_t g : gpus) QVERIFY(r->gpus[g].rate.low > 0);
    }

    void allGatherNamesSourceAndDestinationOfDifferingBlocks()
    {
        // The link 2->3 corrupts what crosses it; every differing block arrived at rank 3 or
        // downstream of it on a ring that uses 2->3, never at rank 2 itself.
        auto r =
            runCollectiveReplay(options(group(8, {{2, "sim:healthy:link_to=3,link_bit=30"}}), "all_gather"));
        QVERIFY2(r, r ? "" : r.message().c_str());
        size_t blocks = 0;
        for (const CollectiveRun& run : r->runs) {
            QCOMPARE(run.judged, std::string("exact"));
            if (run.ring == 1) QCOMPARE(run.status, RunOutcome::Ok);  // the reversed ring never uses 2->3
            for (const auto& [src, dst] : run.differingBlocks) {
                QVERIFY(src < 8 && dst < 8);
                QVERIFY(dst != src && dst != 2);
                ++blocks;
            }
        }
        QVERIFY(blocks > 0);
    }

    void invariantsOfAllReduce()
    {
        // Sums of normal inputs are judged against the golden model within its bound; max is
        // exact in any order and judged bitwise; an exact-input reduce_scatter bitwise.
        auto r = runCollectiveReplay(options(group(4, {}), ""));
        QVERIFY(!r);  // the trace's ops have 8 ranks
        QVERIFY(r.message().find("8 rank input(s) but 4 targets") != std::string::npos);
        auto ok = runCollectiveReplay(options(group(8, {})));
        QVERIFY2(ok, ok ? "" : ok.message().c_str());
        std::map<size_t, std::string> judged;
        for (const CollectiveRun& run : ok->runs) judged[run.opIndex] = run.judged;
        QCOMPARE(judged[0], std::string("identical+bound"));
        QCOMPARE(judged[1], std::string("exact"));
        QCOMPARE(judged[3], std::string("bitwise"));
        QCOMPARE(judged[4], std::string("exact"));
        QCOMPARE(judged[5], std::string("identical+bitwise"));
        QVERIFY(!judged.count(2));
        QCOMPARE(ok->warnings.size(), size_t(1));  // the gemm, not a collective
    }

    void judgementCatchesWrongOutputs()
    {
        // The judgement itself, on outputs changed after the run: one bit of one rank.
        auto setup = prepareCollectiveReplay(options(group(8, {})));
        QVERIFY2(setup, setup ? "" : setup.message().c_str());
        for (const CollectiveProblem& p : setup->problems) {
            const RingPlan plan = planRing(p, setup->rings[0]);
            std::vector<RingRank> ranks;
            for (size_t r = 0; r < 8; ++r) {
                auto rank = RingRank::create(group(8, {}), r, 1);
                QVERIFY(rank);
                ranks.push_back(std::move(*rank));
            }
            for (RingRank& rank : ranks) rank.begin(p, &plan, 0);
            for (size_t t = 0; t < plan.transfers.size(); ++t) {
                const RingArrival a =
                    ranks[plan.transfers[t].dst].receive(t, ranks[plan.transfers[t].src].send(t));
                QCOMPARE(a.differingBytes, uint64_t(0));
            }
            std::vector<HostTensor> outputs;
            for (RingRank& rank : ranks) outputs.push_back(rank.output());
            CollectiveRun clean;
            judgeCollectiveRun(p, outputs, clean);
            QCOMPARE(clean.status, RunOutcome::Ok);
            outputs[6].data[3] ^= std::byte{0x40};
            CollectiveRun broken;
            judgeCollectiveRun(p, outputs, broken);
            QCOMPARE(broken.status, RunOutcome::Mismatch);
            QCOMPARE(collectiveStatusName(broken.status), std::string("diverged"));
            QCOMPARE(broken.ranksOff, std::vector<size_t>{6});
            if (p.kind == CollectiveKind::AllReduce) QVERIFY(!broken.identical);
            if (p.kind == CollectiveKind::AllGather) QCOMPARE(broken.differingBlocks, (Links{{0, 6}}));
            if (p.kind == CollectiveKind::Broadcast) QCOMPARE(broken.differingBlocks, (Links{{3, 6}}));
        }
    }

    void scheduleMovesEveryChunk()
    {
        // Each ring step sends at most one chunk per rank; all_reduce takes 2(N-1) steps of N
        // transfers, all_gather N-1, broadcast a chain of N-1 hops per segment.
        auto setup = prepareCollectiveReplay(options(group(8, {})));
        QVERIFY(setup);
        for (const CollectiveProblem& p : setup->problems) {
            const RingPlan plan = planRing(p, {0, 2, 4, 6, 1, 3, 5, 7});
            size_t expected = p.kind == CollectiveKind::AllReduce   ? 2 * 7 * 8
                              : p.kind == CollectiveKind::Broadcast ? 8 * 7
                                                                    : 7 * 8;
            QCOMPARE(plan.transfers.size(), expected);
            std::map<std::pair<size_t, size_t>, int> sendsPerStep;
            for (const RingTransfer& t : plan.transfers) {
                const std::pair<size_t, size_t> key(t.step, t.src);
                QVERIFY(++sendsPerStep[key] == 1);
                const std::vector<size_t> ring = plan.ring;
                const size_t pos = size_t(std::find(ring.begin(), ring.end(), t.src) - ring.begin());
                QCOMPARE(t.dst, ring[(pos + 1) % 8]);
            }
        }
    }

    void badSetupsAreErrors_data()
    {
        QTest::addColumn<std::vector<std::string>>("targets");
        QTest::addColumn<QString>("ops");
        QTest::addColumn<std::vector<size_t>>("ring");
        QTest::addColumn<QString>("message");
        QTest::newRow("one target") << group(1, {}) << "" << std::vector<size_t>{} << "at least two targets";
        QTest::newRow("rank count") << group(7, {}) << "all_reduce" << std::vector<size_t>{}
                                    << "but 7 targets";
        QTest::newRow("no collective") << group(8, {}) << "2" << std::vector<size_t>{} << "no collective op";
        QTest::newRow("ring repeats a rank")
            << group(8, {}) << "" << std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 6}
            << "not an order of the ranks";
        QTest::newRow("ring too short") << group(8, {}) << "" << std::vector<size_t>{0, 1} << "not an order";
        QTest::newRow("cuda target") << group(8, {{2, "cuda:0"}}) << "" << std::vector<size_t>{} << "cuda:0";
        QTest::newRow("link to itself") << group(8, {{2, "sim:healthy:link_to=2,link_rate=0.1"}}) << ""
                                        << std::vector<size_t>{} << "this rank itself";
    }
    void badSetupsAreErrors()
    {
        QFETCH(std::vector<std::string>, targets);
        QFETCH(QString, ops);
        QFETCH(std::vector<size_t>, ring);
        QFETCH(QString, message);
        CollectiveOptions o = options(targets, ops.toStdString());
        o.ring = ring;
        auto r = runCollectiveReplay(o);
        QVERIFY(!r);
        QVERIFY2(r.message().find(message.toStdString()) != std::string::npos, r.message().c_str());
        QCOMPARE(r.error().code, ErrorCode::Usage);
    }

    void aTraceOfOtherRankCountIsAnErrorNamingTheFile()
    {
        const std::string path = m_dir.filePath("bad.h5").toStdString();
        QCOMPARE(QString::fromStdString(test::writeCollectiveTrace(path, 8, 5)), QString());
        auto r = runCollectiveReplay([&] {
            CollectiveOptions o = options(group(8, {}), "all_gather");
            o.tracePath = path;
            return o;
        }());
        QVERIFY(!r);
        QVERIFY2(r.message().find(path) != std::string::npos, r.message().c_str());
        QVERIFY2(r.message().find("op 1 (all_gather)") != std::string::npos, r.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestCollectiveReplay)
#include "test_collective_replay.moc"
