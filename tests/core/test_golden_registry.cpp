// The golden op registry: every trace v1 op is there, inputs and parameters are validated with
// messages that name the op, the input and what it needs, output shapes and dtypes are inferred.
#include <QtTest>

#include "core/trace/TraceOps.h"
#include "test_golden_util.h"

using namespace faultline;
using namespace faultline::golden;
using namespace goldentest;

namespace {

HostTensor zeros(DType t, std::vector<uint64_t> shape)
{
    return HostTensor(t, std::move(shape));
}

HostTensor f32(std::vector<uint64_t> shape)
{
    return zeros(DType::Float32, std::move(shape));
}

}  // namespace

Q_DECLARE_METATYPE(std::vector<faultline::HostTensor>)
Q_DECLARE_METATYPE(faultline::golden::OpParams)

class TestGoldenRegistry : public QObject {
    Q_OBJECT

private slots:
    void everyTraceOpIsRegistered()
    {
        const char* ops[] = {
            "gemm", "layernorm", "rmsnorm",    "softmax",    "gelu",           "silu",     "add",
            "mul",  "attention", "all_reduce", "all_gather", "reduce_scatter", "broadcast"};
        // The loss, embedding and backward ops of a training step (#22).
        const char* training[] = {
            "embedding", "embedding_backward", "log_softmax", "log_softmax_backward", "nll_loss",
            "nll_loss_total_weight", "nll_loss_backward", "softmax_backward", "layernorm_backward_input",
            "layernorm_backward_weight", "layernorm_backward_bias", "gelu_backward", "silu_backward",
            // element-wise ops, selections and sums (test_golden_pointwise.cpp)
            "sub", "div", "neg", "sqrt", "rsqrt", "exp", "pow", "addcmul", "addcdiv", "lerp", "dropout",
            "masked_fill", "where", "triu", "tril", "cat", "sum", "mean"};
        QCOMPARE(goldenOps().size(), traceOpTable().size());
        std::vector<const char*> all(std::begin(ops), std::end(ops));
        all.insert(all.end(), std::begin(training), std::end(training));
        for (const char* op : all) {
            const GoldenOp* def = findGoldenOp(op);
            QVERIFY2(def, op);
            QCOMPARE(def->name, std::string_view(op));
            QVERIFY(def->infer && def->run && def->bound);
            QVERIFY(!def->signature.empty());
        }
        QVERIFY(findGoldenOp("conv2d") == nullptr);
        const Result<HostTensor> r = runGolden("conv2d", {}, {});
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.message()),
                 QStringLiteral("op conv2d: the golden model has no such op"));
    }

    void inference_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<std::vector<HostTensor>>("inputs");
        QTest::addColumn<OpParams>("params");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QList<int>>("shape");
        QTest::newRow("gemm") << "gemm" << std::vector<HostTensor>{f32({4, 5}), f32({5, 6})} << OpParams{}
                              << int(DType::Float32) << QList<int>{4, 6};
        QTest::newRow("gemm trans") << "gemm" << std::vector<HostTensor>{f32({5, 4}), f32({6, 5})}
                                    << OpParams{{"trans_a", int64_t(1)}, {"trans_b", std::string("true")}}
                                    << int(DType::Float32) << QList<int>{4, 6};
        QTest::newRow("gemm batch broadcast")
            << "gemm" << std::vector<HostTensor>{f32({2, 1, 4, 5}), f32({3, 5, 6})} << OpParams{}
            << int(DType::Float32) << QList<int>{2, 3, 4, 6};
        QTest::newRow("gemm out_dtype")
            << "gemm"
            << std::vector<HostTensor>{zeros(DType::BFloat16, {4, 5}), zeros(DType::BFloat16, {5, 6})}
            << OpParams{{"out_dtype", std::string("float32")}} << int(DType::Float32) << QList<int>{4, 6};
        QTest::newRow("gemm bf16 default")
            << "gemm"
            << std::vector<HostTensor>{zeros(DType::BFloat16, {4, 5}), zeros(DType::BFloat16, {5, 6})}
            << OpParams{} << int(DType::BFloat16) << QList<int>{4, 6};
        QTest::newRow("gemm with C") << "gemm" << std::vector<HostTensor>{f32({4, 5}), f32({5, 6}), f32({6})}
                                     << OpParams{{"beta", 1.0}} << int(DType::Float32) << QList<int>{4, 6};
        QTest::newRow("layernorm") << "layernorm"
                                   << std::vector<HostTensor>{zeros(DType::Float16, {2, 3, 8}), f32({8}),
                                                              f32({8})}
                                   << OpParams{} << int(DType::Float16) << QList<int>{2, 3, 8};
        QTest::newRow("rmsnorm") << "rmsnorm" << std::vector<HostTensor>{f32({3, 8}), f32({8})}
                                 << OpParams{{"eps", 1e-6}} << int(DType::Float32) << QList<int>{3, 8};
        QTest::newRow("softmax") << "softmax" << std::vector<HostTensor>{f32({3, 8})}
                                 << OpParams{{"scale", 0.5}} << int(DType::Float32) << QList<int>{3, 8};
        QTest::newRow("gelu") << "gelu" << std::vector<HostTensor>{zeros(DType::BFloat16, {7})}
                              << OpParams{{"approximate", std::string("tanh")}} << int(DType::BFloat16)
                              << QList<int>{7};
        QTest::newRow("silu") << "silu" << std::vector<HostTensor>{f32({7, 1})} << OpParams{}
                              << int(DType::Float32) << QList<int>{7, 1};
        QTest::newRow("add") << "add" << std::vector<HostTensor>{f32({2, 2}), f32({2, 2})} << OpParams{}
                             << int(DType::Float32) << QList<int>{2, 2};
        QTest::newRow("mul") << "mul"
                             << std::vector<HostTensor>{zeros(DType::BFloat16, {3, 4}),
                                                        zeros(DType::BFloat16, {3, 4})}
                             << OpParams{} << int(DType::BFloat16) << QList<int>{3, 4};
        QTest::newRow("attention") << "attention"
                                   << std::vector<HostTensor>{f32({2, 4, 10, 16}), f32({2, 4, 12, 16}),
                                                              f32({2, 4, 12, 8})}
                                   << OpParams{{"causal", int64_t(0)}} << int(DType::Float32)
                                   << QList<int>{2, 4, 10, 8};
        QTest::newRow("all_reduce") << "all_reduce" << std::vector<HostTensor>{f32({5}), f32({5}), f32({5})}
                                    << OpParams{{"reduce_op", std::string("max")}} << int(DType::Float32)
                                    << QList<int>{5};
        QTest::newRow("all_gather") << "all_gather"
                                    << std::vector<HostTensor>{zeros(DType::BFloat16, {2, 3}),
                                                               zeros(DType::BFloat16, {2, 3}),
                                                               zeros(DType::BFloat16, {2, 3})}
                                    << OpParams{{"ranks", std::vector<std::string>{"g0", "g1", "g2"}}}
                                    << int(DType::BFloat16) << QList<int>{6, 3};
        QTest::newRow("reduce_scatter")
            << "reduce_scatter" << std::vector<HostTensor>{f32({4, 3}), f32({4, 3})}
            << OpParams{{"reduce_op", std::string("sum")}} << int(DType::Float32) << QList<int>{4, 3};
        QTest::newRow("broadcast") << "broadcast" << std::vector<HostTensor>{f32({5}), f32({5})}
                                   << OpParams{{"root", int64_t(1)}} << int(DType::Float32) << QList<int>{5};
    }
    void inference()
    {
        QFETCH(QString, op);
        QFETCH(std::vector<HostTensor>, inputs);
        QFETCH(OpParams, params);
        QFETCH(int, dtype);
        QFETCH(QList<int>, shape);
        const Result<OutputSpec> spec = inferGoldenOutput(op.toStdString(), inputs, params);
        QVERIFY2(spec.ok(), spec.ok() ? "" : spec.message().c_str());
        QCOMPARE(int(spec->dtype), dtype);
        std::vector<uint64_t> want;
        for (int d : shape) want.push_back(uint64_t(d));
        QCOMPARE(spec->shape, want);
        // run agrees with infer
        const Result<HostTensor> out = runGolden(op.toStdString(), inputs, params);
        QVERIFY2(out.ok(), out.ok() ? "" : out.message().c_str());
        QCOMPARE(out->shape, want);
        QCOMPARE(int(out->dtype), dtype);
    }

    void validationErrors_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<std::vector<HostTensor>>("inputs");
        QTest::addColumn<OpParams>("params");
        QTest::addColumn<QString>("message");
        using V = std::vector<HostTensor>;
        QTest::newRow("gemm count") << "gemm" << V{f32({2, 2})} << OpParams{}
                                    << "op gemm: needs 2 or 3 inputs (A, B[, C]), got 1 input";
        QTest::newRow("gemm k mismatch") << "gemm" << V{f32({16, 48}), f32({64, 32})} << OpParams{}
                                         << "op gemm: inputs[1] has shape [64, 32] but trans_b=0 needs [k, "
                                            "n] with k = 48 (from inputs[0] [16, 48], trans_a=0)";
        QTest::newRow("gemm k mismatch trans_b")
            << "gemm" << V{f32({16, 48}), f32({64, 32})} << OpParams{{"trans_b", int64_t(1)}}
            << "op gemm: inputs[1] has shape [64, 32] but trans_b=1 needs [n, k] with k = 48 (from inputs[0] "
               "[16, 48], trans_a=0)";
        QTest::newRow("gemm rank")
            << "gemm" << V{f32({5}), f32({5, 2})} << OpParams{}
            << "op gemm: inputs[0] (A) has shape [5] but needs at least 2 dimensions ([..., m, k])";
        QTest::newRow("gemm batch")
            << "gemm" << V{f32({2, 4, 5}), f32({3, 5, 6})} << OpParams{}
            << "op gemm: batch dimensions of inputs[0] [2] and inputs[1] [3] neither match nor broadcast";
        QTest::newRow("gemm C")
            << "gemm" << V{f32({4, 5}), f32({5, 6}), f32({4})} << OpParams{{"beta", 1.0}}
            << "op gemm: inputs[2] (C) has shape [4] which does not broadcast to the output shape [4, 6]";
        QTest::newRow("gemm out_dtype")
            << "gemm" << V{f32({4, 5}), f32({5, 6})} << OpParams{{"out_dtype", std::string("int8")}}
            << "op gemm: parameter out_dtype=int8 is not one of float32, bfloat16, float16, float8_e4m3fn, "
               "float8_e5m2";
        QTest::newRow("gemm trans value")
            << "gemm" << V{f32({4, 5}), f32({5, 6})} << OpParams{{"trans_a", int64_t(2)}}
            << "op gemm: parameter trans_a=2 is not a boolean (0/1, true/false)";
        QTest::newRow("gemm alpha kind")
            << "gemm" << V{f32({4, 5}), f32({5, 6})} << OpParams{{"alpha", std::string("x")}}
            << "op gemm: parameter alpha=x is not a number";
        QTest::newRow("dtype") << "gemm" << V{zeros(DType::Float64, {4, 5}), f32({5, 6})} << OpParams{}
                               << "op gemm: inputs[0] has dtype float64; the golden model reads float32, "
                                  "bfloat16, float16, float8_e4m3fn, float8_e5m2";
        HostTensor shortBytes = f32({4, 5});
        shortBytes.data.resize(10);
        QTest::newRow("bytes")
            << "add" << V{f32({4, 5}), shortBytes} << OpParams{}
            << "op add: inputs[1] has shape [4, 5] of float32 (80 bytes) but holds 10 bytes";
        QTest::newRow("mul shape")
            << "mul" << V{f32({4, 5}), f32({4, 4})} << OpParams{}
            << "op mul: inputs[1] has shape [4, 4], which does not broadcast with [4, 5]";
        QTest::newRow("add shape")
            << "add" << V{f32({4, 5}), f32({5, 4})} << OpParams{}
            << "op add: inputs[1] has shape [5, 4], which does not broadcast with [4, 5]";
        QTest::newRow("layernorm gamma") << "layernorm" << V{f32({3, 8}), f32({7}), f32({8})} << OpParams{}
                                         << "op layernorm: inputs[1] (gamma) has shape [7] but needs [8] "
                                            "(the last dimension of inputs[0])";
        QTest::newRow("layernorm eps")
            << "layernorm" << V{f32({3, 8}), f32({8}), f32({8})} << OpParams{{"eps", -1.0}}
            << "op layernorm: parameter eps=-1.000000 must be finite and >= 0";
        QTest::newRow("rmsnorm eps missing")
            << "rmsnorm" << V{f32({3, 8}), f32({8})} << OpParams{} << "op rmsnorm: missing parameter eps";
        QTest::newRow("softmax scalar")
            << "softmax" << V{f32({})} << OpParams{}
            << "op softmax: inputs[0] (x) has shape [] but needs at least one dimension";
        QTest::newRow("gelu approximate")
            << "gelu" << V{f32({3})} << OpParams{{"approximate", std::string("fast")}}
            << "op gelu: parameter approximate=fast is not none or tanh";
        QTest::newRow("attention rank")
            << "attention" << V{f32({4, 10, 16}), f32({2, 4, 12, 16}), f32({2, 4, 12, 8})} << OpParams{}
            << "op attention: inputs[0] (q) has shape [4, 10, 16] but needs 4 dimensions [b, h, sq, d]";
        QTest::newRow("attention k") << "attention"
                                     << V{f32({2, 4, 10, 16}), f32({2, 4, 12, 15}), f32({2, 4, 12, 8})}
                                     << OpParams{}
                                     << "op attention: inputs[1] (k) has shape [2, 4, 12, 15] but q [2, 4, "
                                        "10, 16] needs [2, 4, sk, 16]";
        QTest::newRow("attention v") << "attention"
                                     << V{f32({2, 4, 10, 16}), f32({2, 4, 12, 16}), f32({2, 4, 11, 8})}
                                     << OpParams{}
                                     << "op attention: inputs[2] (v) has shape [2, 4, 11, 8] but q [2, 4, "
                                        "10, 16] and k [2, 4, 12, 16] need [2, 4, 12, dv]";
        QTest::newRow("all_reduce mismatch")
            << "all_reduce" << V{f32({5}), zeros(DType::BFloat16, {5})} << OpParams{}
            << "op all_reduce: inputs[1] is bfloat16 [5] but every rank needs inputs[0]'s float32 [5]";
        QTest::newRow("all_reduce op")
            << "all_reduce" << V{f32({5})} << OpParams{{"reduce_op", std::string("avg")}}
            << "op all_reduce: parameter reduce_op=avg is not sum, max or min";
        QTest::newRow("all_reduce ranks")
            << "all_reduce" << V{f32({5}), f32({5})} << OpParams{{"ranks", std::vector<std::string>{"gpu0"}}}
            << "op all_reduce: parameter ranks=[\"gpu0\"] names 1 rank(s) but there are 2 inputs";
        QTest::newRow("all_gather mismatch")
            << "all_gather" << V{f32({2, 5}), f32({3, 5})} << OpParams{}
            << "op all_gather: inputs[1] is float32 [3, 5] but every rank needs inputs[0]'s float32 [2, 5]";
        QTest::newRow("all_gather scalar")
            << "all_gather" << V{f32({}), f32({})} << OpParams{}
            << "op all_gather: inputs[0] is a scalar but ranks are split and joined along dim 0";
        QTest::newRow("reduce_scatter split")
            << "reduce_scatter" << V{f32({5, 2}), f32({5, 2})} << OpParams{}
            << "op reduce_scatter: dim 0 of [5, 2] does not split into 2 equal blocks (one per rank)";
        QTest::newRow("reduce_scatter op")
            << "reduce_scatter" << V{f32({2}), f32({2})} << OpParams{{"reduce_op", std::string("avg")}}
            << "op reduce_scatter: parameter reduce_op=avg is not sum, max or min";
        QTest::newRow("broadcast root")
            << "broadcast" << V{f32({5}), f32({5})} << OpParams{{"root", int64_t(2)}}
            << "op broadcast: parameter root=2 is not a rank of the 2 inputs";
        QTest::newRow("broadcast ranks")
            << "broadcast" << V{f32({5}), f32({5})}
            << OpParams{{"ranks", std::vector<std::string>{"a", "b", "c"}}}
            << "op broadcast: parameter ranks=[\"a\", \"b\", \"c\"] names 3 rank(s) but there are 2 inputs";
        QTest::newRow("output too large")
            << "gemm" << V{f32({1 << 16, 1, 1, 0}), f32({1, 1 << 16, 0, 1 << 10})} << OpParams{}
            << "op gemm: output shape [65536, 65536, 1, 1024] has more than 2^31 elements";
    }
    void validationErrors()
    {
        QFETCH(QString, op);
        QFETCH(std::vector<HostTensor>, inputs);
        QFETCH(OpParams, params);
        QFETCH(QString, message);
        const std::string name = op.toStdString();
        const Result<OutputSpec> spec = inferGoldenOutput(name, inputs, params);
        QVERIFY(!spec.ok());
        QCOMPARE(QString::fromStdString(spec.message()), message);
        const Result<HostTensor> out = runGolden(name, inputs, params);
        QVERIFY(!out.ok());
        QCOMPARE(QString::fromStdString(out.message()), message);
        const Result<std::vector<double>> bound = goldenErrorBound(name, inputs, params, f32({1}));
        QVERIFY(!bound.ok());
        QCOMPARE(QString::fromStdString(bound.message()), message);
    }

    void boundChecksTheGoldenTensor()
    {
        const std::vector<HostTensor> in = {f32({4, 5}), f32({5, 6})};
        const Result<std::vector<double>> r = goldenErrorBound("gemm", in, {}, f32({6, 4}));
        QVERIFY(!r.ok());
        QCOMPARE(
            QString::fromStdString(r.message()),
            QStringLiteral("op gemm: golden output is float32 [6, 4] but the op produces float32 [4, 6]"));
    }

    void unknownParams()
    {
        const OpParams p{{"trans_a", int64_t(0)}, {"zeta", 1.0}};
        // A parameter the op does not read is an error: judging without it compares another
        // computation. What the capture package records on every op is not a parameter.
        const std::vector<HostTensor> in{f32({2, 2}), f32({2, 2})};
        const auto refused = runGolden("gemm", in, p);
        QVERIFY(!refused.ok());
        QVERIFY2(
            refused.message().find("parameter 'zeta' is not one the golden model reads") != std::string::npos,
            refused.message().c_str());
        QVERIFY(!inferGoldenOutput("gemm", in, p).ok());
        const OpParams captured{
            {"trans_a", int64_t(0)}, {"aten", std::string("aten::mm")}, {"allow_tf32", int64_t(0)}};
        QVERIFY(runGolden("gemm", in, captured).ok());
        // Nor is how a cuda target replays it (kernels/CudaOpSettings.h): a gemm recorded as
        // cuBLASLt with TF32 is judged like any other, not refused.
        const OpParams replayed{{"impl", std::string("cublaslt")},
                                {"tf32", int64_t(1)},
                                {"compute_type", std::string("32F_FAST_TF32")},
                                {"algo", int64_t(2)},
                                {"workspace", int64_t(1024)}};
        QVERIFY(runGolden("gemm", in, replayed).ok());
        QVERIFY(goldenErrorBound("gemm", in, replayed, *runGolden("gemm", in, replayed)).ok());
        // ... but only on ops this version knows.
        QVERIFY(!isKnownTraceOpAttribute("no_such_op", "impl"));
        QVERIFY(isKnownTraceOpAttribute("gemm", "math_mode"));
    }

    void boundCheckClasses()
    {
        const double inf = INFINITY, nan = NAN;
        const std::vector<double> golden = {1.0, nan, inf, -inf, 2.0, 0.0};
        const std::vector<double> bound = {0.5, inf, inf, inf, 0.0, 0.0};
        const BoundCheck ok =
            checkWithinBound(std::vector<double>{1.4, nan, inf, -inf, 2.0, -0.0}, golden, bound);
        QCOMPARE(ok.violations, uint64_t(0));
        QCOMPARE(ok.checked, uint64_t(6));
        const BoundCheck bad =
            checkWithinBound(std::vector<double>{1.6, 0.0, -inf, inf, 2.0000001, nan}, golden, bound);
        QCOMPARE(bad.violations, uint64_t(6));  // every one: over, NaN, wrong infinities, bound 0, NaN
        QCOMPARE(bad.firstViolation, int64_t(0));
        QCOMPARE(bad.worstRatio, inf);
    }
};

QTEST_APPLESS_MAIN(TestGoldenRegistry)
#include "test_golden_registry.moc"
