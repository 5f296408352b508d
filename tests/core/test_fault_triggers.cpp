// Triggers of simulated defects (FaultTrigger.h): a defect that fires only for inputs in a
// magnitude band, only in one virtual SM's tiles, only for some inner dimensions, only on one
// dtype, and in a seeded fraction of runs; every parameter range-checked.
#include <QtTest>
#include <cmath>
#include <cstring>

#include "core/collectives/CollectiveRing.h"
#include "core/collectives/Sweep.h"
#include "core/replay/FaultModel.h"
#include "core/replay/FaultTrigger.h"
#include "core/replay/TargetSpec.h"

using namespace faultline;

namespace {

HostTensor filled(uint64_t rows, uint64_t cols, float scale, DType dtype = DType::Float32)
{
    HostTensor t(DType::Float32, {rows, cols});
    for (uint64_t i = 0; i < rows * cols; ++i) t.as<float>()[i] = scale * (0.5f + float(i % 13) / 24.0f);
    if (dtype == DType::Float32) return t;
    HostTensor c(dtype, {rows, cols});
    for (uint64_t i = 0; i < rows * cols; ++i) {
        uint32_t bits;
        std::memcpy(&bits, &t.as<float>()[i], 4);
        setElementBits(c, i, bits >> 16);  // bf16: the upper half of the float
    }
    return c;
}

std::unique_ptr<FaultModel> model(const std::string& text)
{
    auto spec = parseTargetSpec(text);
    if (!spec) qFatal("%s", spec.message().c_str());
    auto m = createFaultModel(*spec);
    if (!m) qFatal("%s", m.message().c_str());
    return std::move(m).value();
}

// Elements `inject` changed in a 64x64 output of a gemm of A [64, k] and B [k, 64] whose largest
// input magnitude is exactly `scale` (a whole-output flip fires visibly when the trigger does).
uint64_t changedFor(const FaultModel& m, float scale, uint64_t k, uint32_t rep = 0,
                    DType dtype = DType::Float32, std::map<std::string, AttrValue> params = {})
{
    TraceOp op;
    op.index = 2;
    op.op = "gemm";
    op.params = std::move(params);
    std::vector<HostTensor> inputs{filled(64, k, scale, dtype), filled(k, 64, scale, dtype)};
    std::vector<HostTensor> outputs{filled(64, 64, 1.0f)};
    FaultContext ctx;
    ctx.op = "gemm";
    ctx.opIndex = op.index;
    ctx.repetition = rep;
    ctx.seed = 1;
    return m.inject(outputs, ctx, &op, inputs);
}

}  // namespace

class TestFaultTriggers : public QObject {
    Q_OBJECT
private slots:
    void rangeChecked_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("rate zero") << "sim:flip:run_rate=0"
                                   << "run_rate must be a number in [1e-07, 1], not 0";
        QTest::newRow("rate above one") << "sim:flip:run_rate=1.5"
                                        << "run_rate must be a number in [1e-07, 1]";
        QTest::newRow("rate not a number") << "sim:flip:run_rate=often"
                                           << "run_rate=often is not a number";
        QTest::newRow("band upside down") << "sim:flip:mag_lo=8,mag_hi=2"
                                          << "mag_lo must be below mag_hi";
        QTest::newRow("empty band") << "sim:flip:mag_hi=0"
                                    << "mag_hi must be above 0";
        QTest::newRow("negative band") << "sim:flip:mag_lo=-1"
                                       << "mag_lo must be a number in [0, ";
        QTest::newRow("sm beyond sms") << "sim:flip:only_sm=8,sms=8"
                                       << "only_sm=8 is not below sms=8";
        QTest::newRow("fractional sm") << "sim:flip:only_sm=1.5"
                                       << "only_sm must be an integer";
        QTest::newRow("inner upside down") << "sim:flip:inner_lo=64,inner_hi=32"
                                           << "inner_lo must not be above inner_hi";
        QTest::newRow("inner zero") << "sim:flip:inner_lo=0"
                                    << "inner_lo must be an integer in [1, ";
        QTest::newRow("integer dtype") << "sim:flip:only_dtype=int8"
                                       << "only_dtype=int8 is not a floating-point dtype";
        QTest::newRow("unknown dtype") << "sim:flip:only_dtype=fp33"
                                       << "only_dtype=fp33 is not a floating-point dtype";
        QTest::newRow("healthy has no trigger") << "sim:healthy:run_rate=0.5"
                                                << "unknown parameter 'run_rate'";
    }
    void rangeChecked()
    {
        QFETCH(QString, spec);
        QFETCH(QString, phrase);
        auto s = parseTargetSpec(spec.toStdString());
        QVERIFY(s);
        auto m = createFaultModel(*s);
        QVERIFY(!m);
        QVERIFY2(QString::fromStdString(m.message()).contains(phrase), m.message().c_str());
        QVERIFY2(QString::fromStdString(m.message()).contains("target 'sim:"),
                 m.message().c_str());  // names it
    }

    void magnitudeBand()
    {
        auto m = model("sim:flip:rate=1,mag_lo=4,mag_hi=16");
        QCOMPARE(changedFor(*m, 2.0f, 32), uint64_t(0));   // below the band
        QVERIFY(changedFor(*m, 8.0f, 32) > 0);             // inside (largest |x| is 8)
        QCOMPARE(changedFor(*m, 16.0f, 32), uint64_t(0));  // the band is [lo, hi)
        QCOMPARE(changedFor(*m, 64.0f, 32), uint64_t(0));
        QVERIFY(m->trigger().describe().find("[4, 16)") != std::string::npos);
    }

    void oneSmTiles()
    {
        auto m = model("sim:flip:rate=1,only_sm=3,sms=8,tile=16");
        TraceOp op;
        op.op = "gemm";
        std::vector<HostTensor> inputs{filled(64, 8, 1), filled(8, 64, 1)};
        std::vector<HostTensor> outputs{filled(64, 64, 1)};
        const HostTensor before = outputs[0];
        FaultContext ctx;
        const uint64_t changed = m->inject(outputs, ctx, &op, inputs);
        uint64_t inTiles = 0, differing = 0;
        for (uint64_t i = 0; i < 64 * 64; ++i) {
            const uint64_t tile = (i / 64 / 16) * 4 + (i % 64) / 16;
            const bool mine = tile % 8 == 3;
            inTiles += mine;
            if (elementBits(outputs[0], i) != elementBits(before, i)) {
                ++differing;
                QVERIFY2(mine, qPrintable(QString("element %1 is outside SM 3's tiles").arg(i)));
            }
        }
        QCOMPARE(changed, differing);
        QCOMPARE(changed, inTiles);  // rate 1: every element of SM 3's tiles, nothing else
    }

    void innerDimension()
    {
        auto m = model("sim:flip:rate=1,inner_lo=48,inner_hi=96");
        QCOMPARE(changedFor(*m, 1, 32), uint64_t(0));
        QVERIFY(changedFor(*m, 1, 64) > 0);
        QCOMPARE(changedFor(*m, 1, 128), uint64_t(0));
        // gemm with trans_a: k is A's rows.
        TraceOp op;
        op.op = "gemm";
        op.params["trans_a"] = int64_t(1);
        std::vector<HostTensor> inputs{filled(64, 16, 1), filled(64, 16, 1)};
        QCOMPARE(measureTriggerInputs(&op, inputs).inner, uint64_t(64));
        op.params.clear();
        QCOMPARE(measureTriggerInputs(&op, inputs).inner, uint64_t(16));
    }

    void oneDType()
    {
        auto m = model("sim:flip:rate=1,only_dtype=bf16");
        QCOMPARE(changedFor(*m, 1, 32, 0, DType::Float32), uint64_t(0));
        QVERIFY(changedFor(*m, 1, 32, 0, DType::BFloat16) > 0);
        auto fp32 = model("sim:flip:rate=1,only_dtype=fp32");
        QVERIFY(changedFor(*fp32, 1, 32, 0, DType::Float32) > 0);
        QCOMPARE(changedFor(*fp32, 1, 32, 0, DType::BFloat16), uint64_t(0));
    }

    // A defect of the FP32 cores fires on float32 computed in FP32 and never with TF32 operands
    // (tensor cores); only_dtype=tf32 the other way round.
    void fp32CoresOrTensorCores()
    {
        auto fp32 = model("sim:flip:rate=1,only_dtype=fp32");
        auto tf32 = model("sim:flip:rate=1,only_dtype=TF32");
        const std::map<std::string, AttrValue> lt{{"impl", std::string("cublaslt")}, {"tf32", int64_t(1)}};
        const std::map<std::string, AttrValue> fast{
            {"impl", std::string("cublaslt")}, {"compute_type", std::string("CUBLAS_COMPUTE_32F_FAST_TF32")}};
        QVERIFY(changedFor(*fp32, 1, 32) > 0);
        QCOMPARE(changedFor(*tf32, 1, 32), uint64_t(0));
        QCOMPARE(changedFor(*fp32, 1, 32, 0, DType::Float32, lt), uint64_t(0));
        QVERIFY(changedFor(*tf32, 1, 32, 0, DType::Float32, lt) > 0);
        QVERIFY(changedFor(*tf32, 1, 32, 0, DType::Float32, fast) > 0);
        QCOMPARE(changedFor(*tf32, 1, 32, 0, DType::BFloat16, lt), uint64_t(0));  // bf16 is never TF32
        QVERIFY2(fp32->trigger().describe().find("computed in FP32 (not TF32)") != std::string::npos,
                 fp32->trigger().describe().c_str());
        QVERIFY2(tf32->trigger().describe().find("with TF32 operands") != std::string::npos,
                 tf32->trigger().describe().c_str());
    }

    // grid=N: N blocks stride over the tiles, so tile t runs on block t mod N and SM (t mod N) mod
    // sms; a defect bound to one SM fires only where a block lands on it.
    void smallerGridsMoveTiles()
    {
        VirtualSmLayout l;
        l.tile = 8;
        l.sms = 8;
        QCOMPARE(l.smOfTile(13), 5);
        QCOMPARE(l.smOfTile(13, 4), 1);
        QCOMPARE(l.smOfTile(13, 1), 0);
        QCOMPARE(l.smOfTile(13, 32), 5);
        QCOMPARE(l.tileMap(16, 24, 2), (std::vector<int32_t>{0, 1, 0, 1, 0, 1}));
        QCOMPARE(l.smOfElement(9, 17, 24, 4), 1);  // tile 5
        auto m = model("sim:flip:rate=1,only_sm=3,sms=8,tile=8");
        auto changed = [&](uint32_t grid) {
            TraceOp op;
            op.index = 2;
            op.op = "gemm";
            std::vector<HostTensor> inputs{filled(64, 16, 1), filled(16, 64, 1)};
            std::vector<HostTensor> outputs{filled(64, 64, 1.0f)};
            FaultContext ctx;
            ctx.op = "gemm";
            ctx.opIndex = op.index;
            ctx.seed = 1;
            ctx.grid = grid;
            return m->inject(outputs, ctx, &op, inputs);
        };
        QCOMPARE(changed(0), uint64_t(8 * 8 * 8));   // 8 of 64 tiles
        QCOMPARE(changed(2), uint64_t(0));           // SMs 0 and 1 only
        QCOMPARE(changed(4), uint64_t(16 * 8 * 8));  // tiles 3, 7, 11, ...: 16 of 64
    }

    void runRateIsSeededAndNearTheRate_data()
    {
        QTest::addColumn<double>("rate");
        QTest::addColumn<int>("runs");
        QTest::newRow("1e-2") << 1e-2 << 20000;
        QTest::newRow("1e-3") << 1e-3 << 200000;
        QTest::newRow("1e-5") << 1e-5 << 2000000;
    }
    void runRateIsSeededAndNearTheRate()
    {
        QFETCH(double, rate);
        QFETCH(int, runs);
        auto spec = parseTargetSpec("sim:flip:run_rate=" + std::to_string(rate));
        QVERIFY(spec);
        std::vector<std::string> known;
        auto trigger = parseFaultTrigger(*spec, known);
        QVERIFY2(trigger, trigger ? "" : trigger.message().c_str());
        QCOMPARE(trigger->runRate, rate);
        const TriggerInputs in;
        uint64_t fired = 0, again = 0, otherSeed = 0, differ = 0;
        for (int rep = 0; rep < runs; ++rep) {
            const bool one = trigger->fires(in, 1, 0, uint32_t(rep)),
                       two = trigger->fires(in, 2, 0, uint32_t(rep));
            fired += one;
            again += trigger->fires(in, 1, 0, uint32_t(rep));
            otherSeed += two;
            differ += one != two;
        }
        QCOMPARE(again, fired);  // seeded: the same runs fire again
        // Expected 200 firings in each row; 5 standard deviations either side (a binomial with
        // mean 200 has sd ~14) still fails a rate off by a factor of 1.5.
        const double mean = rate * runs, sd = std::sqrt(mean * (1 - rate));
        QVERIFY2(std::fabs(double(fired) - mean) < 5 * sd, qPrintable(QString::number(fired)));
        QVERIFY2(std::fabs(double(otherSeed) - mean) < 5 * sd, qPrintable(QString::number(otherSeed)));
        QVERIFY(differ > 0);  // another seed, other runs
    }

    void simulatedRanksRefuseTriggers()
    {
        // They corrupt what passes through them without triggers: a trigger would be ignored.
        auto ring = RingRank::create({"sim:flip:run_rate=0.5", "sim:healthy"}, 0, 1);
        QVERIFY(!ring);
        QVERIFY2(ring.message().find("simulated ranks do not read them") != std::string::npos,
                 ring.message().c_str());
        QVERIFY(RingRank::create({"sim:flip:rate=0.5", "sim:healthy"}, 0, 1));
        SweepOptions options;
        options.targets = {"sim:healthy", "sim:nan:only_sm=1"};
        auto sweep = SweepRank::create(options, 1);
        QVERIFY(!sweep);
        QVERIFY2(sweep.message().find("only_sm") != std::string::npos, sweep.message().c_str());
        QVERIFY(SweepRank::create(options, 0));
    }

    void describedInTheTarget()
    {
        auto m = model("sim:flip:rate=1,run_rate=0.001,only_sm=2,inner_lo=64,only_dtype=bf16");
        const std::string d = m->trigger().describe();
        for (const char* part : {"0.001 of runs", "virtual SM 2", "inner dimensions 64..", "bfloat16"})
            QVERIFY2(d.find(part) != std::string::npos, d.c_str());
        QCOMPARE(model("sim:flip")->trigger().describe(), std::string());
    }
};

QTEST_APPLESS_MAIN(TestFaultTriggers)
#include "test_fault_triggers.moc"
