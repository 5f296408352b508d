// serveWorkerRequests and a target that compares repetitions where it keeps them (a cuda target
// keeps the first repetition on the device): the reply carries "vs_rep" with the comparison's
// counts exactly as the target gave them, null for a max error that is not finite (JSON has no
// infinity), and no "vs_rep" when the target made no comparison. The hello carries the target's
// peer key and every reply whether the output is golden-exact. An output found identical to the
// repetition the orchestrator holds is not written; host targets make the same check themselves.
#include <QTemporaryDir>
#include <QtTest>

#include <QFile>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/replay/HostRepeatCheck.h"
#include "core/replay/Target.h"
#include "core/replay/WorkerProtocol.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

// Repetition 0 is the reference; repetition r > 0 reports r mismatches against it (rep 2 with a
// NaN difference).
class ComparingTarget : public Target {
public:
    std::string label() const override { return "cuda:3"; }
    std::string describe() const override { return "test target"; }
    bool bitwiseStable() const override { return true; }
    std::string peerKey() const override { return "Test GPU, 4 SMs"; }
    Result<ReplayOutput> run(const ReplayRequest& request, uint64_t) override
    {
        ReplayOutput out;
        out.outputs.push_back(HostTensor(DType::Float32, {2, 2}));
        out.goldenExact = request.repetition == 1;  // as if rep 1 ran a golden kernel
        if (request.repetition > 0) {
            RepeatCheck c;
            c.againstRep = 0;
            c.mismatched = request.repetition;
            c.flippedBits = 3 * uint64_t(request.repetition);
            c.maxAbsError = request.repetition == 2 ? std::numeric_limits<double>::infinity() : 0.25;
            c.tile = 64;
            c.worstTile = 5;
            out.repeatCheck = c;
        }
        return out;
    }
};

// Repetitions after the first report a comparison with repetition 0; repetition 2 differs.
class RepeatingTarget : public Target {
public:
    // cheat: claims every later repetition was omitted, offered or not.
    explicit RepeatingTarget(size_t outputs, bool cheat = false) : m_outputs(outputs), m_cheat(cheat) {}
    std::string label() const override { return "cuda:0"; }
    std::string describe() const override { return "test target"; }
    bool bitwiseStable() const override { return true; }
    Result<ReplayOutput> run(const ReplayRequest& request, uint64_t) override
    {
        ReplayOutput out;
        for (size_t i = 0; i < m_outputs; ++i) out.outputs.push_back(HostTensor(DType::Float32, {4}));
        if (request.repetition > 0) {
            RepeatCheck c;
            c.againstRep = 0;
            c.mismatched = request.repetition == 2 ? 1 : 0;
            out.repeatCheck = c;
        }
        out.outputOmitted = mayOmitOutput(request, out.repeatCheck, out.outputs.size()) ||
                            (m_cheat && request.repetition > 0);
        if (out.outputOmitted) out.outputs[0].data.clear();  // as a cuda target that fetched nothing
        return out;
    }

private:
    size_t m_outputs;
    bool m_cheat;
};

HostTensor floats(std::vector<float> v)
{
    HostTensor t(DType::Float32, {v.size()});
    std::memcpy(t.data.data(), v.data(), v.size() * 4);
    return t;
}

}  // namespace

class TestWorkerRepeatCheck : public QObject {
    Q_OBJECT

private slots:
    void replyCarriesTheDeviceComparison()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Trace trace = faultline::test::oneOpTrace();
        const std::string out = dir.filePath("o.safetensors").toStdString();
        std::string requests;
        for (int rep = 0; rep < 3; ++rep)
            requests += nlohmann::json{{"id", rep + 1}, {"op", 0}, {"rep", rep}, {"out", out}}.dump() + "\n";
        std::istringstream in(requests);
        std::ostringstream replies;
        ComparingTarget target;
        QCOMPARE(serveWorkerRequests(in, replies, target, trace), 0);
        const auto r = faultline::test::jsonLines(replies.str());
        QCOMPARE(r.size(), size_t(4));  // hello + 3 replies
        for (size_t i = 1; i < 4; ++i) QVERIFY2(r[i].value("ok", false), r[i].dump().c_str());
        QVERIFY(!r[1].contains("vs_rep"));
        // The hello names the target's peers; each reply says how its output is to be judged.
        QCOMPARE(r[0].value("peer_key", std::string()), std::string("Test GPU, 4 SMs"));
        QCOMPARE(r[1]["golden_exact"].get<bool>(), false);
        QCOMPARE(r[2]["golden_exact"].get<bool>(), true);
        const auto& one = r[2]["vs_rep"];
        QCOMPARE(one["rep"].get<int>(), 0);
        QCOMPARE(one["mismatched"].get<int>(), 1);
        QCOMPARE(one["flipped_bits"].get<int>(), 3);
        QCOMPARE(one["max_abs_error"].get<double>(), 0.25);
        QCOMPARE(one["tile"].get<int>(), 64);
        QCOMPARE(one["worst_tile"].get<int>(), 5);
        const auto& two = r[3]["vs_rep"];
        QCOMPARE(two["mismatched"].get<int>(), 2);
        QVERIFY(two["max_abs_error"].is_null());
    }

    void identicalOutputsAreNotWrittenWhenTheOrchestratorHoldsThem()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Trace trace = faultline::test::oneOpTrace();
        // rep 0 (no check), rep 1 identical to 0, rep 2 different, rep 3 identical but the
        // orchestrator offers rep 7, rep 1 again identical without an offer.
        const std::vector<std::pair<int, int>> plan = {{0, 0}, {1, 0}, {2, 0}, {3, 7}, {1, -1}};
        for (size_t outputs : {size_t(1), size_t(2)}) {
            std::string requests;
            std::vector<QString> paths;
            for (size_t i = 0; i < plan.size(); ++i) {
                paths.push_back(dir.filePath(QString("o-%1-%2.safetensors").arg(outputs).arg(i)));
                nlohmann::json req = {
                    {"id", i + 1}, {"op", 0}, {"rep", plan[i].first}, {"out", paths.back().toStdString()}};
                if (plan[i].second >= 0) req["skip_if_identical_to"] = plan[i].second;
                requests += req.dump() + "\n";
            }
            std::istringstream in(requests);
            std::ostringstream replies;
            RepeatingTarget target(outputs);
            QCOMPARE(serveWorkerRequests(in, replies, target, trace), 0);
            const auto r = faultline::test::jsonLines(replies.str());
            QCOMPARE(r.size(), plan.size() + 1);
            for (size_t i = 0; i < plan.size(); ++i) {
                // Only rep 1 with the matching offer, and only for a single output, is skipped.
                const bool skipped = i == 1 && outputs == 1;
                QVERIFY2(r[i + 1].value("ok", false), r[i + 1].dump().c_str());
                QCOMPARE(QFile::exists(paths[i]), !skipped);
                QCOMPARE(r[i + 1].contains("identical_to_rep"), skipped);
                if (skipped) QCOMPARE(r[i + 1]["identical_to_rep"].get<int>(), 0);
                QCOMPARE(r[i + 1]["outputs"].get<size_t>(), outputs);
            }
        }
    }

    void anOmissionNobodyOfferedIsAnError()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Trace trace = faultline::test::oneOpTrace();
        const std::string out = dir.filePath("o.safetensors").toStdString();
        std::istringstream in(nlohmann::json{{"id", 1}, {"op", 0}, {"rep", 0}, {"out", out}}.dump() + "\n" +
                              nlohmann::json{{"id", 2}, {"op", 0}, {"rep", 1}, {"out", out}}.dump() + "\n");
        std::ostringstream replies;
        RepeatingTarget target(1, true);
        QCOMPARE(serveWorkerRequests(in, replies, target, trace), 0);
        const auto r = faultline::test::jsonLines(replies.str());
        QVERIFY(r[1].value("ok", false));
        QVERIFY(!r[2].value("ok", true));
        QVERIFY2(r[2].value("error", std::string()).find("omitted an output") != std::string::npos,
                 r[2].dump().c_str());
    }

    void hostTargetsCompareTheirOwnRepetitions()
    {
        HostRepeatCheck keeper;
        const HostTensor a = floats({1.0f, 2.0f, -0.0f, 4.0f});
        QVERIFY(!keeper.check(3, 0, a));  // the first repetition is kept
        auto same = keeper.check(3, 1, a);
        QVERIFY(same);
        QCOMPARE(same->againstRep, 0u);
        QCOMPARE(same->mismatched, uint64_t(0));
        QCOMPARE(same->maxAbsError, 0.0);
        // One flipped mantissa bit and a sign flip of zero: 2 elements, 2 bits, max error from the first.
        HostTensor b = a;
        setElementBits(b, 1, elementBits(b, 1) ^ 0x4u);
        setElementBits(b, 2, 0);
        auto diff = keeper.check(3, 2, b);
        QVERIFY(diff);
        QCOMPARE(diff->mismatched, uint64_t(2));
        QCOMPARE(diff->flippedBits, uint64_t(2));
        QCOMPARE(diff->maxAbsError, double(std::nextafter(2.0f, 3.0f) - 2.0f) * 4);
        QCOMPARE(diff->worstTile, int64_t(-1));
        // A NaN that appears makes the error infinite (written as null in the reply).
        HostTensor c = a;
        setElementBits(c, 0, 0x7fc00000u);
        QVERIFY(std::isinf(keeper.check(3, 3, c)->maxAbsError));
        // The same repetition again, or another op, starts over.
        QVERIFY(!keeper.check(3, 0, b));
        QCOMPARE(keeper.check(3, 1, b)->mismatched, uint64_t(0));
        QVERIFY(!keeper.check(4, 1, a));
        // Different shapes count every element.
        QCOMPARE(compareRepetitions(HostTensor(DType::Float32, {5}), a, 0).mismatched, uint64_t(5));
    }
};

QTEST_APPLESS_MAIN(TestWorkerRepeatCheck)
#include "test_worker_repeat_check.moc"
