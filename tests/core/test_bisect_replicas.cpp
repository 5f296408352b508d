// Data-parallel replicas as peers (issue 22): in a trace where several devices computed the same
// op from the same inputs (the optimizer step after an all-reduce), `bisect` judges the suspect's
// op bit for bit against replicas that agree among themselves; a lone replica judges only where
// it agrees with the suspect; replicas that disagree hand the op to the golden model with the
// reason; --no-peer leaves them out. The detection floor judges such ops the same way.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "core/replay/Bisect.h"
#include "core/replay/DetectionFloor.h"
#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

HostTensor flipped(HostTensor t, size_t element, int bit)
{
    uint32_t bits;
    std::memcpy(&bits, t.data.data() + 4 * element, 4);
    bits ^= 1u << bit;
    std::memcpy(t.data.data() + 4 * element, &bits, 4);
    return t;
}

// a [m,k] x b [k,n] times alpha in double, rounded once: a healthy GEMM with another summation
// order than the golden model's.
HostTensor gemm(const HostTensor& a, const HostTensor& b, double alpha = 1.0)
{
    const uint64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    HostTensor d(DType::Float32, {m, n});
    for (uint64_t i = 0; i < m; ++i)
        for (uint64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (uint64_t p = k; p-- > 0;) acc += double(a.as<float>()[i * k + p]) * b.as<float>()[p * n + j];
            d.as<float>()[i * n + j] = float(alpha * acc);
        }
    return d;
}

TensorData data(const HostTensor& t)
{
    return {t.dtype, t.shape, t.data.data()};
}

// GEMM ops (each device's op is its own, as merge-traces keeps them), suspect g1:
//   0-2   a x b on g0, g1, g2; g1's output one low mantissa bit off   -> replicas g0, g2: divergent
//   3-4   a x b alpha 2 on g0, g1, identical                          -> replica g0: ok
//   5-6   c x b on g0, g1; g1 one low bit off (inside the bound)      -> golden, reason, warning
//   7-9   d x b on g0, g1, g2; g0 and g2 differ from each other       -> golden, reason
//   10    e x b on g1 only                                             -> golden, no reason
//   11-12 a x b alpha 3 on g1 and the rerun device r0                  -> not a replica: golden
QString makeReplicaTrace(const QString& path)
{
    const HostTensor a = test::randomNormalTensor({8, 16}, 11), b = test::randomNormalTensor({16, 6}, 12),
                     c = test::randomNormalTensor({8, 16}, 13), d = test::randomNormalTensor({8, 16}, 14),
                     e = test::randomNormalTensor({8, 16}, 15);
    const HostTensor ab = gemm(a, b), cb = gemm(c, b), db = gemm(d, b), eb = gemm(e, b);
    auto w = TraceWriter::create(path.toStdString());
    if (!w) return QString::fromStdString(w.message());
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = s;
    };
    for (const char* label : {"g0", "g1", "g2"}) check(w->addDevice({label, "cpu", "", "", "", "", "", {}}));
    check(w->addDevice({"r0", "cpu", "", "", "", "", "reference", {{"source", "rerun"}}}));
    const std::pair<const char*, const HostTensor*> tensors[] = {
        {"a", &a}, {"b", &b}, {"c", &c}, {"d", &d}, {"e", &e}};
    for (const auto& [id, t] : tensors) check(w->addTensor(id, data(*t)));
    struct Row {
        std::string lhs;
        std::optional<double> alpha;
        std::string label;
        HostTensor out;
    };
    const std::vector<Row> rows = {
        {"a", {}, "g0", ab},
        {"a", {}, "g1", flipped(ab, 7, 0)},
        {"a", {}, "g2", ab},
        {"a", 2.0, "g0", gemm(a, b, 2.0)},
        {"a", 2.0, "g1", gemm(a, b, 2.0)},
        {"c", {}, "g0", cb},
        {"c", {}, "g1", flipped(cb, 3, 0)},
        {"d", {}, "g0", db},
        {"d", {}, "g1", db},
        {"d", {}, "g2", flipped(db, 1, 0)},
        {"e", {}, "g1", eb},
        {"a", 3.0, "g1", gemm(a, b, 3.0)},
        {"a", 3.0, "r0", gemm(a, b, 3.0)},
    };
    for (size_t i = 0; i < rows.size(); ++i) {
        TraceOp op;
        op.index = i;
        op.op = "gemm";
        op.name = "step." + std::to_string(i);
        op.inputs = {rows[i].lhs, "b"};
        if (rows[i].alpha) op.params["alpha"] = *rows[i].alpha;
        check(w->addOp(op, {{rows[i].label, {data(rows[i].out)}}}));
    }
    check(w->close());
    return st ? QString() : QString::fromStdString(st.message());
}

}  // namespace

class TestBisectReplicas : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_path;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath("replicas.h5");
        const QString error = makeReplicaTrace(m_path);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    void replicasJudgeBitForBit()
    {
        auto trace = readTrace(m_path.toStdString());
        QVERIFY2(trace, trace ? "" : trace.message().c_str());
        BisectOptions options;
        options.suspect = "g1";
        auto report = bisectTrace(*trace, options);
        QVERIFY2(report, report ? "" : report.message().c_str());
        const auto& ops = report->ops;
        QCOMPARE(ops.size(), size_t(13));

        // Two replicas that agree: the one-bit difference is found, bit for bit.
        QCOMPARE(ops[1].verdict, BisectVerdict::Divergent);
        QCOMPARE(ops[1].judge, BisectJudge::Peer);
        QCOMPARE(ops[1].replicas, (std::vector<std::string>{"g0", "g2"}));
        QVERIFY(ops[1].divergence && ops[1].divergence->beyondTolerance == 1);
        QCOMPARE(bisectJudgeText(ops[1]), std::string("replicas g0, g2, bitwise"));

        // A lone replica with the same bits judges.
        QCOMPARE(ops[4].verdict, BisectVerdict::Ok);
        QCOMPARE(ops[4].judge, BisectJudge::Peer);
        QCOMPARE(ops[4].replicas, std::vector<std::string>{"g0"});

        // A lone replica that differs decides nothing: the golden model, its bound, a warning.
        QCOMPARE(ops[6].judge, BisectJudge::GoldenBound);
        QCOMPARE(ops[6].verdict, BisectVerdict::Ok);
        QVERIFY2(ops[6].judgeReason.find("the one replica, g0, differs bit for bit") != std::string::npos,
                 ops[6].judgeReason.c_str());
        const bool warned =
            std::any_of(report->warnings.begin(), report->warnings.end(), [](const std::string& w) {
                return w.find("op 6 gemm") != std::string::npos && w.find("one replica") != std::string::npos;
            });
        QVERIFY(warned);

        // Replicas that disagree among themselves decide nothing.
        QCOMPARE(ops[8].judge, BisectJudge::GoldenBound);
        QVERIFY2(ops[8].judgeReason.find("replicas g0, g2 differ bit for bit from each other") !=
                     std::string::npos,
                 ops[8].judgeReason.c_str());

        // No replica (other inputs): only the rerun peer's absence is the reason. A rerun
        // device's op is not a replica.
        QCOMPARE(ops[10].judge, BisectJudge::GoldenBound);
        QVERIFY2(ops[10].judgeReason == "peer r0 recorded no output: judged by the golden model",
                 ops[10].judgeReason.c_str());
        QCOMPARE(ops[11].judge, BisectJudge::GoldenBound);
        QVERIFY(ops[11].replicas.empty());

        // Other devices' ops are not the suspect's.
        QCOMPARE(ops[0].verdict, BisectVerdict::Skipped);

        QCOMPARE(report->firstDivergentOp, std::optional<size_t>(1));
        const nlohmann::json j = bisectJson(*report);
        QCOMPARE(j["judged_by_replicas"].get<size_t>(), size_t(2));
        QCOMPARE(j["ops"][1]["judge"]["replicas"], nlohmann::json({"g0", "g2"}));
        QVERIFY(j["ops"][6]["judge"]["replicas"].is_null());
        const std::string text = bisectText(*report);
        QVERIFY2(text.find("[replicas g0, g2, bitwise]") != std::string::npos, text.c_str());
        QVERIFY2(text.find("2 op(s) judged by data-parallel replicas") != std::string::npos, text.c_str());
    }

    void withoutPeersTheGoldenModelJudgesAlone()
    {
        auto trace = readTrace(m_path.toStdString());
        QVERIFY(trace);
        BisectOptions options;
        options.suspect = "g1";
        options.noPeer = true;
        auto report = bisectTrace(*trace, options);
        QVERIFY(report);
        for (const BisectOp& b : report->ops) {
            QVERIFY(b.replicas.empty());
            QVERIFY(b.judge != BisectJudge::Peer);
        }
        // One low mantissa bit of a GEMM is inside the golden bound: only the replicas see it.
        QCOMPARE(report->ops[1].verdict, BisectVerdict::Ok);
        QVERIFY(!report->firstDivergentOp);
    }

    void theFloorJudgesAsBisectDoes()
    {
        auto trace = readTrace(m_path.toStdString());
        QVERIFY(trace);
        DetectionFloorOptions options;
        options.bisect.suspect = "g1";
        options.elementsPerBit = 4;
        auto floor = measureDetectionFloor(*trace, options);
        QVERIFY2(floor, floor ? "" : floor.message().c_str());
        // Op 1 is a false alarm on this trace (its planted bit), so the floor's replica row is
        // op 4's: every flip at every position seen.
        bool replicaRow = false;
        for (const DetectionFloorRow& row : floor->rows) {
            if (row.judge != BisectJudge::Peer) continue;
            replicaRow = true;
            for (size_t bit = 0; bit < row.set.size(); ++bit) {
                QCOMPARE(row.set[bit].detected, row.set[bit].planted);
                QCOMPARE(row.clear[bit].detected, row.clear[bit].planted);
            }
        }
        QVERIFY(replicaRow);
        QCOMPARE(floor->falseAlarms.size(), size_t(1));
        QCOMPARE(floor->falseAlarms[0].index, size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestBisectReplicas)
#include "test_bisect_replicas.moc"
