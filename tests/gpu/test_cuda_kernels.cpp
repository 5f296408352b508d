// The cuda:N target on a real device (label gpu; skipped with the CUDA error where there is
// none): every golden kernel (attention and all_reduce included) bit-identical to core's CPU
// golden model on several shapes and dtypes, tile -> SM maps that name real SMs, cuBLAS and
// cuBLASLt deterministic over repetitions, the device-side repetition check, and the device-side
// compare against a host computation. (NCCL, which needs 2 GPUs, is test_cuda_nccl: its skip on
// a one-GPU machine must not mark these tests as skipped.)
#include <cuda_runtime.h>

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "core/golden/GoldenOrder.h"
#include "core/golden/GoldenSupport.h"
#include "core/golden/OpRegistry.h"
#include "core/replay/HostRepeatCheck.h"
#include "core/replay/TargetSpec.h"
#include "kernels/CompareKernel.h"
#include "kernels/CudaRuntime.h"
#include "kernels/CudaTarget.h"
#include "kernels/GoldenKernels.h"
#include "kernels/LaunchGeometry.h"

using namespace faultline;

namespace {

HostTensor randomTensor(DType t, std::vector<uint64_t> shape, uint32_t seed, float scale = 1.0f,
                        bool specials = false)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(size_t(golden::elementCountOf(shape)));
    for (float& x : v) x = dist(rng);
    if (specials && v.size() >= 8) {
        v[0] = -0.0f;
        v[1] = std::numeric_limits<float>::infinity();
        v[2] = -std::numeric_limits<float>::infinity();
        v[3] = std::numeric_limits<float>::quiet_NaN();
        v[4] = 1e-40f;
        v[5] = 30.0f;
        v[6] = -30.0f;
        v[7] = 100.0f;
    }
    return golden::fromFloatVector(t, std::move(shape), v);
}

QByteArray bytesOf(const HostTensor& t)
{
    return QByteArray(reinterpret_cast<const char*>(t.data.data()), qsizetype(t.data.size()));
}

struct OpCase {
    std::string op;
    std::vector<HostTensor> inputs;
    std::map<std::string, AttrValue> params;
};

}  // namespace

Q_DECLARE_METATYPE(std::shared_ptr<OpCase>)

class TestCudaKernels : public QObject {
    Q_OBJECT

    std::unique_ptr<Target> m_target;
    int m_smCount = 0;
    int m_smIdBound = 0;

    Result<ReplayOutput> runOnGpu(const OpCase& c, uint32_t rep = 0)
    {
        TraceOp op;
        op.op = c.op;
        op.params = c.params;
        ReplayRequest r;
        r.op = &op;
        r.inputs = c.inputs;
        r.repetition = rep;
        return m_target->run(r, rep);
    }

private slots:
    void initTestCase()
    {
        auto count = cuda::deviceCount();
        if (!count) QSKIP(qPrintable(QString::fromStdString("no CUDA device: " + count.message())));
        if (*count == 0) QSKIP("no CUDA device: the CUDA runtime reports 0 devices");
        auto spec = parseTargetSpec("cuda:0");
        QVERIFY(spec.ok());
        auto t = cuda::createCudaTarget(*spec);
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        m_target = std::move(t).value();
        QVERIFY(cudaDeviceGetAttribute(&m_smCount, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
        QVERIFY(m_smCount > 0);
        // SM ids are below %nsmid, which may exceed the multiprocessor count (ids need not be
        // contiguous on parts with disabled SMs).
        m_smIdBound = std::max(m_smCount, cuda::queryTileSmBound());
    }

    void goldenBitExact_data()
    {
        QTest::addColumn<std::shared_ptr<OpCase>>("c");
        auto add = [](const char* name, OpCase c) {
            QTest::newRow(name) << std::make_shared<OpCase>(std::move(c));
        };
        const DType f32 = DType::Float32, bf16 = DType::BFloat16;
        add("gemm 1x1x1", {"gemm", {randomTensor(f32, {1, 1}, 1), randomTensor(f32, {1, 1}, 2)}, {}});
        add("gemm 37x53x29", {"gemm", {randomTensor(f32, {37, 29}, 3), randomTensor(f32, {29, 53}, 4)}, {}});
        add("gemm 256x256x300",
            {"gemm", {randomTensor(f32, {256, 300}, 5), randomTensor(f32, {300, 256}, 6)}, {}});
        add("gemm transposed", {"gemm",
                                {randomTensor(f32, {45, 130}, 7), randomTensor(f32, {70, 45}, 8)},
                                {{"trans_a", int64_t(1)}, {"trans_b", int64_t(1)}}});
        add("gemm batched broadcast bf16",
            {"gemm", {randomTensor(bf16, {3, 40, 64}, 9), randomTensor(bf16, {64, 72}, 10)}, {}});
        add("gemm alpha beta C", {"gemm",
                                  {randomTensor(f32, {130, 17}, 11), randomTensor(f32, {17, 140}, 12),
                                   randomTensor(f32, {140}, 13)},
                                  {{"alpha", 0.7}, {"beta", -1.3}}});
        add("gemm k=0", {"gemm", {randomTensor(f32, {4, 0}, 14), randomTensor(f32, {0, 5}, 15)}, {}});
        add("gemm out bf16", {"gemm",
                              {randomTensor(f32, {33, 65}, 16), randomTensor(f32, {65, 31}, 17)},
                              {{"out_dtype", std::string("bfloat16")}}});
        add("add", {"add", {randomTensor(f32, {50, 70}, 20, 1, true), randomTensor(f32, {50, 70}, 21)}, {}});
        add("add bf16",
            {"add", {randomTensor(bf16, {3, 17, 5}, 22), randomTensor(bf16, {3, 17, 5}, 23)}, {}});
        add("mul", {"mul", {randomTensor(f32, {50, 70}, 40, 1, true), randomTensor(f32, {50, 70}, 41)}, {}});
        add("mul bf16",
            {"mul", {randomTensor(bf16, {3, 17, 5}, 42), randomTensor(bf16, {3, 17, 5}, 43)}, {}});
        add("gelu erf", {"gelu", {randomTensor(f32, {64, 129}, 24, 3, true)}, {}});
        add("gelu tanh",
            {"gelu", {randomTensor(f32, {64, 129}, 25, 3, true)}, {{"approximate", std::string("tanh")}}});
        add("silu", {"silu", {randomTensor(f32, {1000}, 26, 5, true)}, {}});
        add("silu bf16", {"silu", {randomTensor(bf16, {31, 33}, 27, 5)}, {}});
        add("softmax", {"softmax", {randomTensor(f32, {40, 1000}, 28, 4)}, {}});
        add("softmax scaled, short rows",
            {"softmax", {randomTensor(f32, {2, 3, 7}, 29, 4, true)}, {{"scale", 0.125}}});
        add("layernorm",
            {"layernorm",
             {randomTensor(f32, {33, 768}, 30), randomTensor(f32, {768}, 31), randomTensor(f32, {768}, 32)},
             {}});
        add("layernorm bf16 n=5",
            {"layernorm",
             {randomTensor(bf16, {17, 5}, 33), randomTensor(bf16, {5}, 34), randomTensor(bf16, {5}, 35)},
             {{"eps", 1e-6}}});
        add("rmsnorm",
            {"rmsnorm", {randomTensor(f32, {20, 4096}, 36), randomTensor(f32, {4096}, 37)}, {{"eps", 1e-6}}});
        add("rmsnorm n=1",
            {"rmsnorm", {randomTensor(f32, {9, 1}, 38), randomTensor(f32, {1}, 39)}, {{"eps", 1e-5}}});
        add("attention", {"attention",
                          {randomTensor(f32, {2, 3, 40, 64}, 50), randomTensor(f32, {2, 3, 40, 64}, 51),
                           randomTensor(f32, {2, 3, 40, 64}, 52)},
                          {}});
        add("attention causal",
            {"attention",
             {randomTensor(f32, {1, 4, 77, 32}, 53), randomTensor(f32, {1, 4, 77, 32}, 54),
              randomTensor(f32, {1, 4, 77, 48}, 55)},
             {{"causal", int64_t(1)}}});
        add("attention sq != sk, scale",
            {"attention",
             {randomTensor(f32, {2, 1, 5, 17}, 56, 3), randomTensor(f32, {2, 1, 130, 17}, 57, 3),
              randomTensor(f32, {2, 1, 130, 9}, 58)},
             {{"scale", 0.3}}});
        add("attention causal sq > sk",
            {"attention",
             {randomTensor(f32, {1, 2, 50, 8}, 59), randomTensor(f32, {1, 2, 33, 8}, 60),
              randomTensor(f32, {1, 2, 33, 40}, 61)},
             {{"causal", int64_t(1)}}});
        add("attention sk=1 d=1", {"attention",
                                   {randomTensor(f32, {1, 1, 3, 1}, 62), randomTensor(f32, {1, 1, 1, 1}, 63),
                                    randomTensor(f32, {1, 1, 1, 2}, 64)},
                                   {}});
        add("attention bf16 specials",
            {"attention",
             {randomTensor(bf16, {1, 2, 16, 24}, 65, 2, true), randomTensor(bf16, {1, 2, 16, 24}, 66),
              randomTensor(bf16, {1, 2, 16, 24}, 67)},
             {{"causal", int64_t(1)}}});
        add("all_reduce sum 4 ranks",
            {"all_reduce",
             {randomTensor(f32, {33, 70}, 70, 1, true), randomTensor(f32, {33, 70}, 71),
              randomTensor(f32, {33, 70}, 72), randomTensor(f32, {33, 70}, 73)},
             {}});
        add("all_reduce max",
            {"all_reduce",
             {randomTensor(f32, {1000}, 74, 1, true), randomTensor(f32, {1000}, 75, 1, true)},
             {{"reduce_op", std::string("max")}}});
        add("all_reduce min 3 ranks",
            {"all_reduce",
             {randomTensor(f32, {4, 5, 6}, 76, 1, true), randomTensor(f32, {4, 5, 6}, 77),
              randomTensor(f32, {4, 5, 6}, 78, 1, true)},
             {{"reduce_op", std::string("min")}}});
        add("all_reduce bf16 sum", {"all_reduce",
                                    {randomTensor(bf16, {17, 19}, 79), randomTensor(bf16, {17, 19}, 80),
                                     randomTensor(bf16, {17, 19}, 81)},
                                    {{"ranks", std::vector<std::string>{"cuda:0", "cuda:1", "cuda:2"}}}});
        add("all_reduce one rank", {"all_reduce", {randomTensor(f32, {8, 8}, 82, 1, true)}, {}});
        add("all_gather 3 ranks", {"all_gather",
                                   {randomTensor(f32, {7, 9}, 83, 1, true), randomTensor(f32, {7, 9}, 84),
                                    randomTensor(f32, {7, 9}, 85)},
                                   {}});
        add("all_gather bf16",
            {"all_gather", {randomTensor(bf16, {5}, 86), randomTensor(bf16, {5}, 87)}, {}});
        add("broadcast root 1", {"broadcast",
                                 {randomTensor(f32, {6, 11}, 88), randomTensor(f32, {6, 11}, 89, 1, true),
                                  randomTensor(f32, {6, 11}, 90)},
                                 {{"root", int64_t(1)}}});
        add("reduce_scatter sum", {"reduce_scatter",
                                   {randomTensor(f32, {8, 10}, 91, 1, true), randomTensor(f32, {8, 10}, 92)},
                                   {}});
    }
    void goldenBitExact()
    {
        QFETCH(std::shared_ptr<OpCase>, c);
        auto cpu = golden::runGolden(c->op, c->inputs, c->params);
        QVERIFY2(cpu.ok(), cpu.ok() ? "" : cpu.message().c_str());
        auto gpu = runOnGpu(*c);
        QVERIFY2(gpu.ok(), gpu.ok() ? "" : gpu.message().c_str());
        QCOMPARE(gpu->outputs.size(), size_t(1));
        const HostTensor& g = gpu->outputs[0];
        QCOMPARE(g.dtype, cpu->dtype);
        QCOMPARE(g.shape, cpu->shape);
        // Bits must match; NaN matches any NaN (NaN payloads and signs are not part of the golden
        // contract, GoldenOrder.h: x86 propagates an operand's payload, NVIDIA GPUs return
        // 0x7FFFFFFF). Every input dtype widens to float injectively, so comparing the widened
        // values compares the output's own bits.
        const auto a = golden::toFloatVector(*cpu), b = golden::toFloatVector(g);
        size_t differing = 0;
        QString first;
        for (size_t i = 0; i < a.size(); ++i) {
            if (golden::goldenSameResult(a[i], b[i])) continue;
            if (differing++ == 0)
                first = QString("element %1: cpu %2 gpu %3")
                            .arg(i)
                            .arg(double(a[i]), 0, 'g', 9)
                            .arg(double(b[i]), 0, 'g', 9);
        }
        QVERIFY2(differing == 0,
                 qPrintable(
                     QString("%1 of %2 elements differ; first %3").arg(differing).arg(a.size()).arg(first)));
        if (std::none_of(a.begin(), a.end(), [](float x) { return std::isnan(x); }))
            QCOMPARE(bytesOf(g), bytesOf(*cpu));
        // Tile -> SM map: one entry per tile, each a real SM.
        const cuda::View2d v = cuda::view2d(g.shape);
        if (v.rows * v.cols == 0) return;
        QVERIFY(gpu->smTile > 0);
        const cuda::TileGrid tg = cuda::tileGrid(v, gpu->smTile);
        QCOMPARE(uint64_t(gpu->tileSm.size()), tg.count());
        QCOMPARE(cuda::countBadTileSm(gpu->tileSm, tg, m_smIdBound), uint64_t(0));
    }

    // grid=N: the same bits from at most N thread blocks striding over the tiles, and the tile map
    // names at most N distinct SMs (each block runs on one SM).
    void smallerGridsSameBits_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("grid");
        for (const char* op : {"gemm", "add", "softmax", "attention"})
            for (int grid : {1, 3})
                QTest::newRow(qPrintable(QStringLiteral("%1 grid=%2").arg(op).arg(grid))) << op << grid;
    }
    void smallerGridsSameBits()
    {
        QFETCH(QString, op);
        QFETCH(int, grid);
        const DType f32 = DType::Float32;
        OpCase c;
        c.op = op.toStdString();
        if (op == "gemm")
            c.inputs = {randomTensor(f32, {300, 70}, 101), randomTensor(f32, {70, 260}, 102)};
        else if (op == "add")
            c.inputs = {randomTensor(f32, {100, 90}, 103), randomTensor(f32, {100, 90}, 104)};
        else if (op == "softmax")
            c.inputs = {randomTensor(f32, {70, 50}, 105)};
        else
            c.inputs = {randomTensor(f32, {2, 40, 16}, 106), randomTensor(f32, {2, 40, 16}, 107),
                        randomTensor(f32, {2, 40, 16}, 108)};
        auto cpu = golden::runGolden(c.op, c.inputs, c.params);
        QVERIFY2(cpu.ok(), cpu.ok() ? "" : cpu.message().c_str());
        c.params["grid"] = int64_t(grid);
        auto gpu = runOnGpu(c);
        QVERIFY2(gpu.ok(), gpu.ok() ? "" : gpu.message().c_str());
        QCOMPARE(bytesOf(gpu->outputs.at(0)), bytesOf(*cpu));
        if (gpu->tileSm.empty()) return;
        const std::set<int32_t> sms(gpu->tileSm.begin(), gpu->tileSm.end());
        QVERIFY2(sms.size() <= size_t(grid),
                 qPrintable(QStringLiteral("%1 SMs for grid=%2").arg(sms.size()).arg(grid)));
    }

    void cublasDeterministic_data()
    {
        QTest::addColumn<QString>("impl");
        QTest::addColumn<bool>("tf32");
        QTest::addColumn<bool>("bf16");
        QTest::newRow("cublas pedantic") << "cublas" << false << false;
        QTest::newRow("cublas tf32") << "cublas" << true << false;
        QTest::newRow("cublaslt pedantic") << "cublaslt" << false << false;
        QTest::newRow("cublaslt tf32") << "cublaslt" << true << false;
        QTest::newRow("cublaslt bf16") << "cublaslt" << false << true;
    }
    void cublasDeterministic()
    {
        QFETCH(QString, impl);
        QFETCH(bool, tf32);
        QFETCH(bool, bf16);
        const DType t = bf16 ? DType::BFloat16 : DType::Float32;
        OpCase c{"gemm",
                 {randomTensor(t, {2, 384, 512}, 40), randomTensor(t, {512, 320}, 41)},
                 {{"impl", impl.toStdString()}, {"tf32", int64_t(tf32)}}};
        auto first = runOnGpu(c);
        QVERIFY2(first.ok(), first.ok() ? "" : first.message().c_str());
        QVERIFY(first->tileSm.empty());
        for (uint32_t rep = 1; rep < 20; ++rep) {
            auto again = runOnGpu(c, rep);
            QVERIFY(again.ok());
            QVERIFY2(again->outputs[0].data == first->outputs[0].data,
                     qPrintable(QString("repetition %1 differs").arg(rep)));
        }
        // Close to the golden result (a sanity check on the layout, not a bit comparison).
        auto cpu = golden::runGolden("gemm", c.inputs, {});
        const auto a = golden::toFloatVector(*cpu), b = golden::toFloatVector(first->outputs[0]);
        double worst = 0;
        for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
        QVERIFY2(worst < (tf32 || bf16 ? 1.0 : 1e-2),
                 qPrintable(QString("max |cublas - golden| = %1").arg(worst)));
    }

    // The target keeps the first repetition on the device and judges later ones there: the same
    // answer as comparing the outputs' bytes on the host.
    void repeatCheckOnDevice()
    {
        OpCase c{"gemm",
                 {randomTensor(DType::Float32, {130, 70}, 90), randomTensor(DType::Float32, {70, 90}, 91)},
                 {}};
        auto first = runOnGpu(c, 0);
        QVERIFY2(first.ok(), first.ok() ? "" : first.message().c_str());
        QVERIFY(!first->repeatCheck.has_value());
        auto second = runOnGpu(c, 1);
        QVERIFY2(second.ok(), second.ok() ? "" : second.message().c_str());
        QVERIFY(second->repeatCheck.has_value());
        QCOMPARE(second->repeatCheck->againstRep, 0u);
        QCOMPARE(second->repeatCheck->mismatched == 0, second->outputs[0].data == first->outputs[0].data);
        QCOMPARE(second->repeatCheck->flippedBits == 0, second->repeatCheck->mismatched == 0);
        QCOMPARE(second->repeatCheck->worstTile < 0, second->repeatCheck->mismatched == 0);
        // Other inputs under the same op index: a new reference, no comparison.
        OpCase other = c;
        other.inputs[0] = randomTensor(DType::Float32, {130, 70}, 92);
        auto third = runOnGpu(other, 2);
        QVERIFY(third.ok());
        QVERIFY(!third->repeatCheck.has_value());
    }

    void unsupportedOpIsAnError()
    {
        OpCase c{"conv2d", {}, {}};
        auto r = runOnGpu(c);
        QVERIFY(!r.ok());
        QVERIFY2(r.message().find("cuda:0: op conv2d") == 0, r.message().c_str());
        QVERIFY(!m_target->fatalError());
    }

    void deviceCompare()
    {
        const uint64_t rows = 300, cols = 200;
        std::vector<float> a(rows * cols), b;
        std::mt19937 rng(7);
        std::normal_distribution<float> dist;
        for (float& x : a) x = dist(rng);
        b = a;
        uint64_t flips = 0;
        b[5] = std::nextafter(a[5], 10.0f);
        uint32_t u;
        std::memcpy(&u, &b[rows * cols - 1], 4);
        u ^= 0x00400001u;  // two flipped bits
        std::memcpy(&b[rows * cols - 1], &u, 4);
        b[123] = std::numeric_limits<float>::quiet_NaN();
        std::vector<uint32_t> ua(a.size()), ub(b.size());
        std::memcpy(ua.data(), a.data(), a.size() * 4);
        std::memcpy(ub.data(), b.data(), b.size() * 4);
        uint64_t mismatched = 0;
        for (size_t i = 0; i < a.size(); ++i) {
            mismatched += ua[i] != ub[i];
            flips += uint64_t(__builtin_popcount(ua[i] ^ ub[i]));
        }
        float *da = nullptr, *db = nullptr;
        QCOMPARE(cudaMalloc(&da, a.size() * 4), cudaSuccess);
        QCOMPARE(cudaMalloc(&db, b.size() * 4), cudaSuccess);
        cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
        std::vector<float> tiles;
        auto s = cuda::compareOnDevice(0, da, db, {rows, cols}, cuda::kCompareTile, &tiles, nullptr);
        cudaFree(da);
        cudaFree(db);
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QCOMPARE(s->mismatched, mismatched);
        QCOMPARE(s->flippedBits, flips);
        QVERIFY(std::isinf(s->maxAbsError));  // the NaN
        const cuda::TileGrid tg = cuda::tileGrid({rows, cols}, cuda::kCompareTile);
        QCOMPARE(uint64_t(tiles.size()), tg.count());
        QVERIFY(std::isinf(tiles[cuda::tileIndexOf(tg, 123 / cols, 123 % cols)]));
        QCOMPARE(tiles[cuda::tileIndexOf(tg, 0, 5)], std::abs(b[5] - a[5]));
        QCOMPARE(tiles[cuda::tileIndexOf(tg, 150, 100)], 0.0f);
    }

    // The device's repetition check gives the host's answer (core/replay/HostRepeatCheck.h),
    // also for differences beyond float's range, which the device computes in double.
    void compareMatchesTheHostCheck()
    {
        const uint64_t rows = 70, cols = 90;
        HostTensor a = randomTensor(DType::Float32, {rows, cols}, 11), b = a;
        float* pa = a.as<float>();
        float* pb = b.as<float>();
        pa[7] = 3.0e38f;
        pb[7] = -3.0e38f;  // |a - b| = 6e38: +inf in float, finite in double
        pb[100] = std::nextafter(pa[100], 0.0f);
        pa[2000] = 0.0f;
        pb[2000] = -0.0f;  // differs by its bits only
        float *da = nullptr, *db = nullptr;
        QCOMPARE(cudaMalloc(&da, a.byteCount()), cudaSuccess);
        QCOMPARE(cudaMalloc(&db, b.byteCount()), cudaSuccess);
        cudaMemcpy(da, pa, a.byteCount(), cudaMemcpyHostToDevice);
        cudaMemcpy(db, pb, b.byteCount(), cudaMemcpyHostToDevice);
        int code = -1;
        auto s = cuda::compareOnDevice(0, da, db, {rows, cols}, cuda::kCompareTile, nullptr, nullptr, &code);
        cudaFree(da);
        cudaFree(db);
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QCOMPARE(code, 0);
        const RepeatCheck host = compareRepetitions(b, a, 0);
        QCOMPARE(s->mismatched, host.mismatched);
        QCOMPARE(s->flippedBits, host.flippedBits);
        QCOMPARE(s->maxAbsError, host.maxAbsError);
        QCOMPARE(s->maxAbsError, 2.0 * double(3.0e38f));
    }
};

QTEST_APPLESS_MAIN(TestCudaKernels)
#include "test_cuda_kernels.moc"
