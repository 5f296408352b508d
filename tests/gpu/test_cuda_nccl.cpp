// all_reduce through NCCL across local GPUs (impl=nccl; label gpu). Needs NCCL in the build and
// at least 2 GPUs; skipped with the reason otherwise. A file of its own: CTest marks a whole
// test executable skipped when any of its functions skips.
#include <cuda_runtime.h>

#include <QtTest>
#include <random>

#include "core/golden/GoldenSupport.h"
#include "core/golden/OpRegistry.h"
#include "core/replay/TargetSpec.h"
#include "kernels/CudaRuntime.h"
#include "kernels/CudaTarget.h"
#include "kernels/NcclAllReduce.h"

using namespace faultline;

namespace {

HostTensor randomTensor(DType t, std::vector<uint64_t> shape, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist;
    std::vector<float> v(size_t(golden::elementCountOf(shape)));
    for (float& x : v) x = dist(rng);
    return golden::fromFloatVector(t, std::move(shape), v);
}

}  // namespace

class TestCudaNccl : public QObject {
    Q_OBJECT

    std::unique_ptr<Target> m_target;

private slots:
    void initTestCase()
    {
        if (!cuda::ncclBuilt()) QSKIP("this build has no NCCL (nccl.h/libnccl not found at configure time)");
        auto count = cuda::deviceCount();
        if (!count) QSKIP(qPrintable(QString::fromStdString("no CUDA device: " + count.message())));
        if (*count < 2)
            QSKIP(qPrintable(QString("NCCL all_reduce needs 2 GPUs; this machine has %1").arg(*count)));
        auto t = cuda::createCudaTarget(*parseTargetSpec("cuda:0"));
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        m_target = std::move(t).value();
    }

    void twoRanksMatchGolden_data()
    {
        QTest::addColumn<QString>("reduceOp");
        QTest::addColumn<bool>("bf16");
        QTest::newRow("sum") << "sum" << false;
        QTest::newRow("max") << "max" << false;
        QTest::newRow("min bf16") << "min" << true;
    }
    void twoRanksMatchGolden()
    {
        QFETCH(QString, reduceOp);
        QFETCH(bool, bf16);
        const DType t = bf16 ? DType::BFloat16 : DType::Float32;
        const std::vector<HostTensor> inputs{randomTensor(t, {64, 100}, 1), randomTensor(t, {64, 100}, 2)};
        TraceOp op;
        op.op = "all_reduce";
        op.params = {{"impl", std::string("nccl")},
                     {"reduce_op", reduceOp.toStdString()},
                     {"ranks", std::vector<std::string>{"cuda:0", "cuda:1"}}};
        ReplayRequest r;
        r.op = &op;
        r.inputs = inputs;
        auto gpu = m_target->run(r, 0);
        QVERIFY2(gpu.ok(), gpu.ok() ? "" : gpu.message().c_str());
        QCOMPARE(gpu->outputs.size(), size_t(2));
        QVERIFY(gpu->outputs[0].data == gpu->outputs[1].data);
        // Two ranks: one operation per element whatever NCCL's order (a + b = b + a exactly; max
        // and min of finite values are exact), so the golden bits are expected.
        auto cpu = golden::runGolden("all_reduce", inputs, {{"reduce_op", reduceOp.toStdString()}});
        QVERIFY(cpu.ok());
        QVERIFY(gpu->outputs[0].data == cpu->data);
    }
};

QTEST_APPLESS_MAIN(TestCudaNccl)
#include "test_cuda_nccl.moc"
