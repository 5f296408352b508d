// `faultline bisect` with a peer (issue 22): a device whose outputs were computed from the trace's
// recorded inputs (/devices/<label> source = "rerun") judges every op bit for bit where it showed
// it reproduces itself (outputs/<label> reproducible = 1), also ops the golden model does not
// know; a peer that did not reproduce itself, or whose determinism is unknown, hands the op back
// to the golden model with the reason; --peer naming the suspect or no device is exit 2.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <nlohmann/json.hpp>

#include "ReplayTrace.h"
#include "core/replay/Bisect.h"
#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

using namespace faultline;
using faultline::test::gemmDouble;
using faultline::test::runProcess;

namespace {

faultline::test::ProcessResult faultlineRun(const QStringList& args)
{
    return runProcess(QStringLiteral(FAULTLINE_EXE), args, 120000);
}

HostTensor flipped(HostTensor t, size_t element, int bit)
{
    uint32_t bits;
    std::memcpy(&bits, t.data.data() + 4 * element, 4);
    bits ^= 1u << bit;
    std::memcpy(t.data.data() + 4 * element, &bits, 4);
    return t;
}

TensorData data(const HostTensor& t)
{
    return {t.dtype, t.shape, t.data.data()};
}

// Ops of the peer trace, each recorded by the suspect gpu1 and computed again by `peer`
// (source rerun), with the peer's reproducibility marks:
//   0 gemm            peer reproducible = 0 (2 runs)          -> golden, with the reason
//   1 gemm            peer without marks                      -> golden, "unknown"
//   2 aten::mystery   reproducible, identical                 -> peer, ok
//   3 aten::mystery   two outputs, output 1 one low bit off   -> peer, divergent (output 1)
//   4 aten::other     peer reproducible = 0                   -> none, with the reason
//   5 gemm            reproducible, one mantissa bit off      -> peer, divergent (inside the bound)
//   6 gemm            no peer output                          -> golden
//   7 aten::mystery   the peer's output has another shape     -> peer, divergent
// `second`: a second rerun device `peer2` (identical outputs, reproducible).
QString makePeerTrace(const QString& path, bool second = false)
{
    const HostTensor a = test::randomNormalTensor({16, 24}, 1), b = test::randomNormalTensor({24, 8}, 2);
    const HostTensor x = test::randomNormalTensor({5, 7}, 3), y = test::randomNormalTensor({3}, 4);
    const HostTensor d = gemmDouble(a, b);
    auto w = TraceWriter::create(path.toStdString());
    if (!w) return QString::fromStdString(w.message());
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = s;
    };
    check(w->addDevice({"gpu1", "suspect", "", "", "", "", "suspect", {}}));
    check(w->addDevice({"peer", "cpu", "", "", "", "", "reference", {{"source", "rerun"}}}));
    if (second) check(w->addDevice({"peer2", "cpu", "", "", "", "", "reference", {{"source", "rerun"}}}));
    check(w->addTensor("a", data(a)));
    check(w->addTensor("b", data(b)));
    check(w->addTensor("x", data(x)));
    check(w->addTensor("y", data(y)));
    struct Row {
        const char* op;
        std::vector<std::string> inputs;
        std::vector<HostTensor> suspect, peer;
        std::optional<int64_t> reproducible;
    };
    const std::vector<Row> rows = {
        {"gemm", {"a", "b"}, {d}, {d}, 0},
        {"gemm", {"a", "b"}, {d}, {d}, std::nullopt},
        {"aten::mystery", {"x"}, {x}, {x}, 1},
        {"aten::mystery", {"x", "y"}, {x, flipped(y, 1, 0)}, {x, y}, 1},
        {"aten::other", {"x"}, {x}, {x}, 0},
        {"gemm", {"a", "b"}, {flipped(d, 9, 0)}, {d}, 1},
        {"gemm", {"a", "b"}, {d}, {}, std::nullopt},
        {"aten::mystery", {"x", "y"}, {x}, {y}, 1},
    };
    for (size_t i = 0; i < rows.size(); ++i) {
        TraceOp op;
        op.index = i;
        op.op = rows[i].op;
        op.name = "layer." + std::to_string(i);
        op.inputs = rows[i].inputs;
        std::map<std::string, std::vector<TensorData>> outputs;
        for (const HostTensor& t : rows[i].suspect) outputs["gpu1"].push_back(data(t));
        for (const HostTensor& t : rows[i].peer) {
            outputs["peer"].push_back(data(t));
            if (second) outputs["peer2"].push_back(data(t));
        }
        check(w->addOp(op, outputs));
        if (rows[i].reproducible) {
            check(w->setOutputAttribute(i, "peer", "repeats", int64_t(2)));
            check(w->setOutputAttribute(i, "peer", "reproducible", *rows[i].reproducible));
        }
        if (second && !rows[i].peer.empty()) {
            check(w->setOutputAttribute(i, "peer2", "repeats", int64_t(2)));
            check(w->setOutputAttribute(i, "peer2", "reproducible", int64_t(1)));
        }
    }
    check(w->close());
    return st ? QString() : QString::fromStdString(st.message());
}

}  // namespace

class TestCliBisectPeer : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void readerExposesReproducibilityAndSource()
    {
        const QString path = m_dir.filePath("read.h5");
        QVERIFY(makePeerTrace(path).isEmpty());
        auto trace = readTrace(path.toStdString());
        QVERIFY2(trace, trace ? "" : trace.message().c_str());
        QCOMPARE(trace->devices.size(), size_t(2));
        QCOMPARE(trace->devices[0].label, std::string("gpu1"));
        QCOMPARE(trace->devices[0].source(), std::string());
        QCOMPARE(trace->devices[1].source(), std::string("rerun"));
        const OutputReproducibility r0 = outputReproducibility(trace->ops[0], "peer");
        QVERIFY(r0.reproducible && !*r0.reproducible && r0.repeats == 2);
        QVERIFY(outputReproducibility(trace->ops[2], "peer").reproducible == true);
        // No attributes (an older trace, a recording): unknown.
        QVERIFY(!outputReproducibility(trace->ops[1], "peer").reproducible);
        QVERIFY(!outputReproducibility(trace->ops[1], "peer").repeats);
        QVERIFY(!outputReproducibility(trace->ops[2], "gpu1").reproducible);
    }

    void peerJudgesWhereItReproducesItself()
    {
        const QString path = m_dir.filePath("peer.h5");
        QVERIFY(makePeerTrace(path).isEmpty());
        auto trace = readTrace(path.toStdString());
        QVERIFY(trace);
        auto report = bisectTrace(*trace, std::string("gpu1"));  // the default peer: the rerun device
        QVERIFY2(report, report ? "" : report.message().c_str());
        QCOMPARE(report->peer, std::string("peer"));
        const std::vector<BisectOp>& ops = report->ops;
        QCOMPARE(ops.size(), size_t(8));

        QCOMPARE(ops[0].judge, BisectJudge::GoldenBound);
        QCOMPARE(ops[0].verdict, BisectVerdict::Ok);
        QCOMPARE(ops[0].judgeReason,
                 std::string(
                     "peer peer did not reproduce itself bit for bit in 2 runs: judged by the golden model"));
        QCOMPARE(ops[1].judge, BisectJudge::GoldenBound);
        QCOMPARE(
            ops[1].judgeReason,
            std::string(
                "peer peer reproducibility unknown (rerun with --repeat 2): judged by the golden model"));

        QCOMPARE(ops[2].judge, BisectJudge::Peer);
        QCOMPARE(ops[2].judgeLabel, std::string("peer"));
        QCOMPARE(ops[2].verdict, BisectVerdict::Ok);

        QCOMPARE(ops[3].judge, BisectJudge::Peer);
        QCOMPARE(ops[3].verdict, BisectVerdict::Divergent);
        QCOMPARE(ops[3].output, size_t(1));
        QVERIFY(ops[3].divergence && ops[3].divergence->beyondTolerance == 1 &&
                ops[3].divergence->bits.flips[0] == 1);
        QVERIFY2(ops[3].detail.rfind("output 1: ", 0) == 0, ops[3].detail.c_str());

        QCOMPARE(ops[4].judge, BisectJudge::None);
        QCOMPARE(ops[4].verdict, BisectVerdict::Skipped);
        QVERIFY2(ops[4].judgeReason.find("did not reproduce itself") != std::string::npos &&
                     ops[4].judgeReason.find("the golden model has no 'aten::other' op") != std::string::npos,
                 ops[4].judgeReason.c_str());

        // A lowest-mantissa-bit flip in a GEMM: inside the golden bound, seen by the peer.
        QCOMPARE(ops[5].judge, BisectJudge::Peer);
        QCOMPARE(ops[5].verdict, BisectVerdict::Divergent);
        QCOMPARE(ops[6].judge, BisectJudge::GoldenBound);
        QVERIFY(ops[6].judgeReason.find("recorded no output") != std::string::npos);

        QCOMPARE(ops[7].judge, BisectJudge::Peer);
        QCOMPARE(ops[7].verdict, BisectVerdict::Divergent);
        QVERIFY(!ops[7].divergence);
        QCOMPARE(ops[7].detail, std::string("output 0 is float32 [5, 7], peer's float32 [3]"));

        QCOMPARE(report->firstDivergentOp, std::optional<size_t>(3));
        QCOMPARE(report->checkedOps, size_t(7));
        QCOMPARE(report->judgedBy[BisectJudge::Peer], size_t(4));
        QCOMPARE(report->judgedBy[BisectJudge::GoldenBound], size_t(3));
        QCOMPARE(report->judgedBy[BisectJudge::None], size_t(1));

        // Without the peer the golden model sees neither corruption: op 3 has no golden op and
        // op 5's flip is inside its bound.
        BisectOptions alone;
        alone.suspect = "gpu1";
        alone.noPeer = true;
        auto golden = bisectTrace(*trace, alone);
        QVERIFY(golden);
        QVERIFY(golden->peer.empty());
        QVERIFY(!golden->firstDivergentOp);
        QCOMPARE(golden->ops[3].judge, BisectJudge::None);
        QCOMPARE(golden->ops[5].judge, BisectJudge::GoldenBound);
    }

    // A peer that ran on another kind of device than the op was recorded on, or another GPU model
    // than the suspect, may legitimately differ bit for bit: the golden model judges, saying why.
    void peerOfOtherHardwareDoesNotJudge_data()
    {
        QTest::addColumn<QString>("suspectName");
        QTest::addColumn<QString>("peerName");
        QTest::addColumn<QString>("peerType");
        QTest::addColumn<QString>("recordedType");
        QTest::addColumn<QString>("reason");
        QTest::newRow("cpu peer, cuda capture") << "NVIDIA H100"
                                                << "cpu"
                                                << "cpu"
                                                << "cuda"
                                                << "ran on cpu";
        QTest::newRow("another GPU model") << "NVIDIA H100"
                                           << "NVIDIA A100"
                                           << "cuda"
                                           << "cuda"
                                           << "is a NVIDIA A100, the suspect a NVIDIA H100";
        QTest::newRow("same model judges") << "NVIDIA H100"
                                           << "NVIDIA H100"
                                           << "cuda"
                                           << "cuda"
                                           << "";
    }
    void peerOfOtherHardwareDoesNotJudge()
    {
        QFETCH(QString, suspectName);
        QFETCH(QString, peerName);
        QFETCH(QString, peerType);
        QFETCH(QString, recordedType);
        QFETCH(QString, reason);
        const QString path =
            m_dir.filePath("hardware-" + QString::number(qHash(peerName + peerType)) + ".h5");
        const HostTensor a = test::randomNormalTensor({8, 8}, 1), b = test::randomNormalTensor({8, 8}, 2);
        const HostTensor d = gemmDouble(a, b);
        auto w = TraceWriter::create(path.toStdString());
        QVERIFY(w);
        QVERIFY(w->addDevice({"gpu1",
                              suspectName.toStdString(),
                              "",
                              "",
                              "",
                              "",
                              "suspect",
                              {{"device_type", recordedType.toStdString()}}}));
        QVERIFY(w->addDevice({"peer",
                              peerName.toStdString(),
                              "",
                              "",
                              "",
                              "",
                              "reference",
                              {{"source", "rerun"}, {"device_type", peerType.toStdString()}}}));
        QVERIFY(w->addTensor("a", data(a)));
        QVERIFY(w->addTensor("b", data(b)));
        TraceOp op;
        op.index = 0;
        op.op = "gemm";
        op.inputs = {"a", "b"};
        op.params["device_type"] = recordedType.toStdString();
        QVERIFY(w->addOp(op, {{"gpu1", {data(d)}}, {"peer", {data(d)}}}));
        QVERIFY(w->setOutputAttribute(0, "peer", "repeats", int64_t(2)));
        QVERIFY(w->setOutputAttribute(0, "peer", "reproducible", int64_t(1)));
        QVERIFY(w->close());
        auto trace = readTrace(path.toStdString());
        QVERIFY(trace);
        auto report = bisectTrace(*trace, std::string("gpu1"));
        QVERIFY2(report, report ? "" : report.message().c_str());
        if (reason.isEmpty()) {
            QCOMPARE(report->ops[0].judge, BisectJudge::Peer);
        } else {
            QCOMPARE(report->ops[0].judge, BisectJudge::GoldenBound);
            QVERIFY2(QString::fromStdString(report->ops[0].judgeReason).contains(reason),
                     report->ops[0].judgeReason.c_str());
        }
    }

    void jsonAndTextNameTheJudge()
    {
        const QString path = m_dir.filePath("cli.h5");
        QVERIFY(makePeerTrace(path).isEmpty());
        auto r = faultlineRun({"bisect", path, "--suspect", "gpu1", "--json", "--quiet"});
        QVERIFY2(!r.crashed, r.err.constData());
        QCOMPARE(r.exitCode, 1);
        const nlohmann::json o = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(o["peer"].get<std::string>(), std::string("peer"));
        QCOMPARE(o["first_divergent_op"].get<int>(), 3);
        QCOMPARE(o["checked_ops"].get<int>(), 7);
        QCOMPARE(o["judged_by"],
                 nlohmann::json({{"peer", 4}, {"golden_exact", 0}, {"golden_bound", 3}, {"none", 1}}));
        const nlohmann::json& ops = o["ops"];
        QCOMPARE(ops[2]["judge"], nlohmann::json({{"kind", "peer"},
                                                  {"label", "peer"},
                                                  {"bound", nullptr},
                                                  {"reason", nullptr},
                                                  {"replicas", nullptr}}));
        QCOMPARE(o["judged_by_replicas"].get<int>(), 0);
        QCOMPARE(ops[0]["judge"]["kind"].get<std::string>(), std::string("golden_bound"));
        QCOMPARE(ops[0]["judge"]["bound"].get<std::string>(), std::string("strict"));
        QVERIFY(ops[0]["judge"]["label"].is_null());
        QVERIFY(ops[0]["judge"]["reason"].get<std::string>().find("did not reproduce") != std::string::npos);
        QCOMPARE(ops[3]["output"].get<int>(), 1);
        QCOMPARE(ops[3]["verdict"].get<std::string>(), std::string("divergent"));
        QCOMPARE(ops[4]["judge"]["kind"].get<std::string>(), std::string("none"));
        QVERIFY(ops[4]["verdict"] == "skipped" && !ops[4]["judge"]["reason"].is_null());

        r = faultlineRun({"bisect", path, "--suspect", "gpu1", "--quiet"});
        QCOMPARE(r.exitCode, 1);
        const QString text = QString::fromUtf8(r.out);
        QVERIFY2(text.contains("bit for bit against peer peer"), r.out.constData());
        QVERIFY2(text.contains("op 2 aten::mystery layer.2: ok [peer peer, bitwise]"), r.out.constData());
        QVERIFY2(text.contains("op 0 gemm layer.0: ok [golden bound, strict — peer peer did not reproduce"),
                 r.out.constData());
        QVERIFY2(text.contains("op 4 aten::other layer.4: skipped [no judge]"), r.out.constData());
        QVERIFY2(text.contains("judged by: peer 4, golden_exact 0, golden_bound 3, none 1"),
                 r.out.constData());

        // --peer names the judge explicitly; --no-peer leaves the golden model alone.
        r = faultlineRun({"bisect", path, "--suspect", "gpu1", "--peer", "peer", "--json", "--quiet"});
        QCOMPARE(r.exitCode, 1);
        r = faultlineRun({"bisect", path, "--suspect", "gpu1", "--no-peer", "--json", "--quiet"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(nlohmann::json::parse(r.out.toStdString())["peer"].is_null());
    }

    void badPeerIsAUsageError_data()
    {
        QTest::addColumn<QString>("peer");
        QTest::newRow("the suspect") << "gpu1";
        QTest::newRow("no such device") << "gpu9";
    }
    void badPeerIsAUsageError()
    {
        QFETCH(QString, peer);
        const QString path = m_dir.filePath("bad.h5");
        if (!QFile::exists(path)) QVERIFY(makePeerTrace(path).isEmpty());
        auto r = faultlineRun({"bisect", path, "--suspect", "gpu1", "--peer", peer});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(
            r.err.contains(peer.toUtf8()) && r.err.contains("devices: gpu1, peer") && r.err.contains(".h5"),
            r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
    }

    void severalRerunDevicesWarnAndTakeTheFirst()
    {
        const QString path = m_dir.filePath("two.h5");
        QVERIFY(makePeerTrace(path, true).isEmpty());
        auto trace = readTrace(path.toStdString());
        QVERIFY(trace);
        auto report = bisectTrace(*trace, std::string("gpu1"));
        QVERIFY(report);
        QCOMPARE(report->peer, std::string("peer"));
        bool warned = false;
        for (const std::string& w : report->warnings)
            warned =
                warned || (w.find("2 devices were rerun") != std::string::npos &&
                           w.find("not peer2") != std::string::npos && w.find("--peer") != std::string::npos);
        QVERIFY(warned);
        // The suspect itself is never its own peer: bisecting peer2 takes peer.
        report = bisectTrace(*trace, std::string("peer2"));
        QVERIFY(report);
        QCOMPARE(report->peer, std::string("peer"));
    }

    void traceWithoutPeerIsJudgedAsBefore()
    {
        const QString path = m_dir.filePath("old.h5");
        QVERIFY(test::makeReplayTrace(path, 1).isEmpty());
        auto r = faultlineRun({"bisect", path, "--suspect", "gpu1", "--json", "--quiet"});
        QCOMPARE(r.exitCode, 1);
        const nlohmann::json o = nlohmann::json::parse(r.out.toStdString());
        QVERIFY(o["peer"].is_null());
        QCOMPARE(o["first_divergent_op"].get<int>(), 1);
        // fp32 add is one rounding, computed exactly by the golden model; gemm and softmax get bounds.
        for (const nlohmann::json& op : o["ops"])
            QVERIFY2(op["judge"]["kind"] == (op["op"] == "add" ? "golden_exact" : "golden_bound"),
                     op.dump().c_str());
        // A device that is no rerun may still be named as the peer: here gpu0 recorded the same
        // ops, but its outputs carry no reproducibility marks, so the golden model judges.
        r = faultlineRun({"bisect", path, "--suspect", "gpu1", "--peer", "gpu0", "--json", "--quiet"});
        QCOMPARE(r.exitCode, 1);
        const nlohmann::json p = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(p["peer"].get<std::string>(), std::string("gpu0"));
        QVERIFY(p["ops"][0]["judge"]["reason"].get<std::string>().find("unknown") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestCliBisectPeer)
#include "test_cli_bisect_peer.moc"
