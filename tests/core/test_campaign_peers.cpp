// Bitwise evidence in campaign summaries: peers (targets with the same peer key) judged against
// a majority or a reference target, runs golden-exact targets leave out of that, and on-device
// repetition checks held against the host's digests.
#include <QtTest>

#include "core/replay/Campaign.h"
#include "core/replay/GoldenExact.h"
#include "core/replay/SimLibrary.h"
#include "test_campaign_helpers.h"

using namespace faultline;
using faultline::test::statsOf;
using faultline::test::summaryOf;

namespace {

const std::string kKey = "NVIDIA H200, 132 SMs, sm_90, driver 13000, runtime 13000, cuBLAS 130100";

// A completed run of op 0 that stayed inside the golden bound, with the given output digest.
RunRecord peerRun(const std::string& target, uint32_t rep, const std::string& digest,
                  const std::string& key = kKey)
{
    RunRecord r;
    r.target = target;
    r.opIndex = 0;
    r.op = "gemm";
    r.rep = rep;
    r.outcome = RunOutcome::Ok;
    r.digest = digest;
    r.peerKey = key;
    return r;
}

bool warned(const CampaignReport& r, const std::string& part)
{
    for (const std::string& w : r.warnings)
        if (w.find(part) != std::string::npos) return true;
    return false;
}

HostTensor floats(std::vector<uint32_t> bits)
{
    HostTensor t(DType::Float32, {bits.size()});
    for (size_t i = 0; i < bits.size(); ++i) setElementBits(t, i, bits[i]);
    return t;
}

}  // namespace

class TestCampaignPeers : public QObject {
    Q_OBJECT

private slots:
    void majorityFindsTheOddPeerInsideTheBound()
    {
        std::vector<RunRecord> runs;
        for (uint32_t rep = 0; rep < 3; ++rep) {
            runs.push_back(peerRun("cuda:0", rep, "d0"));
            runs.push_back(peerRun("cuda:1", rep, "d0"));
            runs.push_back(peerRun("cuda:2", rep, rep == 2 ? "d1" : "d0"));  // differs once, inside the bound
        }
        const CampaignReport r = summarizeCampaign(runs, {"cuda:0", "cuda:1", "cuda:2"}, {});
        QCOMPARE(r.peers.size(), size_t(1));
        const PeerGroup& g = r.peers[0];
        QCOMPARE(g.basis, PeerBasis::Majority);
        QCOMPARE(g.digest, std::string("d0"));
        QCOMPARE(g.agreeing, (std::vector<std::string>{"cuda:0", "cuda:1"}));
        QCOMPARE(g.differing, (std::vector<std::string>{"cuda:2"}));
        QCOMPARE(statsOf(r, "cuda:2").peerMismatches, uint64_t(1));
        QCOMPARE(statsOf(r, "cuda:2").failures, uint64_t(1));
        QCOMPARE(statsOf(r, "cuda:0").failures, uint64_t(0));
        QCOMPARE(summaryOf(r, "cuda:2").verdict, Verdict::Transient);
        QVERIFY(summaryOf(r, "cuda:2").explanation.find("bitwise different from its peers") !=
                std::string::npos);
        QCOMPARE(summaryOf(r, "cuda:0").verdict, Verdict::Healthy);
        QCOMPARE(summaryOf(r, "cuda:0").peerKey, kKey);
        QCOMPARE(
            summaryOf(r, "cuda:0").explanation,
            std::string(
                "all 3 runs within the golden model's bounds; no failure in 3 runs: rate < 63.2% at 95%"));
        // The run that differs carries the judgement; the others are equal.
        size_t unequal = 0;
        for (const RunRecord& run : r.runs) {
            QCOMPARE(run.vsPeers.value("basis", std::string()), std::string("majority"));
            QCOMPARE(run.vsPeers.value("peers", 0), 3);
            if (!run.vsPeers.value("equal", true)) {
                ++unequal;
                QCOMPARE(run.target, std::string("cuda:2"));
                QCOMPARE(run.rep, 2u);
            }
        }
        QCOMPARE(unequal, size_t(1));

        // When every repetition differs it reproduces and no other target fails: device-specific.
        for (RunRecord& run : runs)
            if (run.target == "cuda:2") run.digest = "d1";
        const CampaignReport all = summarizeCampaign(runs, {"cuda:0", "cuda:1", "cuda:2"}, {});
        QCOMPARE(summaryOf(all, "cuda:2").verdict, Verdict::DeviceSpecific);
        QCOMPARE(summaryOf(all, "cuda:2").failures, uint64_t(3));
        // Still a certified deterministic device: it is consistently wrong.
        QVERIFY(summaryOf(all, "cuda:2").deterministic);
    }

    void twoPeersNeedAReference()
    {
        std::vector<RunRecord> runs;
        for (uint32_t rep = 0; rep < 2; ++rep) {
            runs.push_back(peerRun("cuda:0", rep, "d0"));
            runs.push_back(peerRun("cuda:1", rep, "d1"));
        }
        // No majority between two: undecided, said plainly, and nobody is blamed.
        CampaignReport r = summarizeCampaign(runs, {"cuda:0", "cuda:1"}, {});
        QCOMPARE(r.peers.size(), size_t(1));
        QCOMPARE(r.peers[0].basis, PeerBasis::None);
        QVERIFY(r.peers[0].agreeing.empty());
        QCOMPARE(r.peers[0].differing.size(), size_t(2));
        QVERIFY(warned(r, "--reference"));
        for (const std::string t : {"cuda:0", "cuda:1"}) {
            QCOMPARE(summaryOf(r, t).verdict, Verdict::Healthy);
            QCOMPARE(summaryOf(r, t).peerSplitOps, std::vector<size_t>{0});
        }
        for (const RunRecord& run : r.runs) QVERIFY(!run.vsPeers.contains("equal"));

        // With cuda:0 as the reference, cuda:1 fails every run.
        r = summarizeCampaign(runs, {"cuda:0", "cuda:1"}, {}, "cuda:0");
        QCOMPARE(r.peers[0].basis, PeerBasis::Reference);
        QCOMPARE(r.peers[0].differing, std::vector<std::string>{"cuda:1"});
        QCOMPARE(summaryOf(r, "cuda:1").verdict, Verdict::DeviceSpecific);
        QCOMPARE(summaryOf(r, "cuda:1").failures, uint64_t(2));
        QCOMPARE(summaryOf(r, "cuda:0").verdict, Verdict::Healthy);
        QVERIFY(summaryOf(r, "cuda:0").peerSplitOps.empty());
        // ... and the other way round.
        r = summarizeCampaign(runs, {"cuda:0", "cuda:1"}, {}, "cuda:1");
        QCOMPARE(summaryOf(r, "cuda:0").failures, uint64_t(2));
        QCOMPARE(summaryOf(r, "cuda:1").failures, uint64_t(0));

        // A reference that does not reproduce its own bits decides nothing.
        runs.push_back(peerRun("cuda:0", 2, "d2"));
        r = summarizeCampaign(runs, {"cuda:0", "cuda:1"}, {}, "cuda:0");
        QCOMPARE(r.peers[0].basis, PeerBasis::None);
        QVERIFY(warned(r, "the reference cuda:0 gave 2 different outputs"));
        QCOMPARE(summaryOf(r, "cuda:1").failures, uint64_t(0));
    }

    void onlyTrueNonGoldenPeersAreGrouped()
    {
        std::vector<RunRecord> runs;
        for (uint32_t rep = 0; rep < 2; ++rep) {
            runs.push_back(peerRun("cuda:0", rep, "d0"));
            runs.push_back(peerRun("cuda:1", rep, "d1", "NVIDIA H100, 132 SMs, sm_90"));  // another SKU
            runs.push_back(peerRun("cuda:2", rep, "d2"));
            runs.back().goldenExact = true;  // judged by bits against the golden model already
            runs.push_back(peerRun("sim:flip", rep, "d3", ""));  // no peers at all
        }
        const CampaignReport r = summarizeCampaign(runs, {"cuda:0", "cuda:1", "cuda:2", "sim:flip"}, {});
        QVERIFY(r.peers.empty());
        QCOMPARE(
            summaryOf(r, "cuda:2").explanation,
            std::string(
                "all 2 runs bit-identical to the golden model; no failure in 2 runs: rate < 77.7% at 95%"));
        for (const TargetSummary& t : r.targets) QCOMPARE(t.failures, uint64_t(0));
        for (const RunRecord& run : r.runs) QVERIFY(run.vsPeers.is_null());
        // Failed runs (no digest) are not votes.
        runs.clear();
        runs.push_back(peerRun("cuda:0", 0, "d0"));
        runs.push_back(peerRun("cuda:1", 0, ""));
        runs.back().outcome = RunOutcome::Hang;
        QVERIFY(summarizeCampaign(runs, {"cuda:0", "cuda:1"}, {}).peers.empty());
    }

    void onDeviceRepeatChecksMeetTheHostDigests()
    {
        auto rep = [](uint32_t r, const std::string& digest, uint64_t mismatched) {
            RunRecord run = peerRun("cuda:0", r, digest, "");
            if (r > 0) run.vsRep = {{"rep", 0}, {"mismatched", mismatched}, {"flipped_bits", 3 * mismatched}};
            return run;
        };
        // Consistent: rep 1 equal on both sides, rep 2 different on both sides.
        CampaignReport r =
            summarizeCampaign({rep(0, "a", 0), rep(1, "a", 0), rep(2, "b", 4)}, {"cuda:0"}, {});
        QCOMPARE(statsOf(r, "cuda:0").repDiffering, uint64_t(1));
        QCOMPARE(statsOf(r, "cuda:0").repMaxFlippedBits, uint64_t(12));
        QCOMPARE(statsOf(r, "cuda:0").transferMismatches, uint64_t(0));
        QVERIFY(r.warnings.empty());
        QVERIFY(!summaryOf(r, "cuda:0").deterministic);

        // Equal on the device, different on the host: the copy changed the bits.
        r = summarizeCampaign({rep(0, "a", 0), rep(1, "b", 0)}, {"cuda:0"}, {});
        QCOMPARE(statsOf(r, "cuda:0").transferMismatches, uint64_t(1));
        QVERIFY(warned(
            r, "op 0 rep 1 on cuda:0: identical to rep 0 on the device, but the copy on the host differs"));

        // Different on the device, identical on the host: the device comparison is wrong, and the
        // device is not certified deterministic although the digests agree.
        r = summarizeCampaign({rep(0, "a", 0), rep(1, "a", 2)}, {"cuda:0"}, {});
        QCOMPARE(statsOf(r, "cuda:0").transferMismatches, uint64_t(1));
        QVERIFY(warned(r, "the device found 2 element(s) different from rep 0"));
        QVERIFY(!summaryOf(r, "cuda:0").deterministic);
        QCOMPARE(statsOf(r, "cuda:0").distinctDigests, uint64_t(1));

        // A check against a repetition that is not in the campaign proves nothing either way.
        r = summarizeCampaign({rep(1, "b", 0)}, {"cuda:0"}, {});
        QCOMPARE(statsOf(r, "cuda:0").transferMismatches, uint64_t(0));
        QVERIFY(r.warnings.empty());
    }

    void reportAndJournalCarryTheEvidence()
    {
        std::vector<RunRecord> runs;
        for (uint32_t rep = 0; rep < 2; ++rep) {
            runs.push_back(peerRun("cuda:0", rep, "d0"));
            runs.push_back(peerRun("cuda:1", rep, rep ? "d1" : "d0"));
            if (rep) runs.back().vsRep = {{"rep", 0}, {"mismatched", 5}, {"flipped_bits", 9}};
        }
        const CampaignReport r = summarizeCampaign(runs, {"cuda:0", "cuda:1"}, {}, "cuda:0");
        const nlohmann::json j = campaignJson(r);
        QCOMPARE(j["reference"].get<std::string>(), std::string("cuda:0"));
        QCOMPARE(j["targets"][0]["peer_key"].get<std::string>(), kKey);
        const nlohmann::json& op = j["ops"][0];
        QCOMPARE(op["peers"].size(), size_t(1));
        QCOMPARE(op["peers"][0]["basis"].get<std::string>(), std::string("reference"));
        QCOMPARE(op["peers"][0]["differing"][0].get<std::string>(), std::string("cuda:1"));
        QCOMPARE(op["targets"]["cuda:1"]["peer_mismatches"].get<int>(), 1);
        QCOMPARE(op["targets"]["cuda:1"]["on_device_repeat"]["differing"].get<int>(), 1);
        QCOMPARE(op["targets"]["cuda:1"]["on_device_repeat"]["max_flipped_bits"].get<int>(), 9);
        QVERIFY(!op["targets"]["cuda:0"].contains("on_device_repeat"));
        const std::string text = campaignText(r);
        QVERIFY2(text.find("peers (" + kKey + "): by reference, bitwise different: cuda:1 (op 0)") !=
                     std::string::npos,
                 text.c_str());

        // What a journal line keeps comes back whole.
        RunRecord in = runs.back();
        in.goldenExact = true;
        in.vsPeers = {{"basis", "majority"}, {"equal", false}, {"peers", 2}};
        auto back = RunRecord::fromJson(nlohmann::json::parse(in.toJson().dump()));
        QVERIFY(back);
        QCOMPARE(back->peerKey, kKey);
        QVERIFY(back->goldenExact);
        QCOMPARE(back->vsRep, in.vsRep);
        QCOMPARE(back->vsPeers, in.vsPeers);
        QVERIFY(back->failedOrPeerMismatch());
        // Numbers of the wrong kind make the line unreadable instead of being converted (a
        // floating-point value out of an integer's range would be undefined behaviour).
        const nlohmann::json base = {{"target", "cpu"}, {"op_index", 0}, {"rep", 0}, {"outcome", "ok"}};
        for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
                 {"op_index", 1.8e20},
                 {"op_index", -1},
                 {"rep", 4294967296u},
                 {"rep", 0.5},
                 {"injected", "many"},
                 {"vs_golden", {{"max_ulp", 1e30}}},
                 {"vs_golden", {{"signature", 3}}},
                 {"tile_sm", {{"tile", 1e12}, {"rows", 1}, {"cols", 1}, {"sm", {0}}}},
                 {"tile_sm", {{"tile", 1}, {"rows", 1}, {"cols", 1}, {"sm", {3e9}}}}}) {
            nlohmann::json bad = base;
            bad[key] = value;
            QVERIFY2(!RunRecord::fromJson(bad), bad.dump().c_str());
        }
        QVERIFY(RunRecord::fromJson(base));
        // A journal from before these fields reads as a bound-judged run without peers.
        auto old = RunRecord::fromJson({{"target", "cpu"}, {"op_index", 0}, {"rep", 0}, {"outcome", "ok"}});
        QVERIFY(old);
        QVERIFY(!old->goldenExact);
        QVERIFY(old->peerKey.empty());
        QVERIFY(!old->failedOrPeerMismatch());
    }

    void goldenContractEquality()
    {
        // Identical bits, or NaN on both sides whatever the payload; nothing else.
        const HostTensor golden = floats({0x3f800000u, 0x7fc00000u, 0x00000000u, 0x7f800000u});
        QCOMPARE(goldenDifferingElements(golden, golden), uint64_t(0));
        QCOMPARE(goldenDifferingElements(floats({0x3f800000u, 0x7fffffffu, 0, 0x7f800000u}), golden),
                 uint64_t(0));
        QCOMPARE(
            goldenDifferingElements(floats({0x3f800001u, 0x7fc00000u, 0x80000000u, 0x7fc00000u}), golden),
            uint64_t(3));  // 1 ulp, -0 vs +0, NaN vs inf
        // Narrow formats use their own NaN encodings.
        QVERIFY(isNanBits(DType::BFloat16, 0x7fc1));
        QVERIFY(!isNanBits(DType::BFloat16, 0x7f80));
        QVERIFY(isNanBits(DType::Float8E4M3FN, 0xff));
        QVERIFY(!isNanBits(DType::Float8E4M3FN, 0x7e));  // 448, the largest finite
        QVERIFY(isNanBits(DType::Float8E5M2, 0x7e));
        QVERIFY(!isNanBits(DType::Int32, 0x7fffffff));
        // A shape or dtype mismatch counts every element.
        QCOMPARE(goldenDifferingElements(HostTensor(DType::Float16, {4}), golden), uint64_t(4));
    }

    void simulatedBlasIsDeterministicNonGoldenAndSmall()
    {
        HostTensor golden(DType::Float32, {64, 64});
        for (uint64_t i = 0; i < golden.elementCount(); ++i)
            golden.as<float>()[i] = 0.5f + float(i % 37) * 0.25f;
        golden.as<float>()[3] = 0.0f;
        HostTensor a = golden, b = golden;
        const uint64_t changed = applySimLibrary(SimLibrary::Blas, "gemm", 7, a);
        applySimLibrary(SimLibrary::Blas, "gemm", 7, b);
        QCOMPARE(goldenDifferingElements(a, b), uint64_t(0));  // the same every run: peers agree
        QCOMPARE(goldenDifferingElements(a, golden), changed);
        QVERIFY2(changed > 700 && changed < 1350, std::to_string(changed).c_str());  // about a quarter
        for (uint64_t i = 0; i < a.elementCount(); ++i) {
            const uint32_t x = uint32_t(elementBits(a, i)), g = uint32_t(elementBits(golden, i));
            QVERIFY(x == g || x + 1 == g);  // one ulp towards zero at most
        }
        QCOMPARE(elementBits(a, 3), uint64_t(0));  // zeros stay zero
        // Another op index chooses other elements; other ops and the golden library change nothing.
        HostTensor c = golden;
        applySimLibrary(SimLibrary::Blas, "gemm", 8, c);
        QVERIFY(goldenDifferingElements(a, c) > 0);
        c = golden;
        QCOMPARE(applySimLibrary(SimLibrary::Blas, "softmax", 7, c), uint64_t(0));
        QCOMPARE(applySimLibrary(SimLibrary::Golden, "gemm", 7, c), uint64_t(0));
        QVERIFY(!simLibraryIsGoldenExact(SimLibrary::Blas, "gemm"));
        QVERIFY(simLibraryIsGoldenExact(SimLibrary::Blas, "softmax"));
        QCOMPARE(simLibraryPeerKey(SimLibrary::Golden), std::string());
        QVERIFY(!simLibraryPeerKey(SimLibrary::Blas).empty());
        auto spec = parseTargetSpec("sim:healthy:library=cublas");
        QVERIFY(spec);
        auto bad = simLibraryOf(*spec);
        QVERIFY(!bad);
        QVERIFY2(bad.message().find("library must be golden or blas") != std::string::npos,
                 bad.message().c_str());
    }
};

QTEST_APPLESS_MAIN(TestCampaignPeers)
#include "test_campaign_peers.moc"
