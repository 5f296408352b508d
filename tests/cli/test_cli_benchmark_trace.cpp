// `faultline benchmark --trace` (issue 22): the detection floor of a trace. Single flipped bits at
// every bit position, both directions, in every judged op's recorded output, each judged as
// bisect judges the op: a golden_exact op sees every flip, a golden bound misses the low mantissa
// bits it must allow, a peer sees every flip; an op divergent on the unmodified trace is a false
// alarm (exit 1) and left out; bad options and files are exit 2 naming them.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "ReplayTrace.h"
#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

using namespace faultline;
using nlohmann::json;

namespace {

faultline::test::ProcessResult faultlineRun(const QStringList& args)
{
    return faultline::test::runProcess(QStringLiteral(FAULTLINE_EXE), args, 120000);
}

const json* rowOf(const json& floor, const std::string& op, const std::string& judge)
{
    for (const json& r : floor["rows"])
        if (r["op"] == op && r["judge"] == judge) return &r;
    return nullptr;
}

double classRate(const json& row, const std::string& cls)
{
    const json& c = row["by_class"][cls];
    return c["rate"].is_null() ? -1.0 : c["rate"].get<double>();
}

TensorData data(const HostTensor& t)
{
    return {t.dtype, t.shape, t.data.data()};
}

// gpu1 (suspect) and peer (a rerun that reproduced itself) recorded the same gemm and an op the
// golden model does not know; the peer judges both bit for bit.
QString makePeerTrace(const QString& path)
{
    const HostTensor a = test::randomNormalTensor({16, 24}, 1), b = test::randomNormalTensor({24, 8}, 2);
    const HostTensor d = test::gemmDouble(a, b), x = test::randomNormalTensor({5, 7}, 3);
    auto w = TraceWriter::create(path.toStdString());
    if (!w) return QString::fromStdString(w.message());
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = s;
    };
    check(w->addDevice({"gpu1", "suspect", "", "", "", "", "suspect", {}}));
    check(w->addDevice({"peer", "cpu", "", "", "", "", "reference", {{"source", "rerun"}}}));
    check(w->addTensor("a", data(a)));
    check(w->addTensor("b", data(b)));
    check(w->addTensor("x", data(x)));
    const std::vector<std::pair<std::string, std::vector<std::string>>> ops = {{"gemm", {"a", "b"}},
                                                                               {"aten::mystery", {"x"}}};
    for (size_t i = 0; i < ops.size(); ++i) {
        TraceOp op;
        op.index = i;
        op.op = ops[i].first;
        op.inputs = ops[i].second;
        const HostTensor& out = i == 0 ? d : x;
        check(w->addOp(op, {{"gpu1", {data(out)}}, {"peer", {data(out)}}}));
        check(w->setOutputAttribute(i, "peer", "repeats", int64_t(2)));
        check(w->setOutputAttribute(i, "peer", "reproducible", int64_t(1)));
    }
    check(w->close());
    return st ? QString() : QString::fromStdString(st.message());
}

}  // namespace

class TestCliBenchmarkTrace : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    void cleanTraceGoldenAlone()
    {
        const QString path = m_dir.filePath("clean.h5");
        QVERIFY(test::makeReplayTrace(path).isEmpty());
        const QString out = m_dir.filePath("floor");
        auto r = faultlineRun(
            {"benchmark", "--trace", path, "--suspect", "gpu1", "--json", "--quiet", "--out", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json f = json::parse(r.out.toStdString());
        QCOMPARE(f["format"].get<std::string>(), std::string("faultline-detection-floor"));
        QCOMPARE(f["recorded_ops"].get<int>(), 4);
        QCOMPARE(f["judged_ops"].get<int>(), 4);
        QCOMPARE(f["floor_ops"].get<int>(), 4);
        QVERIFY(f["false_alarms"].empty());
        QVERIFY(f["peer"].is_null());
        // add: one rounding, judged exactly: every flip at every position is seen.
        const json* add = rowOf(f, "add", "golden_exact");
        QVERIFY(add);
        QCOMPARE((*add)["bits"].size(), size_t(32));
        for (const json& bit : (*add)["bits"])
            for (const char* dir : {"set", "clear"}) {
                QVERIFY2(bit[dir]["planted"].get<int>() == 8, bit.dump().c_str());  // 640 elements: 8 each
                QCOMPARE(bit[dir]["detected"], bit[dir]["planted"]);
            }
        // gemm within its bound: sign and exponent flips are seen, the lowest mantissa bits not all
        // (the bound must allow float32 summation in any order).
        const json* gemm = rowOf(f, "gemm", "golden_bound");
        QVERIFY(gemm);
        QCOMPARE((*gemm)["ops"].get<int>(), 2);
        QCOMPARE(classRate(*gemm, "sign"), 1.0);
        QVERIFY2(classRate(*gemm, "exponent") >= 0.95, gemm->dump().c_str());
        QVERIFY2(classRate(*gemm, "mantissa_rest") < 0.9, gemm->dump().c_str());
        QVERIFY(rowOf(f, "softmax", "golden_bound"));
        // The files: the same JSON, the text table, the figure.
        QFile j(out + "/floor.json");
        QVERIFY(j.open(QIODevice::ReadOnly));
        const json saved = json::parse(j.readAll().toStdString());
        QCOMPARE(saved["rows"], f["rows"]);
        QFile t(out + "/floor.txt");
        QVERIFY(t.open(QIODevice::ReadOnly));
        const QByteArray text = t.readAll();
        QVERIFY2(text.contains("golden_exact") && text.contains("false alarms: none"), text.constData());
#if FAULTLINE_HAVE_GUI
        QFile png(out + "/floor.png");
        QVERIFY(png.open(QIODevice::ReadOnly));
        QVERIFY(png.read(8).startsWith("\x89PNG"));
#endif
        // Same seed, same figures; --elements bounds the flips per position and direction.
        auto again = faultlineRun({"benchmark", "--trace", path, "--suspect", "gpu1", "--json", "--quiet"});
        QCOMPARE(json::parse(again.out.toStdString())["rows"], f["rows"]);
        auto two = faultlineRun(
            {"benchmark", "--trace", path, "--suspect", "gpu1", "--json", "--quiet", "--elements", "2"});
        QCOMPARE(two.exitCode, 0);
        const json twoFloor = json::parse(two.out.toStdString());
        const json* add2 = rowOf(twoFloor, "add", "golden_exact");
        QVERIFY(add2);
        for (const json& bit : (*add2)["bits"]) QCOMPARE(bit["set"]["planted"].get<int>(), 2);
    }

    void falseAlarmIsListedAndLeftOut()
    {
        const QString path = m_dir.filePath("corrupt.h5");
        QVERIFY(test::makeReplayTrace(path, 1).isEmpty());  // op 1 (softmax): exponent bit flipped
        auto r = faultlineRun({"benchmark", "--trace", path, "--suspect", "gpu1", "--json", "--quiet"});
        QCOMPARE(r.exitCode, 1);
        const json f = json::parse(r.out.toStdString());
        QCOMPARE(f["false_alarms"].size(), size_t(1));
        QCOMPARE(f["false_alarms"][0]["index"].get<int>(), 1);
        QCOMPARE(f["false_alarms"][0]["op"].get<std::string>(), std::string("softmax"));
        QCOMPARE(f["floor_ops"].get<int>(), 3);
        QVERIFY(!rowOf(f, "softmax", "golden_bound"));
        auto text = faultlineRun({"benchmark", "--trace", path, "--suspect", "gpu1", "--quiet"});
        QCOMPARE(text.exitCode, 1);
        QVERIFY2(text.out.contains("false alarms (divergent on the unmodified trace"), text.out.constData());
    }

    void peerSeesEveryFlip()
    {
        const QString path = m_dir.filePath("peer.h5");
        QVERIFY(makePeerTrace(path).isEmpty());
        auto r = faultlineRun({"benchmark", "--trace", path, "--suspect", "gpu1", "--json", "--quiet"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json f = json::parse(r.out.toStdString());
        QCOMPARE(f["peer"].get<std::string>(), std::string("peer"));
        for (const char* op : {"gemm", "aten::mystery"}) {
            const json* row = rowOf(f, op, "peer");
            QVERIFY2(row, op);
            for (const char* cls : {"sign", "exponent", "mantissa_top2", "mantissa_rest"})
                QCOMPARE(classRate(*row, cls), 1.0);
        }
        // Without the peer the gemm falls to the golden bound, and the unknown op is not judged.
        auto alone = faultlineRun(
            {"benchmark", "--trace", path, "--suspect", "gpu1", "--no-peer", "--json", "--quiet"});
        QCOMPARE(alone.exitCode, 0);
        const json g = json::parse(alone.out.toStdString());
        QVERIFY(rowOf(g, "gemm", "golden_bound"));
        QVERIFY(!rowOf(g, "aten::mystery", "peer"));
        QCOMPARE(g["floor_ops"].get<int>(), 1);
    }

    void badInputIsExitTwo()
    {
        const QString path = m_dir.filePath("clean2.h5");
        QVERIFY(test::makeReplayTrace(path).isEmpty());
        struct Case {
            QStringList args;
            QString mentions;
        };
        const std::vector<Case> cases = {
            {{"--trace", path, "--suspect", "gpu1", "--elements", "0"}, "--elements"},
            {{"--trace", path, "--suspect", "gpu1", "--elements", "5000"}, "--elements"},
            {{"--trace", path, "--suspect", "gpu9"}, "gpu9"},
            {{"--trace", path}, "--suspect"},
            {{"--trace", m_dir.filePath("missing.h5"), "--suspect", "gpu1"}, "missing.h5"},
            {{"--trace", path, "--suspect", "gpu1", "--peer", "gpu1"}, "gpu1"},
            {{"--trace", path, "--suspect", "gpu1", "--sizes", "8x8"}, "--sizes"},
            {{"--suspect", "gpu1"}, "--trace"},
        };
        for (const Case& c : cases) {
            auto r = faultlineRun(QStringList{"benchmark", "--quiet"} + c.args);
            QVERIFY2(r.exitCode == 2, qPrintable(c.args.join(' ') + ": exit " + QString::number(r.exitCode)));
            QVERIFY2(QString::fromUtf8(r.err).contains(c.mentions),
                     qPrintable(c.args.join(" ") + ": " + QString::fromUtf8(r.err)));
        }
    }
};

QTEST_GUILESS_MAIN(TestCliBenchmarkTrace)
#include "test_cli_benchmark_trace.moc"
