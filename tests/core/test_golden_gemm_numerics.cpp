// Bounds that follow a GEMM's recorded numerics (core/golden/RecordedNumerics.h,
// docs/numerics/gemm-bounds.md): the split-K bound of cuBLAS's reduced-precision reduction on
// synthetic data (bf16 and fp16), the judgement each recorded setting selects, the flushed
// subnormals of oneDNN, and the production-order emulation of PyTorch 1.13's CPU kernels on
// inputs built so that the order shows.
#include <QtTest>

#include <cmath>

#include "core/golden/RecordedNumerics.h"
#include "test_golden_util.h"

using namespace faultline;
using namespace faultline::golden;
using namespace goldentest;

namespace {

float roundTo(DType t, float x)
{
    return representable(t, {x})[0];
}

// cuBLAS-style split-K with a reduced-precision reduction: k cut into `splits` contiguous parts,
// each summed in float (k ascending), rounded to `t`, the parts summed in `t` in order, then
// alpha and beta C in `t`. a: m x k, b: k x n row-major; returns m x n.
std::vector<double> splitKReference(DType t, const std::vector<float>& a, const std::vector<float>& b,
                                    const std::vector<float>& c, int64_t m, int64_t n, int64_t k,
                                    int64_t splits, float alpha, float beta)
{
    std::vector<double> out(size_t(m * n));
    const int64_t per = (k + splits - 1) / splits;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (int64_t s = 0; s * per < k; ++s) {
                float part = 0.0f;
                for (int64_t l = s * per; l < std::min(k, (s + 1) * per); ++l)
                    part = std::fma(a[size_t(i * k + l)], b[size_t(l * n + j)], part);
                sum = roundTo(t, sum + roundTo(t, part));
            }
            float r = roundTo(t, alpha * sum);
            if (beta != 0.0f) r = roundTo(t, r + roundTo(t, beta * c[size_t(i * n + j)]));
            out[size_t(i * n + j)] = r;
        }
    return out;
}

OpParams cudaGemm(int64_t rpr, const std::string& aten, const std::string& torch)
{
    OpParams p{{"device_type", std::string("cuda")}, {"aten", aten}, {"reduced_precision_reduction", rpr}};
    if (!torch.empty()) p["torch_version"] = torch;
    return p;
}

// What faultline_capture records on a CPU gemm op of this machine's kind (docs/capture.md).
OpParams cpuGemm(const std::string& torch, const std::string& aten, std::vector<int64_t> aStrides,
                 std::vector<int64_t> bStrides, const std::string& flags)
{
    return {{"device_type", std::string("cpu")},
            {"aten", aten},
            {"torch_version", torch},
            {"torch_threads", int64_t(1)},
            {"mkldnn", int64_t(1)},
            {"onednn_version", std::string("2.6.3")},
            {"cpu_capability", std::string("AVX2")},
            {"cpu_flags", flags},
            {"a_strides", aStrides},
            {"b_strides", bStrides}};
}

const std::string kAvx512Bf16 = "avx2 fma avx512f avx512bw avx512vl avx512dq avx512_bf16";
const std::string kAvx2Only = "avx2 fma";

std::vector<HostTensor> bf16Operands(int64_t m, int64_t k, int64_t n, const std::vector<float>& a,
                                     const std::vector<float>& b)
{
    return {tensor(DType::BFloat16, {uint64_t(m), uint64_t(k)}, a),
            tensor(DType::BFloat16, {uint64_t(k), uint64_t(n)}, b)};
}

}  // namespace

class TestGoldenGemmNumerics : public QObject {
    Q_OBJECT

private slots:
    void splitKBound_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("splits");
        QTest::addColumn<int>("data");
        for (DType t : {DType::BFloat16, DType::Float16})
            for (int k : {64, 512, 4096})
                for (int s : {2, 4, 16, 64})
                    for (Data d : {Data::Normal, Data::Uniform, Data::WideRange}) {
                        if (s > k / 8) continue;
                        if (t == DType::Float16 && d == Data::WideRange) continue;  // 2^+-20 overflows fp16
                        QTest::addRow("%s k=%d s=%d data=%d", t == DType::BFloat16 ? "bf16" : "fp16", k, s,
                                      int(d))
                            << int(t) << k << s << int(d);
                    }
    }

    // The split-K bound holds for any split count up to the one it is given, and grows with the
    // splits, not with k: far tighter than k u_narrow, and needed (the float bound alone fails).
    void splitKBound()
    {
        QFETCH(int, dtype);
        QFETCH(int, k);
        QFETCH(int, splits);
        QFETCH(int, data);
        const DType t = DType(dtype);
        const int64_t m = 6, n = 7;
        const float scale = t == DType::Float16 ? 0.25f : 1.0f;  // keep fp16 sums in range
        const auto a = representable(t, randomValues(size_t(m * k), uint32_t(k + splits), Data(data), scale));
        const auto b =
            representable(t, randomValues(size_t(k * n), uint32_t(7 * k + splits), Data(data), scale));
        const auto c = representable(t, randomValues(size_t(m * n), 3u, Data::Normal));
        const std::vector<HostTensor> in = {tensor(t, {uint64_t(m), uint64_t(k)}, a),
                                            tensor(t, {uint64_t(k), uint64_t(n)}, b),
                                            tensor(t, {uint64_t(m), uint64_t(n)}, c)};
        const OpParams params{{"alpha", 1.5}, {"beta", 0.5}};
        auto golden = runGolden("gemm", in, params);
        QVERIFY2(golden, golden ? "" : golden.message().c_str());
        const std::vector<double> split = splitKReference(t, a, b, c, m, n, k, splits, 1.5f, 0.5f);

        BoundOptions withSplit;
        withSplit.accumulationUnitRoundoff = 0x1p-23;
        withSplit.splitCount = splits;
        withSplit.splitUnitRoundoff = unitRoundoff(t);
        auto bound = goldenErrorBound("gemm", in, params, *golden, withSplit);
        QVERIFY(bound);
        const BoundCheck inside = check(split, *golden, *bound);
        QVERIFY2(inside.violations == 0, qPrintable(describe(inside, split, *golden, *bound)));
        qDebug("worst |split-K - golden| / bound: %.3g", inside.worstRatio);

        // Much tighter than accumulating in the narrow type over all of k.
        BoundOptions narrow;
        narrow.accumulationUnitRoundoff = unitRoundoff(t);
        auto wide = goldenErrorBound("gemm", in, params, *golden, narrow);
        QVERIFY(wide);
        double sumSplit = 0, sumWide = 0;
        for (size_t e = 0; e < bound->size(); ++e) {
            sumSplit += (*bound)[e];
            sumWide += (*wide)[e];
        }
        QVERIFY2(sumSplit < sumWide * (double(splits) + 2.0) / double(k) * 1.5,
                 qPrintable(QStringLiteral("split bound %1, k-wide bound %2").arg(sumSplit).arg(sumWide)));
    }

    // The float-accumulation bound alone does not cover a narrow reduction of the parts.
    void splitKNeedsItsBound()
    {
        const DType t = DType::BFloat16;
        const int64_t m = 8, n = 8, k = 1024, splits = 16;
        size_t violations = 0;
        for (uint32_t seed = 1; seed <= 4; ++seed) {
            const auto a = representable(t, randomValues(size_t(m * k), seed, Data::Normal));
            const auto b = representable(t, randomValues(size_t(k * n), seed + 100, Data::Normal));
            const std::vector<HostTensor> in = bf16Operands(m, k, n, a, b);
            auto golden = runGolden("gemm", in, {});
            QVERIFY(golden);
            auto strict = goldenErrorBound("gemm", in, {}, *golden, {});
            QVERIFY(strict);
            const auto split = splitKReference(t, a, b, {}, m, n, k, splits, 1.0f, 0.0f);
            violations += check(split, *golden, *strict).violations;
        }
        QVERIFY2(violations > 0,
                 "a bf16 split-K reduction never left the float bound: the test shows nothing");
    }

    void recordedJudgement_data()
    {
        QTest::addColumn<QString>("device");  // cuda | cpu
        QTest::addColumn<QString>("what");
        QTest::addColumn<bool>("loose");
        QTest::addColumn<bool>("emulated");
        QTest::addColumn<int>("splits");
        QTest::addColumn<QString>("model");
        // CUDA: float accumulation by default; split-K only where the narrow reduction may run.
        QTest::newRow("cuda rpr=0 mm") << "cuda"
                                       << "rpr0 mm 2.4" << false << false << 0 << "float32 accumulation";
        QTest::newRow("cuda rpr=1 bf16") << "cuda"
                                         << "rpr1 mm 2.4" << true << false << 32 << "split-K with up to 32";
        QTest::newRow("cuda rpr=1 fp16") << "cuda"
                                         << "rpr1 mm 2.4 fp16" << true << false << 64 << "split-K";
        QTest::newRow("cuda rpr=1 split_k_max") << "cuda"
                                                << "rpr1 mm 2.4 max4" << true << false << 4 << "up to 4";
        QTest::newRow("cuda lt addmm < 2.8") << "cuda"
                                             << "rpr0 addmm 2.3" << true << false << 32 << "cuBLASLt";
        QTest::newRow("cuda lt addmm 2.8") << "cuda"
                                           << "rpr0 addmm 2.8" << false << false << 0 << "float32";
        QTest::newRow("cuda lt preferred") << "cuda"
                                           << "rpr0 mm 2.5 lt" << true << false << 32 << "cuBLASLt";
        // CPU: the recorded kernel.
        QTest::newRow("cpu old trace") << "cpu"
                                       << "old" << true << false << 0 << "torch_version not recorded";
        QTest::newRow("cpu 2.4 mm") << "cpu"
                                    << "2.4 mm" << false << false << 0 << "float32 accumulation";
        QTest::newRow("cpu 2.4 small bmm") << "cpu"
                                           << "2.4 bmm" << true << false << 0 << "small bmm";
        QTest::newRow("cpu 2.0 seq") << "cpu"
                                     << "2.0 seq" << true << false << 0 << "bfloat16 accumulation";
        QTest::newRow("cpu 1.13 seq") << "cpu"
                                      << "1.13 seq" << false << true << 0 << "emulated bit for bit";
        QTest::newRow("cpu 1.13 dot") << "cpu"
                                      << "1.13 dot" << false << true << 0 << "gemm_transa_";
        QTest::newRow("cpu 1.13 onednn") << "cpu"
                                         << "1.13 onednn" << false << true << 0 << "oneDNN brgemm";
        QTest::newRow("cpu 1.13 onednn, no avx512_bf16")
            << "cpu"
            << "1.13 onednn emulated-bf16" << false << false << 0 << "float32 accumulation";
        QTest::newRow("cpu 1.13 no threads") << "cpu"
                                             << "1.13 seq nothreads" << true << false << 0 << "torch_threads";
        QTest::newRow("cpu 1.13 no strides") << "cpu"
                                             << "1.13 seq nostrides" << true << false << 0 << "a_strides";
    }

    // Each recorded setting selects its judgement; missing settings keep the old, loose one.
    void recordedJudgement()
    {
        QFETCH(QString, device);
        QFETCH(QString, what);
        QFETCH(bool, loose);
        QFETCH(bool, emulated);
        QFETCH(int, splits);
        QFETCH(QString, model);
        const bool fp16 = what.contains("fp16");
        const DType t = fp16 ? DType::Float16 : DType::BFloat16;
        OpParams p;
        std::vector<HostTensor> in;
        if (device == "cuda") {
            const QStringList w = what.split(' ');
            p = cudaGemm(w[0] == "rpr1" ? 1 : 0, "aten::" + w[1].toStdString(), w[2].toStdString());
            if (what.contains("max4")) p["split_k_max"] = int64_t(4);
            if (what.endsWith(" lt")) p["blas_library"] = std::string("cublaslt");
            in = {tensor(t, {4, 256}, std::vector<float>(1024, 1.0f)),
                  tensor(t, {256, 4}, std::vector<float>(1024, 1.0f))};
        } else if (what == "old") {
            p = {{"device_type", std::string("cpu")}};
            in = bf16Operands(2, 3, 2, std::vector<float>(6, 1.0f), std::vector<float>(6, 1.0f));
        } else if (what.startsWith("2.4")) {
            const bool bmm = what.contains("bmm");
            p = {{"device_type", std::string("cpu")},
                 {"torch_version", std::string("2.4.1+cpu")},
                 {"aten", std::string(bmm ? "aten::bmm" : "aten::mm")}};
            in = bmm ? std::vector<HostTensor>{tensor(t, {2, 3, 4}, std::vector<float>(24, 1.0f)),
                                               tensor(t, {2, 4, 5}, std::vector<float>(40, 1.0f))}
                     : bf16Operands(3, 4, 5, std::vector<float>(12, 1.0f), std::vector<float>(20, 1.0f));
        } else {
            const bool onednn = what.contains("onednn");
            const int64_t m = onednn ? 32 : 2, k = onednn ? 64 : 3, n = onednn ? 16 : 2;
            const bool dot = what.contains("dot");  // nn.Linear: B = W.t()
            p = cpuGemm(
                what.startsWith("2.0") ? "2.0.1" : "1.13.0a0", "aten::mm", {k, 1},
                dot ? std::vector<int64_t>{1, k} : std::vector<int64_t>{n, 1},
                what.contains("emulated-bf16") ? "avx2 fma avx512f avx512bw avx512vl avx512dq" : kAvx512Bf16);
            if (what.contains("nothreads")) p.erase("torch_threads");
            if (what.contains("nostrides")) p.erase("a_strides");
            in = {tensor(t, {uint64_t(m), uint64_t(k)}, std::vector<float>(size_t(m * k), 0.5f)),
                  dot ? tensor(t, {uint64_t(n), uint64_t(k)}, std::vector<float>(size_t(k * n), 0.25f))
                      : tensor(t, {uint64_t(k), uint64_t(n)}, std::vector<float>(size_t(k * n), 0.25f))};
            if (dot) p["trans_b"] = int64_t(1);
        }
        const RecordedJudgement j = faultline::golden::recordedJudgement("gemm", p, in);
        QVERIFY2(QString::fromStdString(j.model).contains(model), j.model.c_str());
        QCOMPARE(j.loose, loose);
        QCOMPARE(j.emulated, emulated);
        QCOMPARE(j.options.splitCount, int64_t(splits));
        auto ref = recordedReference("gemm", in, p);
        QVERIFY2(ref, ref ? "" : ref.message().c_str());
        if (emulated)
            for (double b : ref->bound) QCOMPARE(b, 0.0);
    }

    // How a cuda target replays a float32 gemm (impl, tf32, math_mode, compute_type) decides how
    // its operands are rounded, and so the bound; through cuBLAS a narrow gemm is judged as CUDA's.
    void replaySettingsWidenTheBound_data()
    {
        QTest::addColumn<QString>("settings");  // key=value;...
        QTest::addColumn<bool>("tf32");
        QTest::addColumn<double>("operandRoundoff");
        QTest::newRow("none") << "" << false << 0.0;
        QTest::newRow("golden impl") << "impl=golden" << false << 0.0;
        QTest::newRow("cublaslt tf32=1") << "impl=cublaslt;tf32=1" << true << 0.0;
        QTest::newRow("cublas math_mode")
            << "impl=CUBLAS;math_mode=CUBLAS_TF32_TENSOR_OP_MATH" << true << 0.0;
        QTest::newRow("cublas math_mode short") << "library=cublas;math_mode=tf32" << true << 0.0;
        QTest::newRow("lt fast tf32")
            << "impl=cublaslt;compute_type=CUBLAS_COMPUTE_32F_FAST_TF32" << true << 0.0;
        QTest::newRow("lt pedantic") << "impl=cublaslt;compute_type=32F_PEDANTIC" << false << 0.0;
        QTest::newRow("lt fast 16bf") << "impl=cublaslt;compute_type=32F_FAST_16BF" << false << 0x1p-8;
        QTest::newRow("lt fast 16f") << "impl=cublaslt;compute_type=cublas_compute_32f_fast_16f" << false
                                     << 0x1p-11;
    }
    void replaySettingsWidenTheBound()
    {
        QFETCH(QString, settings);
        QFETCH(bool, tf32);
        QFETCH(double, operandRoundoff);
        OpParams p;
        for (const QString& kv : settings.split(';', Qt::SkipEmptyParts)) {
            const QStringList parts = kv.split('=');
            bool number = false;
            const int64_t v = parts[1].toLongLong(&number);
            if (number)
                p[parts[0].toStdString()] = v;
            else
                p[parts[0].toStdString()] = parts[1].toStdString();
        }
        std::vector<float> a(1024), b(1024);
        for (size_t i = 0; i < a.size(); ++i)
            a[i] = 1.0f + float(i % 7) / 7.0f, b[i] = 1.0f - float(i % 5) / 11.0f;
        const std::vector<HostTensor> in{tensor(DType::Float32, {4, 256}, a),
                                         tensor(DType::Float32, {256, 4}, b)};
        const RecordedJudgement j = faultline::golden::recordedJudgement("gemm", p, in);
        QCOMPARE(j.options.tf32, tf32);
        QCOMPARE(j.options.operandUnitRoundoff, operandRoundoff);
        QCOMPARE(j.model.empty(), !tf32 && operandRoundoff == 0.0);
        // The golden model accepts the settings, and the bound they give is wider where operands round.
        auto golden = runGolden("gemm", in, p);
        QVERIFY2(golden, golden ? "" : golden.message().c_str());
        auto strict = goldenErrorBound("gemm", in, p, *golden);
        auto recorded = goldenErrorBound("gemm", in, p, *golden, j.options);
        QVERIFY(strict && recorded);
        const bool wider = tf32 || operandRoundoff > 0;
        QCOMPARE((*recorded)[0] > 4 * (*strict)[0], wider);
    }

    void narrowGemmThroughCublasIsJudgedAsCuda()
    {
        const std::vector<HostTensor> in{tensor(DType::BFloat16, {4, 256}, std::vector<float>(1024, 1.0f)),
                                         tensor(DType::BFloat16, {256, 4}, std::vector<float>(1024, 1.0f))};
        const RecordedJudgement lt =
            faultline::golden::recordedJudgement("gemm", {{"impl", std::string("cublaslt")}}, in);
        QVERIFY2(QString::fromStdString(lt.model).contains("float32 accumulation (cuBLAS"), lt.model.c_str());
        QCOMPARE(lt.options.accumulationUnitRoundoff, 0x1p-23);
        const RecordedJudgement plain = faultline::golden::recordedJudgement("gemm", {}, in);
        QVERIFY(plain.model.empty());
    }

    // Every product and partial sum rounded to bf16 (ATen's seq kernel): 1 + 4 x 2^-9 stays 1,
    // where the golden order gives 1 + 2^-7. The reference is the production order, bound 0.
    void emulatesTheSeqKernel()
    {
        const std::vector<float> a = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        const std::vector<float> b = {1,       1,       0x1p-9f, 0x1p-9f, 0x1p-9f,
                                      0x1p-9f, 0x1p-9f, 0x1p-9f, 0x1p-9f, 0x1p-9f};
        const auto in = bf16Operands(2, 5, 2, a, b);
        const OpParams p = cpuGemm("1.13.0a0", "aten::mm", {5, 1}, {2, 1}, kAvx2Only);
        auto ref = recordedReference("gemm", in, p);
        QVERIFY2(ref, ref ? "" : ref.message().c_str());
        QVERIFY(ref->judgement.emulated);
        QVERIFY(QString::fromStdString(ref->judgement.model).contains("gemm_notrans_"));
        for (float v : floats(ref->expected)) QCOMPARE(v, 1.0f);
        auto golden = runGolden("gemm", in, p);
        QVERIFY(golden);
        for (float v : floats(*golden)) QCOMPARE(v, 1.0f + 0x1p-7f);
        // The kernel's own bound (what a replay is judged with) covers both.
        QCOMPARE(ref->judgement.options.accumulationUnitRoundoff, 0x1p-8);
    }

    // nn.Linear's layout (B = W.t()) reaches the dot kernel: one float sum, one rounding.
    void emulatesTheDotKernel()
    {
        const std::vector<float> a = {1, 0x1p-9f, 0x1p-9f, 0x1p-9f, 0x1p-9f,
                                      1, 0x1p-9f, 0x1p-9f, 0x1p-9f, 0x1p-9f};
        const std::vector<float> w = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};  // W: 2 x 5, used as W.t()
        const std::vector<HostTensor> in = {tensor(DType::BFloat16, {2, 5}, a),
                                            tensor(DType::BFloat16, {2, 5}, w)};
        OpParams p = cpuGemm("1.13.0a0", "aten::mm", {5, 1}, {1, 5}, kAvx2Only);
        p["trans_b"] = int64_t(1);
        auto ref = recordedReference("gemm", in, p);
        QVERIFY2(ref, ref ? "" : ref.message().c_str());
        QVERIFY2(QString::fromStdString(ref->judgement.model).contains("gemm_transa_"),
                 ref->judgement.model.c_str());
        for (float v : floats(ref->expected)) QCOMPARE(v, 1.0f + 0x1p-7f);
    }

    // oneDNN's vdpbf16ps takes each pair odd element first: (((p1 + p0) + p3) + p2) with p = 1,
    // 2^-24, -1, 2^-24 is 0, the golden chain gives 2^-24; and it reads subnormal inputs as 0.
    void emulatesOneDnnOrderAndFlushing()
    {
        const int64_t m = 64, n = 64, k = 4;  // m n k > 4096: oneDNN
        std::vector<float> a(size_t(m * k)), b(size_t(k * n), 1.0f);
        for (int64_t i = 0; i < m; ++i) {
            a[size_t(i * k + 0)] = 1.0f;
            a[size_t(i * k + 1)] = 0x1p-24f;
            a[size_t(i * k + 2)] = -1.0f;
            a[size_t(i * k + 3)] = i == 0 ? 0x1p-24f : 0x1p-130f;  // row 0: order; others: a subnormal
        }
        const auto in = bf16Operands(m, k, n, a, b);
        const OpParams p = cpuGemm("1.13.0a0", "aten::mm", {k, 1}, {n, 1}, kAvx512Bf16);
        auto ref = recordedReference("gemm", in, p);
        QVERIFY2(ref, ref ? "" : ref.message().c_str());
        QVERIFY2(QString::fromStdString(ref->judgement.model).contains("oneDNN brgemm"),
                 ref->judgement.model.c_str());
        auto golden = runGolden("gemm", in, p);
        QVERIFY(golden);
        const auto e = floats(ref->expected), g = floats(*golden);
        QCOMPARE(e[0], 0.0f);
        QCOMPARE(g[0], 0x1p-24f);
        // Row 1: 1 + 2^-24 - 1 + (2^-130 read as 0): 0 in oneDNN's order; the golden chain keeps it.
        QCOMPARE(e[size_t(n)], 0.0f);
        QVERIFY(g[size_t(n)] != 0.0f);
    }

    // Where oneDNN ran but is not emulated, the float bound adds what flushing subnormals costs.
    void flushedSubnormalsBound()
    {
        const int64_t m = 4, n = 4, k = 16;
        std::vector<float> a(size_t(m * k), 0x1p-130f), b(size_t(k * n), 1.0f);
        const auto in = bf16Operands(m, k, n, a, b);
        auto golden = runGolden("gemm", in, {});
        QVERIFY(golden);
        const std::vector<double> flushed(size_t(m * n), 0.0);  // oneDNN reads every a as 0
        auto plain = goldenErrorBound("gemm", in, {}, *golden, {});
        QVERIFY(plain);
        QVERIFY(check(flushed, *golden, *plain).violations > 0);
        BoundOptions o;
        o.flushSubnormals = true;
        auto bound = goldenErrorBound("gemm", in, {}, *golden, o);
        QVERIFY(bound);
        const BoundCheck c = check(flushed, *golden, *bound);
        QVERIFY2(c.violations == 0, qPrintable(describe(c, flushed, *golden, *bound)));
        QVERIFY((*bound)[0] < 1e-36);  // absolute, near 2^-126: invisible at ordinary magnitudes
    }
};

QTEST_GUILESS_MAIN(TestGoldenGemmNumerics)
#include "test_golden_gemm_numerics.moc"
