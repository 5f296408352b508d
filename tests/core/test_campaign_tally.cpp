// Campaign summaries added up run by run (CampaignTally): the counts are exact however many runs
// there are, while what is held stays bounded by ops x targets: the runs listed stop growing past
// kRunsKeptInFull, distinct outputs are counted up to their cap, and peers, repetition checks
// and verdicts still come out right when most runs were not kept.
#include <QtTest>
#include <random>
#include <set>
#include <tuple>

#include "core/replay/CampaignTally.h"
#include "core/replay/RunKeySet.h"
#include "test_campaign_helpers.h"

using namespace faultline;
using faultline::test::statsOf;
using faultline::test::summaryOf;

namespace {

const std::string kKey = "NVIDIA H200, 132 SMs, sm_90, driver 13000, runtime 13000, cuBLAS 130100";

RunRecord run(const std::string& target, size_t op, uint32_t rep, const std::string& digest,
              RunOutcome outcome = RunOutcome::Ok)
{
    RunRecord r;
    r.target = target;
    r.opIndex = op;
    r.op = "gemm";
    r.rep = rep;
    r.outcome = outcome;
    r.digest = digest;
    r.peerKey = kKey;
    if (outcome == RunOutcome::Mismatch) r.vsGolden = {{"signature", "stuck_bit"}, {"max_ulp", 4096}};
    return r;
}

}  // namespace

class TestCampaignTally : public QObject {
    Q_OBJECT

private slots:
    void runKeySetAgreesWithASet()
    {
        std::mt19937 rng(7);
        RunKeySet keys;
        std::set<std::tuple<std::string, size_t, uint32_t>> reference;
        for (int i = 0; i < 20000; ++i) {
            const std::string target = rng() % 2 ? "cpu" : "sim:healthy";
            const size_t op = rng() % 3;
            const uint32_t rep = rng() % 500;
            QCOMPARE(keys.insert(target, op, rep), reference.insert({target, op, rep}).second);
        }
        QCOMPARE(keys.size(), uint64_t(reference.size()));
        for (const std::string target : {"cpu", "sim:healthy", "cuda:0"})
            for (size_t op = 0; op < 4; ++op)
                for (uint32_t rep = 0; rep < 510; ++rep)
                    QCOMPARE(keys.contains(target, op, rep), reference.count({target, op, rep}) == 1);
    }

    void runKeySetJoinsRanges()
    {
        RunKeySet keys;
        QVERIFY(keys.insert("cpu", 0, 2));
        QVERIFY(keys.insert("cpu", 0, 0));
        QVERIFY(!keys.contains("cpu", 0, 1));
        QVERIFY(keys.insert("cpu", 0, 1));  // joins [0,1) and [2,3)
        QVERIFY(!keys.insert("cpu", 0, 1));
        for (uint32_t rep = 0; rep < 3; ++rep) QVERIFY(keys.contains("cpu", 0, rep));
        QVERIFY(!keys.contains("cpu", 0, 3));
        QVERIFY(!keys.contains("cpu", 1, 0));
        QCOMPARE(keys.size(), uint64_t(3));
    }

    // 60,000 runs of three peers: the summary counts every one, lists a bounded number, and the
    // peer that differs now and then is still found by its runs that were not kept.
    void countsEveryRunAndListsABoundedNumber()
    {
        CampaignTally tally;
        const uint32_t reps = 20000;
        uint64_t odd = 0, failed = 0;
        for (uint32_t rep = 0; rep < reps; ++rep) {
            tally.add(run("cuda:0", 0, rep, "good"));
            tally.add(run("cuda:1", 0, rep, "good"));
            // cuda:2: bitwise different from its peers on every 1000th rep (inside the bound), and
            // a golden mismatch on every 5000th.
            if (rep % 5000 == 4999) {
                tally.add(run("cuda:2", 0, rep, "bad" + std::to_string(rep), RunOutcome::Mismatch));
                ++failed;
            } else if (rep % 1000 == 999) {
                tally.add(run("cuda:2", 0, rep, "odd"));
                ++odd;
            } else {
                tally.add(run("cuda:2", 0, rep, "good"));
            }
        }
        QCOMPARE(tally.runs(), uint64_t(3) * reps);
        const CampaignReport r = tally.finish({"cuda:0", "cuda:1", "cuda:2"}, {}, "");
        QCOMPARE(r.runsTotal, uint64_t(3) * reps);
        QVERIFY2(r.runs.size() <= 64, std::to_string(r.runs.size()).c_str());
        const OpTargetStats& s = statsOf(r, "cuda:2");
        QCOMPARE(s.runs, uint64_t(reps));
        QCOMPARE(s.mismatches, failed);
        QCOMPARE(s.peerMismatches, odd);
        QCOMPARE(s.failures, odd + failed);
        QCOMPARE(s.distinctDigests, uint64_t(2 + failed));
        QVERIFY(!s.distinctDigestsAtLeast);
        QCOMPARE(s.signature, std::string("stuck_bit"));
        QCOMPARE(statsOf(r, "cuda:0").failures, uint64_t(0));
        QCOMPARE(summaryOf(r, "cuda:0").verdict, Verdict::Healthy);
        QCOMPARE(summaryOf(r, "cuda:2").verdict, Verdict::DeviceSpecific);
        QVERIFY(!summaryOf(r, "cuda:2").deterministic);
        QCOMPARE(r.peers.size(), size_t(1));
        QCOMPARE(r.peers[0].basis, PeerBasis::Majority);
        QCOMPARE(r.peers[0].digest, std::string("good"));
        // The listed runs: the first of each target, and of each distinct output, and the failures.
        uint64_t listedOdd = 0, listedFailed = 0;
        for (const RunRecord& listed : r.runs) {
            if (listed.digest == "odd") {
                ++listedOdd;
                QCOMPARE(listed.vsPeers.value("equal", true), false);
            }
            if (listed.failed()) ++listedFailed;
        }
        QCOMPARE(listedOdd, uint64_t(1));
        QCOMPARE(listedFailed, failed);
    }

    // Below kRunsKeptInFull every run is listed, in order of op, target and repetition.
    void listsEveryRunOfASmallCampaign()
    {
        CampaignTally tally;
        for (uint32_t rep = 5; rep-- > 0;) tally.add(run("cpu", 1, rep, "x"));
        for (uint32_t rep = 0; rep < 5; ++rep) tally.add(run("cpu", 0, rep, "y"));
        const CampaignReport r = tally.finish({"cpu"}, {}, "");
        QCOMPARE(r.runs.size(), size_t(10));
        for (size_t i = 1; i < r.runs.size(); ++i)
            QVERIFY(std::tie(r.runs[i - 1].opIndex, r.runs[i - 1].rep) <
                    std::tie(r.runs[i].opIndex, r.runs[i].rep));
    }

    // A target whose every run gives other bits: distinct outputs are a lower bound past the cap,
    // and it still differs from its peers.
    void distinctOutputsPastTheCapAreALowerBound()
    {
        CampaignTally tally;
        const uint32_t reps = uint32_t(CampaignTally::kDistinctOutputsKept) + 100;
        for (uint32_t rep = 0; rep < reps; ++rep) {
            tally.add(run("cuda:0", 0, rep, "good"));
            tally.add(run("cuda:1", 0, rep, "good"));
            tally.add(run("cuda:2", 0, rep, "noise" + std::to_string(rep)));
        }
        const CampaignReport r = tally.finish({"cuda:0", "cuda:1", "cuda:2"}, {}, "");
        const OpTargetStats& s = statsOf(r, "cuda:2");
        QCOMPARE(s.distinctDigests, uint64_t(CampaignTally::kDistinctOutputsKept));
        QVERIFY(s.distinctDigestsAtLeast);
        QCOMPARE(s.peerMismatches, uint64_t(reps));
        QCOMPARE(r.peers.at(0).differing, std::vector<std::string>{"cuda:2"});
        QCOMPARE(statsOf(r, "cuda:0").distinctDigests, uint64_t(1));
    }

    // The device compares each repetition with the one it kept (rep 0); thousands of reps later
    // the host still holds rep 0's digest, so a contradiction is found.
    void repetitionChecksHoldFarFromTheKeptRep()
    {
        CampaignTally tally;
        const uint32_t reps = 5000;
        for (uint32_t rep = 0; rep < reps; ++rep) {
            RunRecord r = run("cuda:0", 0, rep, rep == 4321 ? "changed" : "same");
            r.peerKey.clear();
            if (rep > 0) r.vsRep = {{"rep", 0}, {"mismatched", 0}, {"flipped_bits", 0}};
            tally.add(std::move(r));
        }
        const CampaignReport r = tally.finish({"cuda:0"}, {}, "");
        QCOMPARE(statsOf(r, "cuda:0").transferMismatches, uint64_t(1));
        bool warned = false;
        for (const std::string& w : r.warnings) warned = warned || w.find("rep 4321") != std::string::npos;
        QVERIFY(warned);
    }

    // Setup errors are counted per target and said once per op; they are not runs of the target.
    void setupErrorsAreNotRuns()
    {
        CampaignTally tally;
        for (uint32_t rep = 0; rep < 3; ++rep) {
            RunRecord r = run("cpu", 2, rep, "");
            r.outcome = RunOutcome::Error;
            r.setupError = true;
            r.error = "op 2: inner dimensions disagree";
            tally.add(std::move(r));
        }
        QCOMPARE(tally.executedRuns(), uint64_t(0));
        QCOMPARE(tally.unreplayable().size(), size_t(1));
        const CampaignReport r = tally.finish({"cpu"}, {}, "");
        QCOMPARE(summaryOf(r, "cpu").notReplayable, uint64_t(3));
        QCOMPARE(summaryOf(r, "cpu").verdict, Verdict::NoVerdict);
    }
};

QTEST_APPLESS_MAIN(TestCampaignTally)
#include "test_campaign_tally.moc"
