// Trace v1: traces written by h5py read back with every field, errors and warnings for broken or
// newer traces, TraceWriter -> readTrace round trip, and TraceWriter output checked by h5py.
#include <QTemporaryDir>
#include <QTest>

#include <cstring>

#include "core/TensorFile.h"
#include "core/trace/Trace.h"
#include "core/trace/TraceOps.h"
#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

std::string str(const QString& s)
{
    return s.toStdString();
}

template <class T>
std::vector<T> readAll(const TensorFile& file, const std::string& name)
{
    const auto index = file.find(name);
    if (!index) return {};
    const TensorInfo& t = file.tensors()[*index];
    if (dtypeSize(t.dtype) != sizeof(T)) return {};
    std::vector<T> out(t.elementCount());
    if (!file.read(*index, 0, out.size(), out.data()).ok()) return {};
    return out;
}

template <class T>
std::vector<T> iota(size_t n, T start = 0)
{
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = T(start + T(i));
    return v;
}

size_t countContaining(const std::vector<std::string>& lines, const std::string& needle)
{
    return size_t(std::count_if(lines.begin(), lines.end(),
                                [&](const std::string& l) { return l.find(needle) != std::string::npos; }));
}

}  // namespace

class TestTrace : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string fixture(const char* name) const { return str(m_dir.filePath(QString::fromUtf8(name))); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        FL_WRITE_FIXTURE(QStringLiteral("write_h5_fixtures.py"), (QStringList{"trace", m_dir.path()}));
    }

    void opVocabulary()
    {
        for (const char* op : {"gemm", "layernorm", "rmsnorm", "softmax", "gelu", "silu", "add", "mul",
                               "attention", "all_reduce", "all_gather", "reduce_scatter", "broadcast"})
            QVERIFY2(isKnownTraceOp(op), op);
        QVERIFY(!isKnownTraceOp("fused_magic"));
        QVERIFY(!isKnownTraceOp(""));
        QVERIFY(isKnownTraceOpAttribute("gemm", "trans_a"));
        QVERIFY(isKnownTraceOpAttribute("gemm", "out_dtype"));
        QVERIFY(isKnownTraceOpAttribute("silu", "phase"));
        QVERIFY(!isKnownTraceOpAttribute("gemm", "eps"));
        QVERIFY(isKnownTraceOpAttribute("gelu", "approximate"));
        QVERIFY(isKnownTraceOpAttribute("all_reduce", "ranks"));
        QVERIFY(isKnownTraceOpAttribute("all_gather", "ranks"));
        QVERIFY(isKnownTraceOpAttribute("reduce_scatter", "reduce_op"));
        QVERIFY(isKnownTraceOpAttribute("broadcast", "root"));
        QVERIFY(!isKnownTraceOpAttribute("all_gather", "root"));
        QVERIFY(isKnownTraceOpAttribute("attention", "causal"));
    }

    void attrValueText_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("expected");
        QTest::addRow("int") << 0 << "-3";
        QTest::addRow("double") << 1 << "0.1";
        QTest::addRow("small double") << 2 << "1e-05";
        QTest::addRow("string") << 3 << "tanh";
        QTest::addRow("ints") << 4 << "[1, 2, 3]";
        QTest::addRow("doubles") << 5 << "[0.5, 2]";
        QTest::addRow("strings") << 6 << "[\"gpu0\", \"g\\\"1\"]";
        QTest::addRow("empty list") << 7 << "[]";
    }
    void attrValueText()
    {
        QFETCH(int, which);
        QFETCH(QString, expected);
        const AttrValue values[] = {int64_t(-3),
                                    0.1,
                                    1e-5,
                                    std::string("tanh"),
                                    std::vector<int64_t>{1, 2, 3},
                                    std::vector<double>{0.5, 2.0},
                                    std::vector<std::string>{"gpu0", "g\"1"},
                                    std::vector<int64_t>{}};
        QCOMPARE(QString::fromStdString(attrValueToString(values[which])), expected);
    }

    void readsTraceWrittenByH5py()
    {
        const std::string path = fixture("trace.h5");
        Result<Trace> r = readTrace(path);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const Trace& t = *r;
        QCOMPARE(t.version, 1);
        QCOMPARE(t.attributes, (std::map<std::string, std::string>{{"model", "tiny"}}));
        QCOMPARE(t.file->format(), FileFormat::Trace);

        QCOMPARE(t.devices.size(), size_t(2));
        const TraceDevice& d0 = t.devices[0];
        QCOMPARE(d0.label, std::string("gpu0"));
        QCOMPARE(d0.name, std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(d0.uuid, std::string("GPU-gpu0"));
        QCOMPARE(d0.serial, std::string("16500"));
        QCOMPARE(d0.pciBusId, std::string("00000000:10:00.0"));
        QCOMPARE(d0.driverVersion, std::string("550.54.15"));
        QCOMPARE(d0.role, std::string("suspect"));
        QCOMPARE(d0.extra, (std::map<std::string, std::string>{{"sm_count", "132"}}));
        QCOMPARE(t.devices[1].role, std::string("reference"));

        QCOMPARE(t.tensorIds, (std::vector<std::string>{"a", "b", "x_bf16"}));
        const auto bf = t.file->find("tensors/x_bf16");
        QVERIFY(bf);
        QCOMPARE(t.file->tensors()[*bf].dtype, DType::BFloat16);
        QCOMPARE(readAll<uint16_t>(*t.file, "tensors/x_bf16"), iota<uint16_t>(8, 0x3F80));

        QCOMPARE(t.ops.size(), size_t(10));
        for (size_t i = 0; i < t.ops.size(); ++i) QCOMPARE(t.ops[i].index, i);  // sorted, not in write order
        const TraceOp& gemm = t.ops[0];
        QCOMPARE(gemm.op, std::string("gemm"));
        QCOMPARE(gemm.inputs, (std::vector<std::string>{"a", "b"}));
        QCOMPARE(gemm.name, std::string("layers.0.mlp"));
        QCOMPARE(gemm.phase, std::string("forward"));
        QCOMPARE(std::get<int64_t>(gemm.params.at("trans_a")), int64_t(0));
        QCOMPARE(std::get<int64_t>(gemm.params.at("trans_b")), int64_t(1));
        QCOMPARE(std::get<double>(gemm.params.at("alpha")), 1.0);
        QCOMPARE(std::get<double>(gemm.params.at("beta")), 0.0);
        QCOMPARE(std::get<std::string>(gemm.params.at("out_dtype")), std::string("float32"));
        QCOMPARE(gemm.params.size(), size_t(5));
        QCOMPARE(gemm.outputs.at("gpu0"),
                 (std::vector<std::string>{"ops/000000/outputs/gpu0/0", "ops/000000/outputs/gpu0/1"}));
        QCOMPARE(gemm.outputs.at("gpu1"), std::vector<std::string>{"ops/000000/outputs/gpu1/0"});
        QCOMPARE(readAll<float>(*t.file, gemm.outputs.at("gpu0")[1]), iota<float>(8, 1.0f));

        QCOMPARE(std::get<std::string>(t.ops[1].params.at("approximate")), std::string("tanh"));
        QCOMPARE(t.ops[1].inputs, std::vector<std::string>{"x_bf16"});
        QCOMPARE(std::get<double>(t.ops[2].params.at("scale")), 0.125);
        QCOMPARE(std::get<int64_t>(t.ops[3].params.at("causal")), int64_t(1));  // h5py's bool enum
        QCOMPARE(t.ops[4].phase, std::string("backward"));
        QCOMPARE(std::get<std::vector<std::string>>(t.ops[4].params.at("ranks")),
                 (std::vector<std::string>{"gpu0", "gpu1"}));
        QCOMPARE(std::get<std::string>(t.ops[4].params.at("reduce_op")), std::string("sum"));
        QCOMPARE(t.ops[5].op, std::string("fused_magic"));

        // Warnings: once each, with counts, naming the file.
        const auto& w = t.warnings;
        QCOMPARE(countContaining(w, "unknown op 'fused_magic' (2 ops"), size_t(1));
        QCOMPARE(countContaining(w, "fused_magic"), size_t(1));
        QCOMPARE(countContaining(w, "op 'layernorm': unknown attribute 'momentum' (1 op"), size_t(1));
        QCOMPARE(countContaining(w, "op 'rmsnorm': unknown attribute 'momentum' (1 op"), size_t(1));
        QCOMPARE(countContaining(w, "output label 'gpu7' is not a device"), size_t(1));
        QCOMPARE(countContaining(w, "eps"), size_t(0));
        for (const std::string& line : w) QVERIFY2(line.rfind(path + ": ", 0) == 0, line.c_str());
        QCOMPARE(t.ops[9].outputs.at("gpu7"), std::vector<std::string>{"ops/000009/outputs/gpu7/0"});
    }

    void errors_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("problem");
        QTest::addRow("newer") << "newer.h5"
                               << "written by a newer Faultline (trace version 2; this build reads up to 1)";
        QTest::addRow("no format") << "no_format.h5"
                                   << "not a Faultline trace (no faultline_format attribute)";
        QTest::addRow("wrong format") << "wrong_format.h5"
                                      << "faultline_format is 'snapshot'";
        QTest::addRow("no version") << "no_version.h5"
                                    << "no faultline_version";
        QTest::addRow("missing tensor")
            << "missing_tensor.h5"
            << "'ops/000000' (gemm): input 'ghost' is not a tensor under /tensors";
        QTest::addRow("bad op group name") << "bad_op_name.h5"
                                           << "'ops/first': op group names must be numbers";
        QTest::addRow("no op attribute") << "no_op_attr.h5"
                                         << "'ops/000000' has no string attribute 'op'";
        QTest::addRow("bad output name") << "bad_output_name.h5"
                                         << "'ops/000000/outputs/gpu0/first': output names must be numbers";
        QTest::addRow("missing file") << "nothing_here.h5"
                                      << "no such file";
    }
    void errors()
    {
        QFETCH(QString, file);
        QFETCH(QString, problem);
        const std::string path = fixture(qPrintable(file));
        Result<Trace> r = readTrace(path);
        QVERIFY(!r.ok());
        QVERIFY2(r.message().rfind(path + ": ", 0) == 0, r.message().c_str());
        QVERIFY2(r.message().find(str(problem)) != std::string::npos, r.message().c_str());
        QVERIFY(r.message().find('\n') == std::string::npos);
    }

    void writeReadRoundTrip()
    {
        const std::string path = fixture("written_trace.h5");
        Result<TraceWriter> w = TraceWriter::create(path);
        QVERIFY2(w.ok(), w.ok() ? "" : w.message().c_str());
        QVERIFY(w->setAttribute("model", std::string("llama-tiny")).ok());
        QVERIFY(w->setAttribute("step", int64_t(1200)).ok());

        TraceDevice gpu0{"gpu0",    "NVIDIA A100", "GPU-1234",       "1320", "00000000:07:00.0",
                         "535.104", "suspect",     {{"node", "n17"}}};
        TraceDevice gpu1{"gpu1",    "NVIDIA A100", "GPU-5678", "1321", "00000000:0A:00.0",
                         "535.104", "reference",   {}};
        QVERIFY(w->addDevice(gpu0).ok());
        QVERIFY(w->addDevice(gpu1).ok());

        const std::vector<float> a = iota<float>(6);
        const std::vector<float> b = iota<float>(12, 100.0f);
        const std::vector<uint16_t> x = iota<uint16_t>(65536);
        const int64_t scalar = -42;
        QVERIFY(w->addTensor("a", {DType::Float32, {2, 3}, a.data()}).ok());
        QVERIFY(w->addTensor("b", {DType::Float32, {3, 4}, b.data()}).ok());
        TensorWriteOptions gz;
        gz.gzipLevel = 1;
        QVERIFY(w->addTensor("layer0/x", {DType::BFloat16, {256, 256}, x.data()}, gz).ok());
        QVERIFY(w->addTensor("count", {DType::Int64, {}, &scalar}).ok());
        QVERIFY(w->addTensor("nothing", {DType::Float16, {0, 4}, nullptr}).ok());

        TraceOp gemm;
        gemm.index = 0;
        gemm.op = "gemm";
        gemm.inputs = {"a", "b"};
        gemm.name = "layers.0.mlp.fc1";
        gemm.phase = "forward";
        gemm.params = {{"trans_a", int64_t(0)},
                       {"trans_b", int64_t(1)},
                       {"alpha", 1.5},
                       {"beta", 0.0},
                       {"out_dtype", std::string("float32")}};
        const std::vector<float> d = iota<float>(8);
        const std::vector<float> d2 = iota<float>(8, 0.5f);
        QVERIFY(w->addOp(gemm,
                         {{"gpu0", {{DType::Float32, {2, 4}, d.data()}, {DType::Float32, {2, 4}, d2.data()}}},
                          {"gpu1", {{DType::Float32, {2, 4}, d.data()}}}})
                    .ok());

        TraceOp reduce;
        reduce.index = 12;
        reduce.op = "all_reduce";
        reduce.inputs = {"a", "a"};
        reduce.phase = "backward";
        reduce.params = {{"reduce_op", std::string("sum")},
                         {"ranks", std::vector<std::string>{"gpu0", "gpu1"}},
                         {"weights", std::vector<double>{0.25, 0.75}},
                         {"shape_hint", std::vector<int64_t>{2, 3}}};
        QVERIFY(w->addOp(reduce).ok());
        // A streamed output, in pieces.
        QVERIFY(w->beginOutput(12, "gpu1", 0, DType::BFloat16, {256, 256}, gz).ok());
        for (size_t first = 0; first < x.size(); first += 5000)
            QVERIFY(w->snapshot()
                        .appendElements(x.data() + first, std::min<size_t>(5000, x.size() - first))
                        .ok());
        QVERIFY(w->snapshot().endTensor().ok());

        TraceOp layernorm;
        layernorm.index = 3;
        layernorm.op = "layernorm";
        layernorm.inputs = {"layer0/x", "count", "nothing"};
        layernorm.params = {{"eps", 1e-5}};
        QVERIFY(w->addOp(layernorm).ok());
        QVERIFY(w->close().ok());

        FL_WRITE_FIXTURE(QStringLiteral("write_h5_fixtures.py"),
                         (QStringList{"verify-trace", QString::fromStdString(path)}));

        Result<Trace> r = readTrace(path);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const Trace& t = *r;
        // Only the two parameters all_reduce does not know are reported.
        QCOMPARE(t.warnings.size(), size_t(2));
        QCOMPARE(countContaining(t.warnings, "op 'all_reduce': unknown attribute 'shape_hint'"), size_t(1));
        QCOMPARE(countContaining(t.warnings, "op 'all_reduce': unknown attribute 'weights'"), size_t(1));
        QCOMPARE(t.attributes,
                 (std::map<std::string, std::string>{{"model", "llama-tiny"}, {"step", "1200"}}));
        QCOMPARE(t.devices.size(), size_t(2));
        const TraceDevice& r0 = t.devices[0];
        QCOMPARE(r0.label, gpu0.label);
        QCOMPARE(r0.name, gpu0.name);
        QCOMPARE(r0.uuid, gpu0.uuid);
        QCOMPARE(r0.serial, gpu0.serial);
        QCOMPARE(r0.pciBusId, gpu0.pciBusId);
        QCOMPARE(r0.driverVersion, gpu0.driverVersion);
        QCOMPARE(r0.role, gpu0.role);
        QCOMPARE(r0.extra, gpu0.extra);
        QCOMPARE(t.devices[1].uuid, gpu1.uuid);
        QCOMPARE(t.tensorIds, (std::vector<std::string>{"a", "b", "count", "layer0/x", "nothing"}));

        QCOMPARE(t.ops.size(), size_t(3));
        QCOMPARE(t.ops[0].index, size_t(0));
        QCOMPARE(t.ops[1].index, size_t(3));
        QCOMPARE(t.ops[2].index, size_t(12));
        const TraceOp& g = t.ops[0];
        QCOMPARE(g.op, gemm.op);
        QCOMPARE(g.inputs, gemm.inputs);
        QCOMPARE(g.name, gemm.name);
        QCOMPARE(g.phase, gemm.phase);
        QVERIFY(g.params == gemm.params);
        QCOMPARE(g.outputs.at("gpu0"), (std::vector<std::string>{TraceWriter::opOutputPath(0, "gpu0", 0),
                                                                 TraceWriter::opOutputPath(0, "gpu0", 1)}));
        QCOMPARE(readAll<float>(*t.file, g.outputs.at("gpu0")[1]), d2);
        QCOMPARE(readAll<float>(*t.file, g.outputs.at("gpu1")[0]), d);
        const TraceOp& red = t.ops[2];
        QVERIFY(red.params == reduce.params);
        QCOMPARE(red.phase, std::string("backward"));
        QVERIFY(red.name.empty());
        QCOMPARE(red.outputs.at("gpu1"), std::vector<std::string>{"ops/000012/outputs/gpu1/0"});
        QCOMPARE(readAll<uint16_t>(*t.file, "ops/000012/outputs/gpu1/0"), x);
        QVERIFY(t.ops[1].outputs.empty());
        QVERIFY(t.ops[1].params == layernorm.params);

        QCOMPARE(readAll<float>(*t.file, "tensors/a"), a);
        QCOMPARE(readAll<uint16_t>(*t.file, "tensors/layer0/x"), x);
        QCOMPARE(readAll<int64_t>(*t.file, "tensors/count"), std::vector<int64_t>{-42});
        QCOMPARE(t.file->tensors()[*t.file->find("tensors/nothing")].shape, (std::vector<uint64_t>{0, 4}));

        // A second handle on the same file, opened and closed, leaves the trace's reads working.
        {
            auto again = openTensorFile(path);
            QVERIFY(again.ok());
            QCOMPARE(readAll<float>(**again, "tensors/b"), b);
        }
        QCOMPARE(readAll<float>(*t.file, "tensors/b"), b);
    }

    void writerIsStrict_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("problem");
        QTest::addRow("missing input") << 0 << "input 'ghost' is not a tensor";
        QTest::addRow("unknown output device") << 1 << "output device 'gpu9' was not added";
        QTest::addRow("duplicate op") << 2 << "op 1 added twice";
        QTest::addRow("reserved parameter") << 3 << "parameter name 'inputs' is reserved";
        QTest::addRow("format attribute")
            << 4 << "root attribute 'faultline_version' is set by the trace writer";
        QTest::addRow("bad device label") << 5 << "device label 'a/b'";
        QTest::addRow("output of unknown op") << 6 << "op 7 was not added";
    }
    void writerIsStrict()
    {
        QFETCH(int, which);
        QFETCH(QString, problem);
        const std::string path = fixture("strict.h5");
        Result<TraceWriter> w = TraceWriter::create(path);
        QVERIFY(w.ok());
        QVERIFY(w->addDevice(TraceDevice{"gpu0", "", "", "", "", "", "", {}}).ok());
        const float v[2] = {1, 2};
        QVERIFY(w->addTensor("a", {DType::Float32, {2}, v}).ok());
        TraceOp op;
        op.index = 1;
        op.op = "silu";
        op.inputs = {"a"};
        Status s;
        switch (which) {
            case 0:
                op.inputs = {"ghost"};
                s = w->addOp(op);
                break;
            case 1:
                s = w->addOp(op, {{"gpu9", {{DType::Float32, {2}, v}}}});
                break;
            case 2:
                QVERIFY(w->addOp(op).ok());
                s = w->addOp(op);
                break;
            case 3:
                op.params["inputs"] = std::string("x");
                s = w->addOp(op);
                break;
            case 4:
                s = w->setAttribute("faultline_version", int64_t(2));
                break;
            case 5:
                s = w->addDevice(TraceDevice{"a/b", "", "", "", "", "", "", {}});
                break;
            case 6:
                s = w->beginOutput(7, "gpu0", 0, DType::Float32, {2});
                break;
        }
        QVERIFY(!s.ok());
        QVERIFY2(s.message().rfind(path + ": ", 0) == 0, s.message().c_str());
        QVERIFY2(s.message().find(str(problem)) != std::string::npos, s.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "test_trace.moc"
