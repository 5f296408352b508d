// The host side of the CUDA target, runnable without a GPU: launch geometry and the tile -> SM
// map layout, op settings (impl, tf32), CUDA error classification and messages, the device
// inventory without NVML, and target creation on a machine without a device.
#include <QtTest>
#include <algorithm>

#include "core/replay/TargetSpec.h"
#include "kernels/CudaOpSettings.h"
#include "kernels/CudaRuntime.h"
#include "kernels/CudaTarget.h"
#include "kernels/DeviceInventory.h"
#include "kernels/LaunchGeometry.h"

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
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("impl");  // empty: not given
        QTest::addColumn<QString>("tf32");  // empty: not given
        QTest::addColumn<bool>("ok");
        QTest::addColumn<bool>("cublas");
        QTest::addColumn<bool>("useTf32");
        QTest::addColumn<QString>("error");
        QTest::newRow("default") << "gemm" << "" << "" << true << false << false << "";
        QTest::newRow("golden") << "gemm" << "golden" << "" << true << false << false << "";
        QTest::newRow("cublas") << "gemm" << "cublas" << "" << true << true << false << "";
        QTest::newRow("cublas tf32") << "gemm" << "cublas" << "1" << true << true << true << "";
        QTest::newRow("cublas tf32 off") << "gemm" << "cublas" << "0" << true << true << false << "";
        QTest::newRow("bad impl") << "gemm" << "cutlass" << "" << false << false << false
                                  << "op gemm: parameter impl=cutlass is not golden or cublas";
        QTest::newRow("cublas softmax") << "softmax" << "cublas" << "" << false << false << false
                                        << "op softmax: impl=cublas replays gemm only";
        QTest::newRow("tf32 golden") << "gemm" << "" << "1" << false << false << false << "op gemm: tf32=1 needs impl=cublas";
    }
    void settingsParse()
    {
        QFETCH(QString, op);
        QFETCH(QString, impl);
        QFETCH(QString, tf32);
        QFETCH(bool, ok);
        QFETCH(bool, cublas);
        QFETCH(bool, useTf32);
        QFETCH(QString, error);
        std::map<std::string, AttrValue> params;
        if (!impl.isEmpty()) params["impl"] = impl.toStdString();
        if (!tf32.isEmpty()) params["tf32"] = int64_t(tf32.toInt());
        auto s = parseCudaOpSettings(op.toStdString(), params);
        QCOMPARE(s.ok(), ok);
        if (!ok) {
            QVERIFY2(QString::fromStdString(s.message()).startsWith(error), s.message().c_str());
            return;
        }
        QCOMPARE(s->impl == CudaImpl::Cublas, cublas);
        QCOMPARE(s->tf32, useTf32);
    }

    void stickyErrors()
    {
        QVERIFY(isStickyCudaError(int(cudaErrorIllegalAddress)));
        QVERIFY(isStickyCudaError(int(cudaErrorLaunchFailure)));
        QVERIFY(isStickyCudaError(int(cudaErrorECCUncorrectable)));
        QVERIFY(!isStickyCudaError(int(cudaErrorMemoryAllocation)));
        QVERIFY(!isStickyCudaError(int(cudaErrorInvalidValue)));
        QVERIFY(!isStickyCudaError(int(cudaErrorInsufficientDriver)));
        const std::string m = cudaErrorFor(3, "running the op", int(cudaErrorIllegalAddress)).message;
        QVERIFY2(m.rfind("cuda:3: running the op: cudaErrorIllegalAddress (700): ", 0) == 0, m.c_str());
    }

    void opsWithKernels()
    {
        for (const char* op : {"gemm", "add", "gelu", "silu", "softmax", "layernorm", "rmsnorm"})
            QVERIFY2(cudaTargetHasOp(op), op);
        QVERIFY(!cudaTargetHasOp("attention"));
        QVERIFY(!cudaTargetHasOp("all_reduce"));
    }

    void inventoryWithoutNvml()
    {
        const DeviceInventory inv = collectDeviceInventory("libfaultline-no-such-nvml.so.1");
        QVERIFY(!inv.nvmlAvailable);
        QVERIFY2(inv.nvmlError.find("no NVML: dlopen libfaultline-no-such-nvml.so.1") == 0, inv.nvmlError.c_str());
        const nlohmann::json j = inventoryToJson(inv);
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
            for (const GpuInfo& g : inv.gpus) {
                QVERIFY(g.smCount > 0);
                QVERIFY(!g.name.empty());
                QVERIFY2(g.uuid.rfind("GPU-", 0) == 0 && g.uuid.size() == 40, g.uuid.c_str());
                QVERIFY(!g.nvml.has_value());
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
