// The host side of the CUDA target, runnable without a GPU: launch geometry and the tile -> SM
// map layout, op settings (impl/library, tf32, math mode, cuBLASLt compute type, algorithm,
// workspace), the cuBLASLt layout plan and types, NCCL rank placement, the golden NaN contract,
// CUDA error classification and messages, the device inventory without NVML, and target
// creation on a machine without a device.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "core/FloatFormats.h"
#include "core/golden/GoldenOrder.h"
#include "core/golden/GoldenSupport.h"
#include "core/golden/OpRegistry.h"
#include "core/replay/TargetSpec.h"
#include "kernels/CublasLtGemm.h"
#include "kernels/CudaOpSettings.h"
#include "kernels/CudaPeerKey.h"
#include "kernels/CudaRuntime.h"
#include "kernels/CudaTarget.h"
#include "kernels/DeviceInventory.h"
#include "kernels/LaunchGeometry.h"
#include "kernels/NcclAllReduce.h"

#include <cuda_runtime_api.h>

using namespace faultline;
using namespace faultline::cuda;

class TestCudaHost : public QObject {
    Q_OBJECT

private slots:
    void view2dOfShapes_data()
    {
        QTest::addColumn<QList<quint64>>("shape");
        QTest::addColumn<quint64>("rows");
        QTest::addColumn<quint64>("cols");
        QTest::newRow("scalar") << QList<quint64>{} << quint64(1) << quint64(1);
        QTest::newRow("vector") << QList<quint64>{7} << quint64(1) << quint64(7);
        QTest::newRow("matrix") << QList<quint64>{3, 5} << quint64(3) << quint64(5);
        QTest::newRow("batched") << QList<quint64>{2, 3, 4, 5} << quint64(24) << quint64(5);
        QTest::newRow("empty last") << QList<quint64>{4, 0} << quint64(0) << quint64(0);
    }
    void view2dOfShapes()
    {
        QFETCH(QList<quint64>, shape);
        QFETCH(quint64, rows);
        QFETCH(quint64, cols);
        const View2d v = view2d(std::vector<uint64_t>(shape.begin(), shape.end()));
        QCOMPARE(quint64(v.rows), rows);
        QCOMPARE(quint64(v.cols), cols);
    }

    void tileGridCounts()
    {
        const TileGrid g = tileGrid({33, 16}, 16);
        QCOMPARE(g.tileRows, uint64_t(3));
        QCOMPARE(g.tileCols, uint64_t(1));
        QCOMPARE(g.count(), uint64_t(3));
        QCOMPARE(tileIndexOf(g, 32, 15), uint64_t(2));
        const TileGrid h = tileGrid({100, 300}, 128);
        QCOMPARE(h.tileRows, uint64_t(1));
        QCOMPARE(h.tileCols, uint64_t(3));
        QCOMPARE(tileIndexOf(h, 99, 129), uint64_t(1));
        QCOMPARE(tileIndexOf(h, 0, 299), uint64_t(2));
        QCOMPARE(tileGrid({5, 5}, 0).count(), uint64_t(0));
    }

    void gemmSmTileKeepsTilesInsideBlocks_data()
    {
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<uint>("tile");
        QTest::newRow("single batch, ragged m") << qint64(1) << qint64(100) << 128u;
        QTest::newRow("batched, m multiple of block") << qint64(4) << qint64(256) << 128u;
        QTest::newRow("batched, m = 96") << qint64(3) << qint64(96) << 32u;
        QTest::newRow("batched, m = 40") << qint64(2) << qint64(40) << 8u;
        QTest::newRow("batched, odd m") << qint64(2) << qint64(33) << 1u;
    }
    void gemmSmTileKeepsTilesInsideBlocks()
    {
        QFETCH(qint64, batch);
        QFETCH(qint64, m);
        QFETCH(uint, tile);
        const uint32_t t = gemmSmTile(batch, m);
        QCOMPARE(t, uint32_t(tile));
        // Every map tile's rows lie in one batch and one block of kGemmBlock rows.
        for (int64_t r = 0; r < batch * m; r += t) {
            const int64_t last = std::min<int64_t>(r + int64_t(t), batch * m) - 1;
            QCOMPARE(r / m, last / m);
            QCOMPARE((r % m) / kGemmBlock, (last % m) / kGemmBlock);
        }
    }

    void gemmGridCoversOutput()
    {
        const GemmGrid g = gemmGrid(3, 129, 256);
        QCOMPARE(g.x, 2u);
        QCOMPARE(g.y, 2u);
        QCOMPARE(g.z, 3u);
        QCOMPARE(kGemmThreads, 256);
        QCOMPARE(gridFor(0), 1u);
        QCOMPARE(gridFor(70000), uint32_t(kMaxGridBlocks));
        QCOMPARE(gridFor(12), 12u);
        {
            // grid=N (ScopedGridCap): every launch on this thread strides over at most N blocks.
            const ScopedGridCap cap(4);
            QCOMPARE(gridCap(), 4u);
            QCOMPARE(gridFor(12), 4u);
            QCOMPARE(gridFor(3), 3u);
            QVERIFY(attentionBlocks(1024, 64) <= 4u);
            {
                const ScopedGridCap inner(0);
                QCOMPARE(gridFor(12), 12u);
            }
            QCOMPARE(gridFor(12), 4u);
        }
        QCOMPARE(gridCap(), 0u);
        QCOMPARE(gridFor(12), 12u);
    }

    void gemmTileMapIsBounded()
    {
        // [64, 128, 4096]: tiles of 128, a small map.
        TileGrid g = gemmTileMap({64 * 128, 4096}, 64, 128);
        QCOMPARE(g.tile, 128u);
        QCOMPARE(g.count(), uint64_t(64 * 32));
        // [64, 127, 4096]: m odd, the tile would be one element and the map the output's size: none.
        QCOMPARE(gemmSmTile(64, 127), 1u);
        QCOMPARE(gemmTileMap({64 * 127, 4096}, 64, 127).count(), uint64_t(0));
        // Small enough outputs keep even single-element maps.
        g = gemmTileMap({4 * 127, 64}, 4, 127);
        QCOMPARE(g.tile, 1u);
        QCOMPARE(g.count(), uint64_t(4 * 127 * 64));
    }

    void gemmLaunchesCoverTheGridWithinLimits_data()
    {
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("n");
        QTest::newRow("one launch") << qint64(3) << qint64(1000) << qint64(700);
        QTest::newRow("70000 batches") << qint64(70000) << qint64(4) << qint64(4);
        QTest::newRow("10M rows") << qint64(1) << qint64(10'000'000) << qint64(64);
        QTest::newRow("both") << qint64(140000) << qint64(9'000'000) << qint64(8);
    }

    void gemmLaunchesCoverTheGridWithinLimits()
    {
        QFETCH(qint64, batch);
        QFETCH(qint64, m);
        QFETCH(qint64, n);
        const GemmGrid grid = gemmGrid(batch, m, n);
        const auto launches = gemmLaunches(batch, m, n);
        // Every launch within the limits; the (row block, batch) rectangles tile the grid exactly.
        uint64_t covered = 0;
        std::set<std::pair<int64_t, int64_t>> starts;
        for (const GemmLaunch& l : launches) {
            QCOMPARE(l.blocks.x, grid.x);
            QVERIFY(l.blocks.y >= 1 && l.blocks.y <= 65535 && l.blocks.z >= 1 && l.blocks.z <= 65535);
            QVERIFY(l.rowBlockBase + l.blocks.y <= grid.y && l.batchBase + l.blocks.z <= grid.z);
            QVERIFY(l.rowBlockBase % 65535 == 0 && l.batchBase % 65535 == 0);  // no overlap between launches
            QVERIFY(starts.insert({l.rowBlockBase, l.batchBase}).second);
            covered += uint64_t(l.blocks.y) * l.blocks.z;
        }
        QCOMPARE(covered, uint64_t(grid.y) * grid.z);
        QCOMPARE(launches.size(), size_t((grid.y + 65534) / 65535) * size_t((grid.z + 65534) / 65535));
        QVERIFY(gemmLaunches(0, m, n).empty());
    }

    void tileSmValidation()
    {
        const TileGrid g = tileGrid({32, 32}, 16);
        QCOMPARE(countBadTileSm({0, 1, 131, 5}, g, 132), uint64_t(0));
        QCOMPARE(countBadTileSm({0, 132, -1, 5}, g, 132), uint64_t(2));
        QCOMPARE(countBadTileSm({0, 1}, g, 132), uint64_t(4));
    }

    void settingsParse_data()
    {
        // params: "key=value;..." (a value of digits is an integer, anything else a string).
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("params");
        QTest::addColumn<QString>("impl");  // expected impl name, or the error's start when it fails
        QTest::addColumn<bool>("ok");
        QTest::addColumn<bool>("useTf32");
        QTest::addColumn<QString>("detail");  // cublas: math mode; cublaslt: compute type/algo/workspace
        QTest::newRow("default") << "gemm"
                                 << ""
                                 << "golden" << true << false << "";
        QTest::newRow("golden") << "gemm"
                                << "impl=golden"
                                << "golden" << true << false << "";
        QTest::newRow("golden grid") << "softmax"
                                     << "grid=8"
                                     << "golden" << true << false << "grid 8";
        QTest::newRow("cublas") << "gemm"
                                << "impl=cublas"
                                << "cublas" << true << false << "pedantic";
        QTest::newRow("cublas tf32") << "gemm"
                                     << "impl=cublas;tf32=1"
                                     << "cublas" << true << true << "tf32";
        QTest::newRow("cublas tf32 off") << "gemm"
                                         << "impl=cublas;tf32=0"
                                         << "cublas" << true << false << "pedantic";
        QTest::newRow("cublas default math") << "gemm"
                                             << "impl=cublas;math_mode=CUBLAS_DEFAULT_MATH"
                                             << "cublas" << true << false << "default";
        QTest::newRow("cublaslt defaults") << "gemm"
                                           << "impl=cublaslt"
                                           << "cublaslt" << true << false << "auto/0/33554432";
        QTest::newRow("library synonym") << "gemm"
                                         << "library=cublaslt"
                                         << "cublaslt" << true << false << "auto/0/33554432";
        QTest::newRow("cublaslt recorded")
            << "gemm"
            << "library=cublaslt;compute_type=CUBLAS_COMPUTE_32F_FAST_16BF;algo=3;"
               "workspace=1048576"
            << "cublaslt" << true << false << "32F_FAST_16BF/3/1048576";
        QTest::newRow("cublaslt tf32") << "gemm"
                                       << "impl=cublaslt;tf32=1"
                                       << "cublaslt" << true << true << "auto/0/33554432";
        QTest::newRow("cublaslt tf32 compute") << "gemm"
                                               << "impl=cublaslt;tf32=1;compute_type=32f_fast_tf32"
                                               << "cublaslt" << true << true << "32F_FAST_TF32/0/33554432";
        QTest::newRow("nccl") << "all_reduce"
                              << "impl=nccl"
                              << "nccl" << true << false << "";
        QTest::newRow("golden attention") << "attention"
                                          << ""
                                          << "golden" << true << false << "";
        QTest::newRow("bad impl") << "gemm"
                                  << "impl=cutlass"
                                  << "op gemm: parameter impl=cutlass is not golden, cublas" << false << false
                                  << "";
        QTest::newRow("impl and library disagree")
            << "gemm"
            << "impl=cublas;library=cublaslt"
            << "op gemm: parameters impl=cublas and library=cublaslt disagree" << false << false << "";
        QTest::newRow("cublas softmax")
            << "softmax"
            << "impl=cublas"
            << "op softmax: impl=cublas replays gemm only" << false << false << "";
        QTest::newRow("cublaslt attention")
            << "attention"
            << "library=cublaslt"
            << "op attention: impl=cublaslt replays gemm only" << false << false << "";
        QTest::newRow("nccl gemm") << "gemm"
                                   << "impl=nccl"
                                   << "op gemm: impl=nccl replays all_reduce only" << false << false << "";
        QTest::newRow("tf32 golden") << "gemm"
                                     << "tf32=1"
                                     << "op gemm: tf32=1 needs impl=cublas or impl=cublaslt" << false << false
                                     << "";
        QTest::newRow("algo without cublaslt")
            << "gemm"
            << "impl=cublas;algo=2"
            << "op gemm: parameter algo applies to impl=cublaslt, not impl=cublas" << false << false << "";
        QTest::newRow("math_mode with cublaslt")
            << "gemm"
            << "impl=cublaslt;math_mode=pedantic"
            << "op gemm: parameter math_mode applies to impl=cublas, not impl=cublaslt" << false << false
            << "";
        QTest::newRow("workspace golden")
            << "gemm"
            << "workspace=1024"
            << "op gemm: parameter workspace applies to impl=cublaslt, not impl=golden" << false << false
            << "";
        QTest::newRow("bad compute type")
            << "gemm"
            << "impl=cublaslt;compute_type=64F"
            << "op gemm: parameter compute_type=64F is not 32F" << false << false << "";
        QTest::newRow("tf32 vs compute type")
            << "gemm"
            << "impl=cublaslt;tf32=1;compute_type=32F_PEDANTIC"
            << "op gemm: tf32=1 contradicts compute_type=32F_PEDANTIC" << false << false << "";
        QTest::newRow("tf32 off vs compute type")
            << "gemm"
            << "impl=cublaslt;tf32=0;compute_type=32F_FAST_TF32"
            << "op gemm: compute_type=32F_FAST_TF32 contradicts tf32=0" << false << false << "";
        QTest::newRow("tf32 vs math mode")
            << "gemm"
            << "impl=cublas;tf32=1;math_mode=pedantic"
            << "op gemm: tf32=1 contradicts math_mode=pedantic" << false << false << "";
        QTest::newRow("bad math mode")
            << "gemm"
            << "impl=cublas;math_mode=fast"
            << "op gemm: parameter math_mode=fast is not default, pedantic or tf32" << false << false << "";
        QTest::newRow("negative algo")
            << "gemm"
            << "impl=cublaslt;algo=-1"
            << "op gemm: parameter algo=-1 is not a non-negative integer" << false << false << "";
        QTest::newRow("grid on cublas")
            << "gemm"
            << "impl=cublas;grid=4"
            << "op gemm: parameter grid applies to impl=golden, not impl=cublas" << false << false << "";
        QTest::newRow("grid zero") << "gemm"
                                   << "grid=0"
                                   << "op gemm: parameter grid=0 is not an integer in [1, 65535]" << false
                                   << false << "";
        QTest::newRow("fractional workspace")
            << "gemm"
            << "impl=cublaslt;workspace=1.5"
            << "op gemm: parameter workspace=1.5 is not a non-negative integer" << false << false << "";
    }
    void settingsParse()
    {
        QFETCH(QString, op);
        QFETCH(QString, params);
        QFETCH(QString, impl);
        QFETCH(bool, ok);
        QFETCH(bool, useTf32);
        QFETCH(QString, detail);
        std::map<std::string, AttrValue> p;
        for (const QString& kv : params.split(';', Qt::SkipEmptyParts)) {
            const QString key = kv.section('=', 0, 0), value = kv.section('=', 1);
            bool isInt = false, isDouble = false;
            const qlonglong i = value.toLongLong(&isInt);
            const double d = value.toDouble(&isDouble);
            if (isInt)
                p[key.toStdString()] = int64_t(i);
            else if (isDouble)
                p[key.toStdString()] = d;
            else
                p[key.toStdString()] = value.toStdString();
        }
        auto s = parseCudaOpSettings(op.toStdString(), p);
        QCOMPARE(s.ok(), ok);
        if (!ok) {
            QVERIFY2(QString::fromStdString(s.message()).startsWith(impl), s.message().c_str());
            return;
        }
        QCOMPARE(QString(cudaImplName(s->impl)), impl);
        QCOMPARE(s->tf32, useTf32);
        if (detail.startsWith("grid ")) QCOMPARE(QString::number(s->grid), detail.mid(5));
        if (s->impl == CudaImpl::Cublas) {
            const char* mode = s->mathMode == CublasMathMode::Default    ? "default"
                               : s->mathMode == CublasMathMode::Pedantic ? "pedantic"
                                                                         : "tf32";
            QCOMPARE(QString(mode), detail);
        } else if (s->impl == CudaImpl::CublasLt) {
            QCOMPARE(
                QString("%1/%2/%3").arg(ltComputeTypeName(s->computeType)).arg(s->algo).arg(s->workspace),
                detail);
        }
    }

    void ltComputeTypeResolution()
    {
        CudaOpSettings s;
        s.impl = CudaImpl::CublasLt;
        // No recorded compute type: pedantic FP32 for float32 data, plain FP32 for narrow data.
        QCOMPARE(resolveLtComputeType(s, true), LtComputeType::F32Pedantic);
        QCOMPARE(resolveLtComputeType(s, false), LtComputeType::F32);
        s.tf32 = true;
        QCOMPARE(resolveLtComputeType(s, true), LtComputeType::F32FastTf32);
        s.tf32 = false;
        s.computeType = LtComputeType::F32Fast16F;
        QCOMPARE(resolveLtComputeType(s, true), LtComputeType::F32Fast16F);
    }

    // The column-major plan read literally, as cuBLASLt reads it, on the row-major buffers must
    // compute the golden GEMM (within float rounding: this reference sums in double).
    void ltLayoutPlanComputesRowMajorGemm_data()
    {
        QTest::addColumn<bool>("transA");
        QTest::addColumn<bool>("transB");
        QTest::newRow("NN") << false << false;
        QTest::newRow("TN") << true << false;
        QTest::newRow("NT") << false << true;
        QTest::newRow("TT") << true << true;
    }
    void ltLayoutPlanComputesRowMajorGemm()
    {
        QFETCH(bool, transA);
        QFETCH(bool, transB);
        const int64_t m = 5, n = 7, k = 3;
        std::vector<float> a(size_t(m * k)), b(size_t(k * n));
        for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 7) - 3) * 0.5f;
        for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 5) - 2) * 0.25f;
        const LtLayoutPlan p = ltLayoutPlan(m, n, k, transA, transB);
        QCOMPARE(p.m, uint64_t(n));
        QCOMPARE(p.n, uint64_t(m));
        QCOMPARE(p.k, uint64_t(k));
        // op(X)(i, j) of a column-major stored matrix.
        auto at = [](const std::vector<float>& x, const LtMatrix& mx, uint64_t i, uint64_t j) {
            return mx.transpose ? x[j + i * mx.ld] : x[i + j * mx.ld];
        };
        std::vector<float> d(size_t(m * n));
        for (uint64_t i = 0; i < p.m; ++i)
            for (uint64_t j = 0; j < p.n; ++j) {
                double acc = 0;
                for (uint64_t q = 0; q < p.k; ++q) acc += double(at(b, p.a, i, q)) * double(at(a, p.b, q, j));
                d[i + j * p.d.ld] = float(acc);
            }
        HostTensor ta = golden::fromFloatVector(
            DType::Float32, transA ? std::vector<uint64_t>{k, m} : std::vector<uint64_t>{m, k}, a);
        HostTensor tb = golden::fromFloatVector(
            DType::Float32, transB ? std::vector<uint64_t>{n, k} : std::vector<uint64_t>{k, n}, b);
        std::vector<HostTensor> in{ta, tb};
        auto g = golden::runGolden("gemm", in, {{"trans_a", int64_t(transA)}, {"trans_b", int64_t(transB)}});
        QVERIFY2(g.ok(), g.ok() ? "" : g.message().c_str());
        const std::vector<float> want = golden::toFloatVector(*g);
        QCOMPARE(d.size(), want.size());
        for (size_t e = 0; e < d.size(); ++e)
            QVERIFY2(std::abs(d[e] - want[e]) <= 1e-6f, qPrintable(QString::number(e)));
        // Leading dimensions stay at least 1 for empty operands.
        const LtLayoutPlan empty = ltLayoutPlan(4, 0, 0, false, false);
        QCOMPARE(empty.a.ld, uint64_t(1));
        QCOMPARE(empty.d.ld, uint64_t(1));
        QCOMPARE(empty.b.ld, uint64_t(1));
    }

    void ltTypesAndAlignment()
    {
        auto f = ltTypes(DType::Float32, DType::Float32);
        QVERIFY(f.ok());
        QCOMPARE(f->ab, CUDA_R_32F);
        QCOMPARE(f->cd, CUDA_R_32F);
        auto bf = ltTypes(DType::BFloat16, DType::BFloat16);
        QVERIFY(bf.ok());
        QCOMPARE(bf->ab, CUDA_R_16BF);
        QCOMPARE(bf->cd, CUDA_R_16BF);
        auto h = ltTypes(DType::Float16, DType::Float32);
        QVERIFY(h.ok());
        QCOMPARE(h->ab, CUDA_R_16F);
        QCOMPARE(h->cd, CUDA_R_32F);
        auto bad = ltTypes(DType::Float32, DType::BFloat16);
        QVERIFY(!bad.ok());
        QVERIFY2(bad.message().find("not float32 -> bfloat16") != std::string::npos, bad.message().c_str());
        QVERIFY(!ltTypes(DType::Float8E4M3FN, DType::Float32).ok());
        const std::vector<uintptr_t> aligned{0x10000, 0x20100}, odd{0x10000, 0x10006}, none{};
        QCOMPARE(ltAlignment(aligned), 256u);
        QCOMPARE(ltAlignment(odd), 2u);
        QCOMPARE(ltAlignment(none), 256u);
        const std::vector<uintptr_t> byte{0x10001};
        QCOMPARE(ltAlignment(byte), 1u);
    }

    void attentionScratchIsCapped()
    {
        // Small problems: one block per band of kSmallTile rows.
        QCOMPARE(attentionBlocks(100, 64), 7u);
        QCOMPARE(attentionScratchFloats(100, 64), uint64_t(7) * kSmallTile * 64);
        // Long keys: the grid shrinks so the warps' rows stay within the scratch budget.
        const uint64_t sk = 8192;
        const uint32_t blocks = attentionBlocks(1 << 20, sk);
        QCOMPARE(uint64_t(blocks), kAttentionScratchFloats / (uint64_t(kSmallTile) * sk));
        QVERIFY(attentionScratchFloats(1 << 20, sk) <= kAttentionScratchFloats);
        // Never fewer than one block, whatever sk is; sk = 0 needs no scratch.
        QCOMPARE(attentionBlocks(5, uint64_t(1) << 40), 1u);
        QCOMPARE(attentionScratchFloats(5, 0), uint64_t(0));
    }

    void ncclRankPlacement()
    {
        const std::vector<std::string> cudaLabels{"cuda:2", "cuda:0"}, otherLabels{"gpu0", "gpu1"}, none;
        auto fromLabels = ncclRankDevices(cudaLabels, 2, 4);
        QVERIFY2(fromLabels.ok(), fromLabels.ok() ? "" : fromLabels.message().c_str());
        QCOMPARE(*fromLabels, (std::vector<int>{2, 0}));
        auto inOrder = ncclRankDevices(otherLabels, 2, 4);
        QVERIFY(inOrder.ok());
        QCOMPARE(*inOrder, (std::vector<int>{0, 1}));
        auto unlabeled = ncclRankDevices(none, 3, 3);
        QVERIFY(unlabeled.ok());
        QCOMPARE(*unlabeled, (std::vector<int>{0, 1, 2}));
        auto oneGpu = ncclRankDevices(none, 2, 1);
        QVERIFY(!oneGpu.ok());
        QVERIFY2(oneGpu.message().find("at least 2 local GPUs (this machine has 1)") != std::string::npos,
                 oneGpu.message().c_str());
        QVERIFY(!ncclRankDevices(none, 1, 4).ok());
        QVERIFY(!ncclRankDevices(none, 3, 2).ok());
        const std::vector<std::string> repeated{"cuda:1", "cuda:1"}, missing{"cuda:0", "cuda:7"};
        auto rep = ncclRankDevices(repeated, 2, 2);
        QVERIFY(!rep.ok());
        QVERIFY2(rep.message().find("cuda:1 holds two ranks") != std::string::npos, rep.message().c_str());
        QVERIFY(!ncclRankDevices(missing, 2, 4).ok());
    }

    // The golden contract's result equality (GoldenOrder.h): bits, except that NaNs are equal
    // whatever their payload and sign. Nothing else is loosened.
    void goldenNanContract()
    {
        auto bits = [](uint32_t u) { return floatFromBits(u); };
        QVERIFY(golden::goldenSameResult(1.5f, 1.5f));
        QVERIFY(golden::goldenSameResult(bits(0x7FFFFFFFu), bits(0xFFC00000u)));  // GPU vs x86 default NaN
        QVERIFY(golden::goldenSameResult(bits(0x7FC00001u), bits(0x7F800001u)));  // any payload, quiet or not
        QVERIFY(!golden::goldenSameResult(0.0f, -0.0f));
        QVERIFY(!golden::goldenSameResult(bits(0x7F800000u), bits(0x7FC00000u)));  // inf vs NaN
        QVERIFY(!golden::goldenSameResult(1.0f, bits(0x7FC00000u)));
        QVERIFY(!golden::goldenSameResult(1.0f, std::nextafter(1.0f, 2.0f)));
    }

    void stickyErrors()
    {
        QVERIFY(isStickyCudaError(int(cudaErrorIllegalAddress)));
        QVERIFY(isStickyCudaError(int(cudaErrorLaunchFailure)));
        // Hopper's containment of HBM/NVLink faults: the process must be relaunched.
        QVERIFY(isStickyCudaError(int(cudaErrorContained)));
        QVERIFY(isStickyCudaError(int(cudaErrorNvlinkUncorrectable)));
        QVERIFY(isStickyCudaError(int(cudaErrorTensorMemoryLeak)));
        QVERIFY(isStickyCudaError(int(cudaErrorMpsClientTerminated)));
        QVERIFY(isStickyCudaError(int(cudaErrorExternalDevice)));
        QVERIFY(isStickyCudaError(int(cudaErrorECCUncorrectable)));
        QVERIFY(!isStickyCudaError(int(cudaErrorMemoryAllocation)));
        QVERIFY(!isStickyCudaError(int(cudaErrorInvalidValue)));
        QVERIFY(!isStickyCudaError(int(cudaErrorInsufficientDriver)));
        const std::string m = cudaErrorFor(3, "running the op", int(cudaErrorIllegalAddress)).message;
        QVERIFY2(m.rfind("cuda:3: running the op: cudaErrorIllegalAddress (700): ", 0) == 0, m.c_str());
    }

    void peerKeysSeparateWhatChangesTheBits()
    {
        CudaPeerIdentity h200;
        h200.name = "NVIDIA H200";
        h200.smCount = 132;
        h200.ccMajor = 9;
        h200.ccMinor = 0;
        h200.driverVersion = 13000;
        h200.runtimeVersion = 13000;
        h200.cublasVersion = 130100;
        h200.cublasLtVersion = 130100;
        h200.ncclVersion = 22703;
        const std::string key = cudaPeerKey(h200);
        QCOMPARE(key, std::string("NVIDIA H200, 132 SMs, sm_90, driver 13000, runtime 13000, cuBLAS 130100, "
                                  "cuBLASLt 130100, NCCL 22703"));
        QCOMPARE(cudaPeerKey(h200), key);  // same identity, same key: peers
        // Each field that can change a production kernel's bits changes the key.
        const std::vector<std::function<void(CudaPeerIdentity&)>> changes = {
            [](CudaPeerIdentity& i) { i.name = "NVIDIA H100 80GB HBM3"; },
            [](CudaPeerIdentity& i) { i.smCount = 114; },  // a cut-down part of the same name
            [](CudaPeerIdentity& i) { i.ccMinor = 1; },
            [](CudaPeerIdentity& i) { i.driverVersion = 12080; },
            [](CudaPeerIdentity& i) { i.runtimeVersion = 12080; },
            [](CudaPeerIdentity& i) { i.cublasVersion = 130101; },
            [](CudaPeerIdentity& i) { i.cublasLtVersion = 130101; },
            [](CudaPeerIdentity& i) { i.ncclVersion = 0; },
        };
        std::set<std::string> keys = {key};
        for (const auto& change : changes) {
            CudaPeerIdentity other = h200;
            change(other);
            QVERIFY2(keys.insert(cudaPeerKey(other)).second, cudaPeerKey(other).c_str());
        }
        h200.ncclVersion = 0;
        QVERIFY(cudaPeerKey(h200).ends_with(", no NCCL"));
    }

    void opsWithKernels()
    {
        // Every trace v1 op has a golden CUDA kernel; the training-step ops added for #22 (loss,
        // embedding, backward, pointwise, optimizer) are judged by the CPU golden model only, and
        // the CUDA target says so instead of running something else.
        const std::set<std::string> withKernel = {
            "gemm",    "add",       "mul",        "gelu",       "silu",           "softmax",  "layernorm",
            "rmsnorm", "attention", "all_reduce", "all_gather", "reduce_scatter", "broadcast"};
        for (const std::string& op : withKernel) QVERIFY2(cudaTargetHasOp(op), op.c_str());
        int without = 0;
        for (const golden::GoldenOp& op : golden::goldenOps()) {
            const std::string name(op.name);
            if (withKernel.contains(name)) continue;
            QVERIFY2(!cudaTargetHasOp(name), name.c_str());
            ++without;
        }
        QVERIFY2(without >= 31, std::to_string(without).c_str());
        QVERIFY(!cudaTargetHasOp("conv2d"));
        QVERIFY(!cudaTargetHasOp(""));
    }

    void inventoryWithoutNvml()
    {
        const DeviceReport inv = collectDeviceInventory("libfaultline-no-such-nvml.so.1");
        QVERIFY(!inv.nvmlAvailable);
        QVERIFY2(inv.nvmlError.find("no NVML: dlopen libfaultline-no-such-nvml.so.1") == 0,
                 inv.nvmlError.c_str());
        const nlohmann::json j = deviceReportJson(inv);
        // The one schema: what the worker prints reads back as what was collected.
        auto back = parseDeviceReport(j.dump(), "inventory");
        QVERIFY2(back.ok(), back.ok() ? "" : back.message().c_str());
        QCOMPARE(back->gpus.size(), inv.gpus.size());
        QCOMPARE(back->cudaError, inv.cudaError);
        QCOMPARE(back->cudaBuilt, true);
        QCOMPARE(j["nvml_available"].get<bool>(), false);
        QCOMPARE(j["cuda_built"].get<bool>(), true);
        auto count = deviceCount();
        if (!count) {
            // This machine has no GPU or driver: the inventory says why, plainly.
            QVERIFY(!inv.cudaAvailable);
            QCOMPARE(inv.cudaError, count.message());
            QVERIFY(inv.cudaError.find("cudaGetDeviceCount") != std::string::npos);
            QVERIFY(inv.gpus.empty());
            QCOMPARE(j["cuda_available"].get<bool>(), false);
            QCOMPARE(j["cuda_error"].get<std::string>(), count.message());
            QVERIFY(j["gpus"].empty());
        } else {
            QVERIFY(inv.cudaAvailable);
            QCOMPARE(int(inv.gpus.size()), *count);
            for (const LocalGpu& g : inv.gpus) {
                QVERIFY(g.smCount > 0);
                QVERIFY(!g.name.empty());
                QVERIFY2(g.uuid.rfind("GPU-", 0) == 0 && g.uuid.size() == 40, g.uuid.c_str());
                QVERIFY(!g.health.has_value());
            }
        }
    }

    void targetCreation()
    {
        auto bad = parseTargetSpec("cuda:x");
        if (bad) {
            auto t = createCudaTarget(*bad);
            QVERIFY(!t.ok());
            QVERIFY2(t.message().find("cuda:x") != std::string::npos, t.message().c_str());
        }
        auto spec = parseTargetSpec("cuda:0");
        QVERIFY2(spec.ok(), spec.ok() ? "" : spec.message().c_str());
        auto count = deviceCount();
        auto target = createCudaTarget(*spec);
        if (!count) {
            QVERIFY(!target.ok());
            QCOMPARE(target.message(), "target 'cuda:0': " + count.message());
        } else if (*count > 0) {
            QVERIFY2(target.ok(), target.ok() ? "" : target.message().c_str());
            QCOMPARE((*target)->label(), std::string("cuda:0"));
            QVERIFY((*target)->describe().rfind("cuda:0: ", 0) == 0);
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaHost)
#include "test_cuda_host.moc"
