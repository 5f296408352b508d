// Target specs, simulated fault models, reproduction statistics and campaign verdicts.
#include <QtTest>
#include <bitset>
#include <cmath>
#include <cstring>

#include "core/replay/Campaign.h"
#include "core/replay/FaultModel.h"
#include "core/replay/Statistics.h"
#include "core/replay/TargetSpec.h"

using namespace faultline;

namespace {

HostTensor ramp(uint64_t rows, uint64_t cols)
{
    HostTensor t(DType::Float32, {rows, cols});
    for (uint64_t i = 0; i < rows * cols; ++i) t.as<float>()[i] = 0.25f + float(i % 97) * 0.01f;
    return t;
}

std::unique_ptr<FaultModel> model(const std::string& text)
{
    auto spec = parseTargetSpec(text);
    if (!spec) qFatal("%s", spec.message().c_str());
    auto m = createFaultModel(*spec);
    if (!m) qFatal("%s", m.message().c_str());
    return std::move(m).value();
}

uint32_t bitsOf(const HostTensor& t, uint64_t i)
{
    uint32_t b;
    std::memcpy(&b, t.data.data() + 4 * i, 4);
    return b;
}

RunRecord run(const std::string& target, size_t op, uint32_t rep, RunOutcome outcome,
              const std::string& digest = "d")
{
    RunRecord r;
    r.target = target;
    r.opIndex = op;
    r.op = "gemm";
    r.rep = rep;
    r.outcome = outcome;
    r.digest = digest;
    return r;
}

}  // namespace

class TestFaultModels : public QObject {
    Q_OBJECT
private slots:
    void targetSpecs()
    {
        auto cpu = parseTargetSpec(" cpu ");
        QVERIFY(cpu);
        QCOMPARE(cpu->kind, std::string("cpu"));
        auto s = parseTargetSpec("sim:stuck-bit:value=1,bit=20");
        QVERIFY(s);
        QCOMPARE(s->model, std::string("stuck-bit"));
        QCOMPARE(s->param("bit", ""), std::string("20"));
        QCOMPARE(s->text, std::string("sim:stuck-bit:bit=20+value=1"));  // normalised, sorted
        QVERIFY(parseTargetSpec(s->text));
        auto c = parseTargetSpec("cuda:1");
        QVERIFY(c);
        QCOMPARE(c->model, std::string("1"));
        for (const char* bad : {"gpu", "cuda:", "cuda:x", "tpu:0", "sim:", "sim:flip:rate"})
            QVERIFY2(!parseTargetSpec(bad), bad);
    }

    void targetLists()
    {
        auto l = parseTargetList("cpu,sim:stuck-bit:bit=20,lane=3,sim:nan,cuda:0");
        QVERIFY2(l, l ? "" : l.message().c_str());
        QCOMPARE(l->size(), size_t(4));
        QCOMPARE((*l)[1].param("lane", ""), std::string("3"));
        QCOMPARE((*l)[2].model, std::string("nan"));
        QVERIFY(!parseTargetList(""));
        QVERIFY(!parseTargetList("cpu,bogus"));
    }

    void modelErrors_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("unknown model") << "sim:melt"
                                       << "unknown fault model 'melt'";
        QTest::newRow("unknown param") << "sim:flip:colour=red"
                                       << "unknown parameter 'colour'";
        QTest::newRow("not a number") << "sim:flip:rate=lots"
                                      << "is not a number";
        QTest::newRow("rate range") << "sim:flip:rate=2"
                                    << "rate must be a number in [0, 1], not 2";
        QTest::newRow("sm rate range") << "sim:sm:rate=1.5"
                                       << "rate must be a number in [0, 1]";
        QTest::newRow("negative sm") << "sim:sm:sm=-1"
                                     << "sm must be an integer in [0, ";
        QTest::newRow("sm beyond sms") << "sim:sm:sm=140"
                                       << "sm=140 is not below sms=132";
        QTest::newRow("fractional bit") << "sim:stuck-bit:bit=3.5"
                                        << "bit must be an integer in [0, 63], not 3.5";
        QTest::newRow("bit beyond a word") << "sim:stuck-bit:bit=64"
                                           << "bit must be an integer in [0, 63]";
        QTest::newRow("no lanes") << "sim:stuck-bit:lanes=0"
                                  << "lanes must be an integer in [1, ";
        QTest::newRow("bit range upside down") << "sim:flip:bit_lo=9,bit_hi=3"
                                               << "bit_lo must not be above bit_hi";
        QTest::newRow("negative after") << "sim:hang:after=-2"
                                        << "after must be an integer in [0, ";
        QTest::newRow("zero tile") << "sim:sm:tile=0"
                                   << "tile must be an integer in [1, ";
        QTest::newRow("unknown op filter") << "sim:flip:op=gemmm"
                                           << "op=gemmm is not a trace op";
        QTest::newRow("lane") << "sim:stuck-bit:lane=40"
                              << "lane must be below lanes";
        QTest::newRow("k of n") << "sim:flip:k=4,n=3"
                                << "k <= n";
    }
    void modelErrors()
    {
        QFETCH(QString, spec);
        QFETCH(QString, phrase);
        auto s = parseTargetSpec(spec.toStdString());
        QVERIFY(s);
        auto m = createFaultModel(*s);
        QVERIFY(!m);
        QVERIFY2(QString::fromStdString(m.message()).contains(phrase), m.message().c_str());
    }

    void stuckBitForcesOneBitInOneLane()
    {
        auto m = model("sim:stuck-bit:bit=20,value=1,lane=5,lanes=32");
        HostTensor t = ramp(8, 64);
        const HostTensor before = t;
        FaultContext ctx;
        const uint64_t changed = m->corrupt(t, 0, ctx);
        uint64_t expected = 0;
        for (uint64_t i = 0; i < t.elementCount(); ++i) {
            const uint32_t a = bitsOf(before, i), b = bitsOf(t, i);
            if ((i % 64) % 32 == 5) {
                QVERIFY(b & (1u << 20));
                QCOMPARE(b & ~(1u << 20), a & ~(1u << 20));
                if (!(a & (1u << 20))) ++expected;
            } else {
                QCOMPARE(b, a);
            }
        }
        QCOMPARE(changed, expected);
        QVERIFY(expected > 0);
    }

    void flipsAreSingleBitSeededAndNearTheRate()
    {
        auto m = model("sim:flip:rate=0.01");
        HostTensor a = ramp(256, 256), b = ramp(256, 256), c = ramp(256, 256);
        const HostTensor orig = ramp(256, 256);
        FaultContext ctx;
        ctx.seed = 9;
        const uint64_t na = m->corrupt(a, 0, ctx);
        m->corrupt(b, 0, ctx);
        ctx.repetition = 1;
        m->corrupt(c, 0, ctx);
        QCOMPARE(a.data, b.data);   // same seed, op and repetition: same faults
        QVERIFY(a.data != c.data);  // another repetition: other faults
        // Binomial(65536, 0.01): mean 655, sd 25; 6 sd either side.
        QVERIFY2(na > 500 && na < 810, qPrintable(QString::number(na)));
        uint64_t differing = 0;
        for (uint64_t i = 0; i < a.elementCount(); ++i) {
            const uint32_t x = bitsOf(a, i) ^ bitsOf(orig, i);
            if (x) {
                ++differing;
                QCOMPARE(int(std::bitset<32>(x).count()), 1);
            }
        }
        QCOMPARE(differing, na);
    }

    void smModelStaysInItsTiles()
    {
        auto m = model("sim:sm:sm=3,sms=8,tile=16,rate=1");
        HostTensor t = ramp(64, 64);
        const HostTensor orig = t;
        FaultContext ctx;
        const uint64_t changed = m->corrupt(t, 0, ctx);
        uint64_t inTiles = 0;
        for (uint64_t i = 0; i < t.elementCount(); ++i) {
            const uint64_t r = i / 64, col = i % 64;
            const uint64_t tile = (r / 16) * 4 + col / 16;
            const bool mine = tile % 8 == 3;
            if (bitsOf(t, i) != bitsOf(orig, i)) QVERIFY2(mine, qPrintable(QString("element %1").arg(i)));
            if (mine) ++inTiles;
        }
        QCOMPARE(changed, inTiles);  // rate 1: every element of SM 3's tiles
        const auto map = m->smLayout().tileMap(64, 64);
        QCOMPARE(map.size(), size_t(16));
        QCOMPARE(map[3], 3);
        QCOMPARE(map[11], 3);
    }

    void rangeModelStaysInItsRange()
    {
        auto m = model("sim:range:start=100,length=50,stride=3");
        HostTensor t = ramp(32, 32);
        const HostTensor orig = t;
        FaultContext ctx;
        QCOMPARE(m->corrupt(t, 0, ctx), uint64_t(50));
        for (uint64_t i = 0; i < t.elementCount(); ++i) {
            const bool inRange = i >= 100 && i < 100 + 3 * 50 && (i - 100) % 3 == 0;
            QCOMPARE(bitsOf(t, i) != bitsOf(orig, i), inRange);
        }
    }

    void nanModelWritesNaN()
    {
        auto m = model("sim:nan:rate=0.001");
        HostTensor t = ramp(100, 100);
        FaultContext ctx;
        const uint64_t changed = m->corrupt(t, 0, ctx);
        uint64_t nans = 0;
        for (uint64_t i = 0; i < t.elementCount(); ++i) nans += std::isnan(t.as<float>()[i]);
        QCOMPARE(nans, changed);
        QVERIFY(changed >= 1);
        auto inf = model("sim:nan:value=inf,rate=1");
        HostTensor u = ramp(4, 4);
        inf->corrupt(u, 0, ctx);
        for (uint64_t i = 0; i < 16; ++i) QVERIFY(std::isinf(u.as<float>()[i]));
    }

    void intermittentFailsKOfN()
    {
        auto m = model("sim:intermittent:k=2,n=5");
        FaultContext ctx;
        int applies = 0;
        for (uint32_t rep = 0; rep < 50; ++rep) {
            ctx.repetition = rep;
            applies += m->applies(ctx);
        }
        QCOMPARE(applies, 20);
    }

    void filtersConfineTheDefect()
    {
        auto m = model("sim:flip:op=gemm,name=mlp");
        FaultContext ctx;
        ctx.op = "gemm";
        ctx.moduleName = "blocks.0.mlp.fc1";
        QVERIFY(m->applies(ctx));
        ctx.op = "softmax";
        QVERIFY(!m->applies(ctx));
        ctx.op = "gemm";
        ctx.moduleName = "blocks.0.attn.q";
        QVERIFY(!m->applies(ctx));
    }

    void hangAndCrashStrikeAfterNOps()
    {
        auto h = model("sim:hang:after=2");
        auto c = model("sim:crash:after=0");
        FaultContext ctx;
        ctx.opsRun = 1;
        QCOMPARE(h->actionBefore(ctx), FaultAction::None);
        ctx.opsRun = 2;
        QCOMPARE(h->actionBefore(ctx), FaultAction::Hang);
        ctx.opsRun = 0;
        QCOMPARE(c->actionBefore(ctx), FaultAction::Crash);
    }

    void wilsonIntervals_data()
    {
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("n");
        QTest::addColumn<double>("low");
        QTest::addColumn<double>("high");
        // Wilson score bounds, z = 1.959964, worked by hand: 0/10 upper = z^2 / (n + z^2).
        QTest::newRow("0/10") << 0 << 10 << 0.0 << 0.277533;
        QTest::newRow("5/10") << 5 << 10 << 0.236593 << 0.763407;
        QTest::newRow("10/10") << 10 << 10 << 0.722467 << 1.0;
        QTest::newRow("1/100") << 1 << 100 << 0.001767 << 0.054496;
    }
    void wilsonIntervals()
    {
        QFETCH(int, k);
        QFETCH(int, n);
        QFETCH(double, low);
        QFETCH(double, high);
        const RateInterval r = wilsonInterval(uint64_t(k), uint64_t(n));
        QVERIFY2(std::abs(r.low - low) < 1e-5, qPrintable(QString::number(r.low, 'g', 9)));
        QVERIFY2(std::abs(r.high - high) < 1e-5, qPrintable(QString::number(r.high, 'g', 9)));
        QCOMPARE(r.rate, double(k) / n);
        QCOMPARE(wilsonInterval(0, 0).high, 1.0);
    }

    // A clean result rules out rates above 1 - 0.05^(1/n): by hand, n = 3 -> 63.16%, n = 2995
    // (the fewest runs that rule out 1e-3) -> just under 1e-3, n = 2994 -> just above. The text
    // rounds the bound up (63.16% -> 63.2%, 77.64% -> 77.7%, 0.09981% -> 0.0999%).
    void cleanRateBounds()
    {
        QVERIFY(std::abs(cleanRateBound(3) - 0.631597) < 1e-6);
        QVERIFY(cleanRateBound(2995) < 1e-3);
        QVERIFY(cleanRateBound(2994) > 1e-3);
        QVERIFY(std::abs(cleanRateBound(1000000) - 2.9957e-6) < 1e-9);
        QCOMPARE(cleanRateBound(0), 1.0);
        QCOMPARE(QString::fromStdString(cleanRateText(3)),
                 QString("no failure in 3 runs: rate < 63.2% at 95%"));
        QCOMPARE(QString::fromStdString(cleanRateText(1)), QString("no failure in 1 run: rate < 95% at 95%"));
        QCOMPARE(QString::fromStdString(cleanRateText(2)),
                 QString("no failure in 2 runs: rate < 77.7% at 95%"));
        QCOMPARE(QString::fromStdString(cleanRateText(3000)),
                 QString("no failure in 3000 runs: rate < 0.0999% at 95%"));
        QCOMPARE(QString::fromStdString(cleanRateText(1000000)),
                 QString("no failure in 1000000 runs: rate < 3e-06 at 95%"));
    }

    void verdicts()
    {
        std::vector<RunRecord> runs;
        for (uint32_t rep = 0; rep < 3; ++rep) {
            runs.push_back(run("cpu", 0, rep, RunOutcome::Ok));
            runs.push_back(run("cpu", 1, rep, RunOutcome::Ok));
            runs.push_back(run("sim:bad", 0, rep, RunOutcome::Mismatch,
                               "x" + std::to_string(rep)));  // reproduces, alone
            runs.push_back(run("sim:bad", 1, rep, RunOutcome::Ok));
            runs.push_back(
                run("sim:flaky", 0, rep, rep == 1 ? RunOutcome::Mismatch : RunOutcome::Ok));  // once
            runs.push_back(run("sim:flaky", 1, rep, RunOutcome::Ok));
        }
        const std::vector<std::string> labels = {"cpu", "sim:bad", "sim:flaky"};
        CampaignReport r = summarizeCampaign(runs, labels, {{"cpu", {"golden", true, ""}}});
        QCOMPARE(r.targets.size(), size_t(3));
        QCOMPARE(r.targets[0].verdict, Verdict::Healthy);
        QVERIFY(r.targets[0].deterministic);
        QCOMPARE(r.targets[1].verdict, Verdict::Persistent);  // flaky also fails op 0
        QCOMPARE(r.targets[1].failures, uint64_t(3));
        QVERIFY(!r.targets[1].deterministic);
        QCOMPARE(r.targets[2].verdict, Verdict::Transient);

        // Without the flaky target failing op 0, the bad one is device-specific.
        for (RunRecord& rr : runs)
            if (rr.target == "sim:flaky") rr.outcome = RunOutcome::Ok;
        r = summarizeCampaign(runs, labels, {});
        QCOMPARE(r.targets[1].verdict, Verdict::DeviceSpecific);
        QCOMPARE(r.targets[2].verdict, Verdict::Healthy);
        // Hangs and crashes count as failures and reproduce.
        runs.push_back(run("sim:hang", 1, 0, RunOutcome::Hang, ""));
        runs.push_back(run("sim:hang", 1, 1, RunOutcome::Hang, ""));
        r = summarizeCampaign(runs, {"cpu", "sim:hang"}, {});
        QCOMPARE(r.targets[1].verdict, Verdict::DeviceSpecific);
        uint64_t hangs = 0;
        for (const OpTargetStats& st : r.stats)
            if (st.target == "sim:hang") hangs += st.hangs;
        QCOMPARE(hangs, uint64_t(2));
    }

    void runRecordsRoundTrip()
    {
        RunRecord a = run("sim:x", 7, 2, RunOutcome::Crash, "");
        a.error = "worker killed by signal 6";
        a.stderrTail = "simulated device fault";
        a.vsGolden = {{"max_ulp", 12}};
        auto b = RunRecord::fromJson(a.toJson());
        QVERIFY(b);
        QCOMPARE(b->toJson(), a.toJson());
        QVERIFY(!RunRecord::fromJson(nlohmann::json{{"target", "x"}}));
    }
};

QTEST_APPLESS_MAIN(TestFaultModels)
#include "test_fault_models.moc"
