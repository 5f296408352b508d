// serveWorkerRequests and a target that compares repetitions where it keeps them (a cuda target
// keeps the first repetition on the device): the reply carries "vs_rep" with the comparison's
// counts exactly as the target gave them, null for a max error that is not finite (JSON has no
// infinity), and no "vs_rep" when the target made no comparison. The hello carries the target's
// peer key and every reply whether the output is golden-exact.
#include <QTemporaryDir>
#include <QtTest>

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/io/MemoryTensorFile.h"
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

}  // namespace

class TestWorkerRepeatCheck : public QObject {
    Q_OBJECT

private slots:
    void replyCarriesTheDeviceComparison()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        Trace trace;
        trace.file = std::make_shared<MemoryTensorFile>();
        TraceOp op;
        op.index = 0;
        op.op = "gemm";
        trace.ops.push_back(op);
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
};

QTEST_APPLESS_MAIN(TestWorkerRepeatCheck)
#include "test_worker_repeat_check.moc"
