// `faultline replay` against a recorded rerun peer (issue 22): where the trace holds a healthy
// device's rerun of an op that reproduced itself, each run's output is compared with its bits
// (vs_recorded[label].bitwise_equal). A target that reproduces those bits in some runs runs the
// peer's kernel, so its runs that differ fail even inside the golden bound (rerun_mismatches); a
// target that never reproduces them (another kernel, another summation order) is judged by the
// golden model alone, with no false alarm.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/golden/OpRegistry.h"
#include "core/replay/SimLibrary.h"
#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

using namespace faultline;
using faultline::test::runFaultline;

namespace {

TensorData data(const HostTensor& t)
{
    return {t.dtype, t.shape, t.data.data()};
}

// One gemm [16, 64] x [64, 8] recorded by gpu1 and rerun by r0 (reproducible); r0's bits are those
// of the simulated production BLAS (sim:...:library=blas, inside the bound but not the golden
// order), or, with `otherKernel`, the golden model's (another summation order than the BLAS).
QString makeTrace(const QString& path, bool otherKernel)
{
    const HostTensor a = test::randomNormalTensor({16, 64}, 5), b = test::randomNormalTensor({64, 8}, 6);
    const std::vector<HostTensor> inputs = {a, b};
    auto golden = golden::runGolden("gemm", inputs, {});
    if (!golden) return QString::fromStdString(golden.message());
    HostTensor peer = *golden;
    if (!otherKernel && applySimLibrary(SimLibrary::Blas, "gemm", 0, peer) == 0)
        return "the simulated BLAS changed nothing";
    auto w = TraceWriter::create(path.toStdString());
    if (!w) return QString::fromStdString(w.message());
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = s;
    };
    check(w->addDevice({"gpu1", "suspect", "", "", "", "", "suspect", {}}));
    check(w->addDevice({"r0", "healthy", "", "", "", "", "reference", {{"source", "rerun"}}}));
    check(w->addTensor("a", data(a)));
    check(w->addTensor("b", data(b)));
    TraceOp op;
    op.index = 0;
    op.op = "gemm";
    op.name = "fc";
    op.inputs = {"a", "b"};
    check(w->addOp(op, {{"gpu1", {data(*golden)}}, {"r0", {data(peer)}}}));
    check(w->setOutputAttribute(0, "r0", "repeats", int64_t(2)));
    check(w->setOutputAttribute(0, "r0", "reproducible", int64_t(1)));
    check(w->close());
    return st ? QString() : QString::fromStdString(st.message());
}

// The simulated BLAS with bit 0 flipped in some elements of a fraction of the runs: inside the
// golden bound of a k = 64 GEMM, so only bits can tell.
const QString kLowBitFlips = "sim:flip:library=blas,rate=0.05,bit_lo=0,bit_hi=0,run_rate=0.5,seed=3";

nlohmann::json replayJson(const QString& trace, const QString& target)
{
    const auto r =
        runFaultline({"replay", trace, "--targets", target, "--reps", "20", "--seed", "1", "--json"});
    if (r.exitCode != 0 && r.exitCode != 1) return {{"error", r.err.toStdString()}};
    return nlohmann::json::parse(r.out.toStdString());
}

}  // namespace

class TestCliReplayRerunPeer : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void runsThatLeaveThePeersBitsFail()
    {
        const QString trace = m_dir.filePath("peer.h5");
        const QString error = makeTrace(trace, false);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const nlohmann::json report = replayJson(trace, kLowBitFlips);
        QVERIFY2(!report.contains("error"), report.dump().c_str());
        uint64_t fired = 0, equal = 0;
        for (const nlohmann::json& run : report["runs"]) {
            const bool same = run["vs_recorded"]["r0"]["bitwise_equal"].get<bool>();
            fired += !same;
            equal += same;
            // Inside the golden bound: the golden model alone passes every run.
            QCOMPARE(run["outcome"].get<std::string>(), std::string("ok"));
        }
        QVERIFY2(fired > 0 && equal > 0, qPrintable(QString("%1 fired, %2 equal").arg(fired).arg(equal)));
        const nlohmann::json& target = report["targets"][0];
        const nlohmann::json& cell = report["ops"][0]["targets"][target["target"].get<std::string>()];
        QCOMPARE(cell["rerun_mismatches"].get<uint64_t>(), fired);
        QCOMPARE(cell["rerun_peer"].get<std::string>(), std::string("r0"));
        QCOMPARE(cell["failures"].get<uint64_t>(), fired);
        QVERIFY2(target["verdict"] != "healthy", target.dump().c_str());
        QVERIFY2(target["explanation"].get<std::string>().find("bitwise different from rerun peer r0") !=
                     std::string::npos,
                 target.dump().c_str());

        // The same library without the defect: every run has the peer's bits, healthy.
        const nlohmann::json healthy = replayJson(trace, "sim:healthy:library=blas");
        QVERIFY2(!healthy.contains("error"), healthy.dump().c_str());
        for (const nlohmann::json& run : healthy["runs"])
            QVERIFY(run["vs_recorded"]["r0"]["bitwise_equal"].get<bool>());
        QCOMPARE(healthy["targets"][0]["verdict"].get<std::string>(), std::string("healthy"));
    }

    void aPeerOfAnotherKernelJudgesNothing()
    {
        const QString trace = m_dir.filePath("other.h5");
        const QString error = makeTrace(trace, true);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const nlohmann::json report = replayJson(trace, kLowBitFlips);
        QVERIFY2(!report.contains("error"), report.dump().c_str());
        for (const nlohmann::json& run : report["runs"])
            QVERIFY(!run["vs_recorded"]["r0"]["bitwise_equal"].get<bool>());
        const nlohmann::json& target = report["targets"][0];
        QCOMPARE(report["ops"][0]["targets"][target["target"].get<std::string>()]["rerun_mismatches"]
                     .get<uint64_t>(),
                 uint64_t(0));
        QCOMPARE(target["verdict"].get<std::string>(), std::string("healthy"));
    }
};

QTEST_GUILESS_MAIN(TestCliReplayRerunPeer)
#include "test_cli_replay_rerun_peer.moc"
