// InputCuts and OneOpTrace: the dimensions of an op's inputs that shrink and explore cut (gemm's
// rows, cols and k through A, B and C with their transpositions; other ops by right-aligned
// broadcasting), cuts along them, zeros, element counts, and one-op traces of cut inputs.
#include <QTemporaryDir>
#include <QtTest>

#include "core/replay/InputCuts.h"
#include "core/replay/OneOpTrace.h"
#include "core/replay/TensorLoad.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

// A float32 tensor whose element i holds i.
HostTensor iota(std::vector<uint64_t> shape)
{
    HostTensor t(DType::Float32, std::move(shape));
    for (uint64_t i = 0; i < t.elementCount(); ++i) t.as<float>()[i] = float(i);
    return t;
}

const InputAxis* axisNamed(const std::vector<InputAxis>& axes, const std::string& name)
{
    for (const InputAxis& a : axes)
        if (a.name == name) return &a;
    return nullptr;
}

}  // namespace

class TestInputCuts : public QObject {
    Q_OBJECT

private slots:
    void gemmAxes()
    {
        // A [k=5, m=3] with trans_a, B [n=4, k=5] with trans_b, C [3, 4].
        TraceOp op;
        op.op = "gemm";
        op.inputs = {"a", "b", "c"};
        op.params["trans_a"] = int64_t(1);
        op.params["trans_b"] = int64_t(1);
        const std::vector<HostTensor> in{iota({5, 3}), iota({4, 5}), iota({3, 4})};
        const std::vector<InputAxis> axes = inputAxes(op, in);
        const InputAxis* rows = axisNamed(axes, "rows");
        const InputAxis* cols = axisNamed(axes, "cols");
        const InputAxis* k = axisNamed(axes, "k");
        QVERIFY(rows && cols && k);
        QCOMPARE(rows->places, (std::vector<std::pair<size_t, size_t>>{{0, 1}, {2, 0}}));
        QCOMPARE(cols->places, (std::vector<std::pair<size_t, size_t>>{{1, 0}, {2, 1}}));
        QCOMPARE(k->places, (std::vector<std::pair<size_t, size_t>>{{0, 0}, {1, 1}}));
        QCOMPARE(axisSize(*k, in), uint64_t(5));
        // Cutting k keeps indices 1 and 3 of A's rows and B's columns.
        const std::vector<HostTensor> cut = keepAlong(in, *k, {1, 3});
        QCOMPARE(cut[0].shape, (std::vector<uint64_t>{2, 3}));
        QCOMPARE(cut[1].shape, (std::vector<uint64_t>{4, 2}));
        QCOMPARE(cut[2].shape, (std::vector<uint64_t>{3, 4}));
        QCOMPARE(cut[0].as<float>()[0], 3.0f);  // A row 1, column 0
        QCOMPARE(cut[1].as<float>()[1], 3.0f);  // B row 0, column 3
        QCOMPARE(cut[1].as<float>()[2], 6.0f);  // B row 1, column 1
    }

    void broadcastAxes()
    {
        // layernorm x [2, 6], gamma [6], beta [6]: rows cut x alone, cols cut all three.
        TraceOp op;
        op.op = "layernorm";
        op.inputs = {"x", "g", "b"};
        const std::vector<HostTensor> in{iota({2, 6}), iota({6}), iota({6})};
        const std::vector<InputAxis> axes = inputAxes(op, in);
        QCOMPARE(axes.size(), size_t(2));
        QCOMPARE(axisNamed(axes, "rows")->places, (std::vector<std::pair<size_t, size_t>>{{0, 0}}));
        QCOMPARE(axisNamed(axes, "cols")->places,
                 (std::vector<std::pair<size_t, size_t>>{{0, 1}, {1, 0}, {2, 0}}));
        const std::vector<HostTensor> cut = keepAlong(in, *axisNamed(axes, "cols"), {4, 5});
        QCOMPARE(cut[0].shape, (std::vector<uint64_t>{2, 2}));
        QCOMPARE(cut[0].as<float>()[2], 10.0f);  // row 1, column 4
        QCOMPARE(cut[1].as<float>()[1], 5.0f);
    }

    void zerosAndCounts()
    {
        HostTensor t = iota({4, 4});
        QCOMPARE(zeroElementCount(t), uint64_t(1));
        zeroElements(t, 4, 8);
        QCOMPARE(zeroElementCount(t), uint64_t(9));
        QCOMPARE(t.as<float>()[12], 12.0f);
        // Inputs that share an id are one tensor.
        TraceOp op;
        op.inputs = {"x", "x", "y"};
        QCOMPARE(inputElementCount(op, {iota({4}), iota({4}), iota({2, 3})}), uint64_t(10));
    }

    void oneOpTrace()
    {
        QTemporaryDir dir;
        Trace source;
        source.attributes["model"] = "m";
        source.devices.push_back({"gpu0", "n", "", "", "", "", "suspect", {}});
        TraceOp op;
        op.index = 7;
        op.op = "add";
        op.name = "layer";
        op.inputs = {"x", "x"};
        // The two inputs were one tensor; cut differently they are written apart.
        const std::vector<HostTensor> inputs{iota({2, 2}), iota({2})};
        const std::string path = dir.filePath("one.h5").toStdString();
        QVERIFY(writeOneOpTrace(source, op, inputs, path, {{"note", "cut"}}));
        auto trace = readTrace(path);
        QVERIFY2(trace, trace ? "" : trace.message().c_str());
        QCOMPARE(trace->ops.size(), size_t(1));
        QCOMPARE(trace->ops[0].index, size_t(7));
        QCOMPARE(trace->ops[0].inputs, (std::vector<std::string>{"x", "x#1"}));
        QVERIFY(trace->ops[0].outputs.empty());
        QCOMPARE(trace->attributes.at("note"), std::string("cut"));
        QCOMPARE(trace->attributes.at("model"), std::string("m"));
        auto loaded = loadOpInputs(*trace, trace->ops[0]);
        QVERIFY(loaded);
        QCOMPARE((*loaded)[1].shape, (std::vector<uint64_t>{2}));
        // A count of inputs that does not match the op is refused, naming the file.
        Status st = writeOneOpTrace(source, op, {iota({2})}, dir.filePath("bad.h5").toStdString());
        QVERIFY(!st);
        QVERIFY(st.message().find("bad.h5") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestInputCuts)
#include "test_input_cuts.moc"
