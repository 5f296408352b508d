// The golden row and element-wise ops, attention and all_reduce: each against a straightforward
// double-precision reference and a float32 implementation in another order (inside the bound),
// injected corruption (outside), the documented formulas bit for bit, narrow dtypes, determinism.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/golden/CollectiveGolden.h"
#include "core/golden/GoldenMath.h"
#include "core/golden/GoldenOrder.h"
#include "test_golden_util.h"

using namespace faultline;
using namespace faultline::golden;
using namespace goldentest;

namespace {

const float kNegInf = -std::numeric_limits<float>::infinity();

HostTensor run(const char* op, const std::vector<HostTensor>& in, const OpParams& p = {},
               const GoldenRunOptions& o = {})
{
    Result<HostTensor> r = runGolden(op, in, p, o);
    if (!r) qFatal("%s failed: %s", op, r.message().c_str());
    return std::move(r).value();
}

std::vector<double> boundOf(const char* op, const std::vector<HostTensor>& in, const OpParams& p,
                            const HostTensor& golden, const BoundOptions& o = {})
{
    Result<std::vector<double>> r = goldenErrorBound(op, in, p, golden, o);
    if (!r) qFatal("%s bound failed: %s", op, r.message().c_str());
    return std::move(r).value();
}

std::vector<double> roundedTo(DType t, std::vector<double> v)
{
    std::vector<std::byte> bytes(v.size() * dtypeSize(t));
    convertFromDouble(t, v.data(), bytes.data(), v.size());
    convertToDouble(t, bytes.data(), v.data(), v.size());
    return v;
}

// ---- references: rows over the last axis ----

using RowRef = std::function<void(const float* x, size_t n, double* y)>;

std::vector<double> perRow(const std::vector<float>& x, size_t n, const RowRef& f)
{
    std::vector<double> y(x.size());
    for (size_t r = 0; r * n < x.size(); ++r) f(x.data() + r * n, n, y.data() + r * n);
    return y;
}

RowRef layerNormDouble(const std::vector<float>& g, const std::vector<float>& b, double eps)
{
    return [&g, &b, eps](const float* x, size_t n, double* y) {
        double mu = 0, var = 0;
        for (size_t i = 0; i < n; ++i) mu += x[i];
        mu /= double(n);
        for (size_t i = 0; i < n; ++i) var += (x[i] - mu) * (x[i] - mu);
        var /= double(n);
        for (size_t i = 0; i < n; ++i) y[i] = (x[i] - mu) / std::sqrt(var + eps) * g[i] + b[i];
    };
}

// float32 Welford, as PyTorch's CPU/CUDA layernorm computes the statistics.
RowRef layerNormWelfordFloat(const std::vector<float>& g, const std::vector<float>& b, float eps)
{
    return [&g, &b, eps](const float* x, size_t n, double* y) {
        float mean = 0, m2 = 0;
        for (size_t i = 0; i < n; ++i) {
            const float delta = x[i] - mean;
            mean += delta / float(i + 1);
            m2 += delta * (x[i] - mean);
        }
        const float rstd = 1.0f / std::sqrt(m2 / float(n) + eps);
        for (size_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * g[i] + b[i];
    };
}

RowRef rmsNormDouble(const std::vector<float>& g, double eps)
{
    return [&g, eps](const float* x, size_t n, double* y) {
        double ms = 0;
        for (size_t i = 0; i < n; ++i) ms += double(x[i]) * x[i];
        const double r = 1.0 / std::sqrt(ms / double(n) + eps);
        for (size_t i = 0; i < n; ++i) y[i] = x[i] * r * g[i];
    };
}

RowRef rmsNormFloatSequential(const std::vector<float>& g, float eps)
{
    return [&g, eps](const float* x, size_t n, double* y) {
        float ms = 0;
        for (size_t i = n; i-- > 0;) ms += x[i] * x[i];
        const float r = 1.0f / std::sqrt(ms / float(n) + eps);  // an rsqrt-like step
        for (size_t i = 0; i < n; ++i) y[i] = g[i] * (x[i] * r);
    };
}

RowRef softmaxDouble(double scale)
{
    return [scale](const float* x, size_t n, double* y) {
        double m = -INFINITY, s = 0;
        for (size_t i = 0; i < n; ++i) m = std::max(m, scale * x[i]);
        for (size_t i = 0; i < n; ++i) s += (y[i] = std::exp(scale * x[i] - m));
        for (size_t i = 0; i < n; ++i) y[i] /= s;
    };
}

// float32 with libm expf, sequential sum, multiply by the reciprocal.
RowRef softmaxFloat(float scale)
{
    return [scale](const float* x, size_t n, double* y) {
        float m = -INFINITY, s = 0;
        std::vector<float> e(n);
        for (size_t i = 0; i < n; ++i) m = std::max(m, scale * x[i]);
        for (size_t i = 0; i < n; ++i) s += (e[i] = std::exp(scale * x[i] - m));
        const float inv = 1.0f / s;
        for (size_t i = 0; i < n; ++i) y[i] = e[i] * inv;
    };
}

double geluErfDouble(double x)
{
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double geluTanhDouble(double x)
{
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double siluDouble(double x)
{
    return x / (1.0 + std::exp(-x));
}
double geluErfFloat(double xd)
{
    const float x = float(xd);
    return x * 0.5f * (1.0f + std::erf(x * float(M_SQRT1_2)));
}
double geluTanhFloat(double xd)
{
    const float x = float(xd);
    return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
}
double siluFloat(double xd)
{
    const float x = float(xd);
    return x * (1.0f / (1.0f + std::exp(-x)));  // x * sigmoid(x)
}

// Naive attention on [heads, s, d] slices, double or float arithmetic.
template <class T>
std::vector<double> attentionReference(const std::vector<float>& q, const std::vector<float>& k,
                                       const std::vector<float>& v, size_t heads, size_t sq, size_t sk,
                                       size_t d, size_t dv, T scale, bool causal)
{
    std::vector<double> out(heads * sq * dv);
    std::vector<T> p(sk);
    for (size_t h = 0; h < heads; ++h)
        for (size_t i = 0; i < sq; ++i) {
            T m = -INFINITY, s = 0;
            for (size_t j = 0; j < sk; ++j) {
                T dot = 0;
                for (size_t t = d; t-- > 0;)  // descending: another order than the golden's
                    dot += T(q[(h * sq + i) * d + t]) * T(k[(h * sk + j) * d + t]);
                p[j] = (causal && j > i) ? T(-INFINITY) : scale * dot;
                m = std::max(m, p[j]);
            }
            for (size_t j = 0; j < sk; ++j) s += (p[j] = std::exp(p[j] - m));
            for (size_t c = 0; c < dv; ++c) {
                T acc = 0;
                for (size_t j = 0; j < sk; ++j) acc += p[j] * T(v[(h * sk + j) * dv + c]);
                out[(h * sq + i) * dv + c] = double(acc / s);  // divide at the end, flash-style
            }
        }
    return out;
}

void expectInside(const std::vector<double>& cand, const HostTensor& golden, const std::vector<double>& bound,
                  const char* what)
{
    const BoundCheck r = check(cand, golden, bound);
    QVERIFY2(r.violations == 0, qPrintable(QString(what) + ": " + describe(r, cand, golden, bound)));
}

void expectCorruptionCaught(const HostTensor& golden, const std::vector<double>& bound,
                            double fraction = 0.95)
{
    for (Corruption c : {Corruption::SignFlip, Corruption::ExponentBitFlip, Corruption::HighMantissaFlip,
                         Corruption::StuckBit20}) {
        const double caught = detectedFraction(golden, bound, c);
        QVERIFY2(caught >= fraction,
                 qPrintable(QStringLiteral("corruption %1: only %2 caught").arg(int(c)).arg(caught)));
    }
}

}  // namespace

class TestGoldenOps : public QObject {
    Q_OBJECT

private slots:
    void layerNorm_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("data");
        QTest::addColumn<double>("offset");
        QTest::addColumn<int>("n");
        QTest::newRow("f32 normal n=96") << int(DType::Float32) << int(Data::Normal) << 0.0 << 96;
        QTest::newRow("f32 normal n=1000") << int(DType::Float32) << int(Data::Normal) << 0.0 << 1000;
        QTest::newRow("f32 offset 100") << int(DType::Float32) << int(Data::Normal) << 100.0 << 256;
        QTest::newRow("f32 wide range") << int(DType::Float32) << int(Data::WideRange) << 0.0 << 128;
        QTest::newRow("bf16 normal") << int(DType::BFloat16) << int(Data::Normal) << 0.0 << 200;
        QTest::newRow("f16 normal") << int(DType::Float16) << int(Data::Normal) << 1.0 << 64;
    }
    void layerNorm()
    {
        QFETCH(int, dtype);
        QFETCH(int, data);
        QFETCH(double, offset);
        QFETCH(int, n);
        const DType t = DType(dtype);
        const size_t rows = 6;
        for (uint32_t seed = 1; seed <= 3; ++seed) {
            auto x = randomValues(rows * size_t(n), seed, Data(data));
            for (auto& v : x) v += float(offset);
            x = representable(t, x);
            auto g = representable(t, randomValues(size_t(n), seed + 10, Data::Uniform));
            auto b = representable(t, randomValues(size_t(n), seed + 20, Data::Uniform, 0.1f));
            const std::vector<HostTensor> in = {tensor(t, {2, 3, uint64_t(n)}, x),
                                                tensor(t, {uint64_t(n)}, g), tensor(t, {uint64_t(n)}, b)};
            const OpParams p{{"eps", 1e-5}};
            const HostTensor golden = run("layernorm", in, p);
            QCOMPARE(golden.shape, in[0].shape);
            QCOMPARE(golden.dtype, t);
            QVERIFY(run("layernorm", in, p).data == golden.data);  // deterministic
            const auto bound = boundOf("layernorm", in, p, golden);
            expectInside(roundedTo(t, perRow(x, size_t(n), layerNormDouble(g, b, 1e-5))), golden, bound,
                         "double");
            expectInside(roundedTo(t, perRow(x, size_t(n), layerNormWelfordFloat(g, b, 1e-5f))), golden,
                         bound, "welford");
            if (t == DType::Float32 && offset == 0.0) expectCorruptionCaught(golden, bound);
        }
    }

    void rmsNorm()
    {
        for (DType t : {DType::Float32, DType::BFloat16}) {
            for (uint32_t seed = 1; seed <= 3; ++seed) {
                const size_t n = 64 * seed + 3;
                const auto x =
                    representable(t, randomValues(5 * n, seed, seed == 3 ? Data::WideRange : Data::Normal));
                const auto g = representable(t, randomValues(n, seed + 5, Data::Uniform));
                const std::vector<HostTensor> in = {tensor(t, {5, n}, x), tensor(t, {n}, g)};
                const OpParams p{{"eps", 1e-6}};
                const HostTensor golden = run("rmsnorm", in, p);
                const auto bound = boundOf("rmsnorm", in, p, golden);
                expectInside(roundedTo(t, perRow(x, n, rmsNormDouble(g, 1e-6))), golden, bound, "double");
                expectInside(roundedTo(t, perRow(x, n, rmsNormFloatSequential(g, 1e-6f))), golden, bound,
                             "float");
                if (t == DType::Float32) expectCorruptionCaught(golden, bound);
            }
        }
    }

    // The documented formulas, bit for bit, on data where other orders give other bits.
    void normFormulasAreTheDocumentedOnes()
    {
        const size_t n = 100;
        auto x = randomValues(n, 5, Data::WideRange);
        x[0] = 3e6f;  // makes the summation order visible in the mean
        const auto g = randomValues(n, 6), b = randomValues(n, 7);
        const float eps = 1e-5f;
        const HostTensor ln = run(
            "layernorm",
            {tensor(DType::Float32, {n}, x), tensor(DType::Float32, {n}, g), tensor(DType::Float32, {n}, b)},
            {{"eps", double(eps)}});
        // mean = tree / n; var = tree(d*d) / n; rstd = 1 / sqrt(var + eps); y = fma(d * rstd, g, b).
        const float mean = treeSumRow(x.data(), n) / float(n);
        std::vector<float> sq(n);
        for (size_t i = 0; i < n; ++i) sq[i] = mulRn(x[i] - mean, x[i] - mean);
        const float rstd = 1.0f / std::sqrt(treeSumRow(sq.data(), n) / float(n) + eps);
        const auto got = floats(ln);
        for (size_t i = 0; i < n; ++i) QCOMPARE(got[i], std::fma(mulRn(x[i] - mean, rstd), g[i], b[i]));
        float sequential = 0;
        for (float v : x) sequential += v;
        QVERIFY(sequential / float(n) != mean);  // the tree is what decides these bits
        // Worked by hand: layernorm([1, 2, 3, 4]) = (x - 2.5) / sqrt(1.25).
        const auto small =
            floats(run("layernorm",
                       {tensor(DType::Float32, {4}, {1, 2, 3, 4}), tensor(DType::Float32, {4}, {1, 1, 1, 1}),
                        tensor(DType::Float32, {4}, {0, 0, 0, 0})},
                       {{"eps", 0.0}}));
        const double want[] = {-1.3416407864998738, -0.4472135954999579, 0.4472135954999579,
                               1.3416407864998738};
        for (int i = 0; i < 4; ++i) QVERIFY(std::fabs(small[size_t(i)] - want[i]) <= 2e-7);
    }

    void softmax_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<double>("scale");  // 0: no scale parameter
        QTest::addColumn<float>("spread");
        QTest::addColumn<int>("n");
        QTest::newRow("f32") << int(DType::Float32) << 0.0 << 3.0f << 50;
        QTest::newRow("f32 scaled") << int(DType::Float32) << 0.125 << 20.0f << 333;
        QTest::newRow("f32 wide") << int(DType::Float32) << 0.0 << 30.0f << 1024;
        QTest::newRow("bf16") << int(DType::BFloat16) << 0.5 << 4.0f << 77;
        QTest::newRow("f16") << int(DType::Float16) << 0.0 << 2.0f << 40;
    }
    void softmax()
    {
        QFETCH(int, dtype);
        QFETCH(double, scale);
        QFETCH(float, spread);
        QFETCH(int, n);
        const DType t = DType(dtype);
        for (uint32_t seed = 1; seed <= 3; ++seed) {
            auto x = representable(t, randomValues(4 * size_t(n), seed, Data::Normal, spread));
            if (seed == 2) x[3] = kNegInf;  // a masked entry
            const std::vector<HostTensor> in = {tensor(t, {4, uint64_t(n)}, x)};
            OpParams p;
            if (scale != 0) p["scale"] = scale;
            const HostTensor golden = run("softmax", in, p);
            const auto bound = boundOf("softmax", in, p, golden);
            const double s = scale != 0 ? scale : 1.0;
            expectInside(roundedTo(t, perRow(x, size_t(n), softmaxDouble(s))), golden, bound, "double");
            expectInside(roundedTo(t, perRow(x, size_t(n), softmaxFloat(float(s)))), golden, bound, "float");
            if (seed == 2) QCOMPARE(floats(golden)[3], 0.0f);
            if (t == DType::Float32 && spread <= 3.0f) expectCorruptionCaught(golden, bound);
        }
    }

    void softmaxByHand()
    {
        const auto y =
            floats(run("softmax", {tensor(DType::Float32, {2, 4}, {1, 1, 1, 1, 0, kNegInf, 0, kNegInf})}));
        const std::vector<float> want = {0.25f, 0.25f, 0.25f, 0.25f, 0.5f, 0.0f, 0.5f, 0.0f};
        QCOMPARE(y, want);
        // The documented steps: y = scale * x, m = tree max, e = goldenExp(y - m), tree sum, divide.
        const auto x = randomValues(70, 9, Data::Normal, 5.0f);
        const auto got = floats(run("softmax", {tensor(DType::Float32, {70}, x)}, {{"scale", 0.3}}));
        std::vector<float> e(70);
        for (size_t i = 0; i < 70; ++i) e[i] = mulRn(0.3f, x[i]);
        const float m = treeMaxRow(e.data(), 70);
        for (auto& v : e) v = goldenExp(v - m);
        const float s = treeSumRow(e.data(), 70);
        for (size_t i = 0; i < 70; ++i) QCOMPARE(got[i], e[i] / s);
        // All -inf: NaN, as max-subtracting softmax gives.
        QVERIFY(std::isnan(floats(run("softmax", {tensor(DType::Float32, {2}, {kNegInf, kNegInf})}))[0]));
    }

    void activations_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("approximate");
        QTest::addColumn<int>("dtype");
        for (int t : {int(DType::Float32), int(DType::BFloat16), int(DType::Float16)}) {
            const QString name = QString::fromLatin1(dtypeName(DType(t)).data());
            QTest::addRow("gelu none %s", qPrintable(name)) << "gelu"
                                                            << "none" << t;
            QTest::addRow("gelu tanh %s", qPrintable(name)) << "gelu"
                                                            << "tanh" << t;
            QTest::addRow("silu %s", qPrintable(name)) << "silu" << QString() << t;
        }
    }
    void activations()
    {
        QFETCH(QString, op);
        QFETCH(QString, approximate);
        QFETCH(int, dtype);
        const DType t = DType(dtype);
        auto x = representable(t, randomValues(3000, 77, Data::Normal, 3.0f));
        x[0] = 0.0f;
        x[1] = -0.0f;
        const std::vector<HostTensor> in = {tensor(t, {30, 100}, x)};
        OpParams p;
        if (!approximate.isEmpty()) p["approximate"] = approximate.toStdString();
        const std::string name = op.toStdString();
        const HostTensor golden = run(name.c_str(), in, p);
        const auto bound = boundOf(name.c_str(), in, p, golden);
        double (*dref)(double) = op == "silu"            ? siluDouble
                                 : approximate == "tanh" ? geluTanhDouble
                                                         : geluErfDouble;
        double (*fref)(double) = op == "silu"            ? siluFloat
                                 : approximate == "tanh" ? geluTanhFloat
                                                         : geluErfFloat;
        std::vector<double> d(x.size()), f(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            d[i] = dref(x[i]);
            f[i] = fref(x[i]);
        }
        expectInside(roundedTo(t, d), golden, bound, "double");
        expectInside(roundedTo(t, f), golden, bound, "float libm");
        // Golden formula, bit for bit.
        const auto got = floats(golden);
        for (size_t i = 0; i < x.size(); ++i) {
            const float want = op == "silu"            ? siluGolden(x[i])
                               : approximate == "tanh" ? geluTanhGolden(x[i])
                                                       : geluErfGolden(x[i]);
            QCOMPARE(floatBits(got[i]), floatBits(floats(tensor(t, {1}, {want}))[0]));
        }
        if (t == DType::Float32) {
            // Typical activations (unit normal): corruption stands out. (Far in gelu's negative
            // tail every float implementation loses all relative accuracy to 1 + erf's
            // cancellation, so a bound there must be wide.)
            const std::vector<HostTensor> typical = {tensor(t, {1000}, randomValues(1000, 78))};
            const HostTensor g = run(name.c_str(), typical, p);
            expectCorruptionCaught(g, boundOf(name.c_str(), typical, p, g));
        }
    }

    void binaryOps_data()
    {
        QTest::addColumn<QString>("op");
        QTest::newRow("add") << "add";
        QTest::newRow("mul") << "mul";
    }

    void binaryOps()
    {
        QFETCH(QString, op);
        const bool mul = op == "mul";
        for (DType t : {DType::Float32, DType::BFloat16, DType::Float16}) {
            const auto x = representable(t, randomValues(500, mul ? 5 : 3, Data::WideRange));
            const auto y = representable(t, randomValues(500, mul ? 6 : 4, Data::WideRange));
            const std::vector<HostTensor> in = {tensor(t, {5, 100}, x), tensor(t, {5, 100}, y)};
            const std::string name = op.toStdString();
            const HostTensor golden = run(name.c_str(), in);
            const auto bound = boundOf(name.c_str(), in, {}, golden);
            // The exact result, rounded once to the dtype (what PyTorch's CPU and CUDA kernels
            // produce), is inside the bound; the golden value is the one float operation, rounded.
            std::vector<double> d(x.size());
            for (size_t i = 0; i < x.size(); ++i)
                d[i] = mul ? double(x[i]) * double(y[i]) : double(x[i]) + double(y[i]);
            expectInside(roundedTo(t, d), golden, bound, "double");
            const auto got = floats(golden);
            for (size_t i = 0; i < x.size(); ++i) {
                const float f = mul ? x[i] * y[i] : x[i] + y[i];
                QCOMPARE(floatBits(got[i]), floatBits(floats(tensor(t, {1}, {f}))[0]));
            }
            if (t == DType::Float32) expectCorruptionCaught(golden, bound);
        }
    }

    void attention_data()
    {
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("sq");
        QTest::addColumn<int>("sk");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<double>("scale");  // 0: default 1/sqrt(d)
        QTest::newRow("causal f32") << true << 17 << 17 << int(DType::Float32) << 0.0;
        QTest::newRow("full f32 sq!=sk") << false << 9 << 40 << int(DType::Float32) << 0.0;
        QTest::newRow("causal bf16") << true << 33 << 33 << int(DType::BFloat16) << 0.0;
        QTest::newRow("full f16 scale") << false << 12 << 12 << int(DType::Float16) << 0.3;
    }
    void attention()
    {
        QFETCH(bool, causal);
        QFETCH(int, sq);
        QFETCH(int, sk);
        QFETCH(int, dtype);
        QFETCH(double, scale);
        const DType t = DType(dtype);
        const size_t b = 2, h = 3, d = 16, dv = 8;
        const auto q = representable(t, randomValues(b * h * size_t(sq) * d, 1, Data::Normal));
        const auto k = representable(t, randomValues(b * h * size_t(sk) * d, 2, Data::Normal));
        const auto v = representable(t, randomValues(b * h * size_t(sk) * dv, 3, Data::Normal));
        const std::vector<HostTensor> in = {tensor(t, {b, h, uint64_t(sq), d}, q),
                                            tensor(t, {b, h, uint64_t(sk), d}, k),
                                            tensor(t, {b, h, uint64_t(sk), dv}, v)};
        OpParams p{{"causal", int64_t(causal)}};
        if (scale != 0) p["scale"] = scale;
        const HostTensor golden = run("attention", in, p, {1, GemmKernel::Auto});
        QCOMPARE(golden.shape, (std::vector<uint64_t>{b, h, uint64_t(sq), dv}));
        QVERIFY(run("attention", in, p, {4, GemmKernel::Portable}).data == golden.data);
        const auto bound = boundOf("attention", in, p, golden);
        const double s = scale != 0 ? scale : 1.0 / std::sqrt(double(d));
        expectInside(roundedTo(t, attentionReference<double>(q, k, v, b * h, size_t(sq), size_t(sk), d, dv, s,
                                                             causal)),
                     golden, bound, "double");
        expectInside(roundedTo(t, attentionReference<float>(q, k, v, b * h, size_t(sq), size_t(sk), d, dv,
                                                            float(s), causal)),
                     golden, bound, "float");
        if (t == DType::Float32) expectCorruptionCaught(golden, bound);
    }

    // attention = gemm(q, k^T, alpha = scale) -> mask -inf -> softmax -> gemm(p, v), bit for bit.
    void attentionIsTheComposition()
    {
        const uint64_t s = 21, d = 12, dv = 5;
        const auto q = randomValues(s * d, 4), k = randomValues(s * d, 5), v = randomValues(s * dv, 6);
        const HostTensor golden =
            run("attention",
                {tensor(DType::Float32, {1, 1, s, d}, q), tensor(DType::Float32, {1, 1, s, d}, k),
                 tensor(DType::Float32, {1, 1, s, dv}, v)},
                {{"causal", std::string("true")}});
        const double scale = 1.0 / std::sqrt(double(d));
        auto scores =
            floats(run("gemm", {tensor(DType::Float32, {s, d}, q), tensor(DType::Float32, {s, d}, k)},
                       {{"trans_b", int64_t(1)}, {"alpha", scale}}));
        for (uint64_t i = 0; i < s; ++i)
            for (uint64_t j = i + 1; j < s; ++j) scores[i * s + j] = kNegInf;
        const HostTensor probs = run("softmax", {tensor(DType::Float32, {s, s}, scores)});
        const HostTensor out = run("gemm", {probs, tensor(DType::Float32, {s, dv}, v)});
        QVERIFY(out.data == golden.data);
    }

    void allReduce()
    {
        // Rank order by hand: 2^24 + 1 + 1 loses the ones; 1 + 1 + 2^24 keeps them.
        const auto one = [](float v) { return tensor(DType::Float32, {1}, {v}); };
        QCOMPARE(floats(run("all_reduce", {one(16777216.0f), one(1.0f), one(1.0f)}))[0], 16777216.0f);
        QCOMPARE(floats(run("all_reduce", {one(1.0f), one(1.0f), one(16777216.0f)}))[0], 16777218.0f);
        QCOMPARE(floats(run("all_reduce", {one(1.0f), one(-3.0f), one(2.0f)},
                            {{"reduce_op", std::string("max")}}))[0],
                 2.0f);
        QCOMPARE(floats(run("all_reduce", {one(1.0f), one(-3.0f), one(2.0f)},
                            {{"reduce_op", std::string("min")}}))[0],
                 -3.0f);
        // bf16 ranks accumulate in float, round once: 256 + 1 + 1 = 258 is a bf16 value, while
        // rounding after each step (256 + 1 -> 256 in bf16) would lose both ones.
        QCOMPARE(floats(run("all_reduce",
                            {tensor(DType::BFloat16, {1}, {256.0f}), tensor(DType::BFloat16, {1}, {1.0f}),
                             tensor(DType::BFloat16, {1}, {1.0f})}))[0],
                 258.0f);
        for (DType t : {DType::Float32, DType::BFloat16, DType::Float16}) {
            std::vector<HostTensor> in;
            std::vector<std::vector<float>> ranks;
            for (uint32_t r = 0; r < 8; ++r) {
                ranks.push_back(representable(t, randomValues(600, 100 + r, Data::WideRange)));
                in.push_back(tensor(t, {6, 100}, ranks.back()));
            }
            const HostTensor golden =
                run("all_reduce", in,
                    {{"ranks", std::vector<std::string>{"g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7"}}});
            const auto bound = boundOf("all_reduce", in, {}, golden);
            std::vector<double> exact(600, 0.0), reversed(600, 0.0);
            for (size_t i = 0; i < 600; ++i) {
                float acc = 0;
                for (size_t r = 8; r-- > 0;) {
                    exact[i] += ranks[r][i];
                    acc += ranks[r][i];
                }
                reversed[i] = acc;
            }
            expectInside(roundedTo(t, exact), golden, bound, "exact");
            expectInside(roundedTo(t, reversed), golden, bound, "reversed ranks");
            if (t == DType::Float32) expectCorruptionCaught(golden, bound, 0.9);
            if (t == DType::BFloat16) {
                // NCCL-style: every partial sum rounded to bf16. Declared, it is inside.
                std::vector<double> nccl(600);
                for (size_t i = 0; i < 600; ++i) {
                    float acc = ranks[7][i];
                    for (size_t r = 7; r-- > 0;) acc = bf16ToFloat(floatToBf16(acc + ranks[r][i]));
                    nccl[i] = acc;
                }
                BoundOptions o;
                o.accumulationUnitRoundoff = 0x1p-8;
                expectInside(nccl, golden, boundOf("all_reduce", in, {}, golden, o), "bf16 partial sums");
            }
            const OpParams maxOp{{"reduce_op", std::string("max")}};
            const HostTensor mx = run("all_reduce", in, maxOp);
            const auto mxBound = boundOf("all_reduce", in, maxOp, mx);
            const auto mxValues = doubles(mx);
            for (size_t i = 0; i < mxValues.size(); ++i)  // exact in any order (f16 may overflow)
                QCOMPARE(mxBound[i], std::isfinite(mxValues[i]) ? 0.0 : INFINITY);
        }
    }

    void dataMovementCollectives()
    {
        // all_gather and broadcast move bytes: a NaN's payload and -0 survive, the bound is 0.
        HostTensor a = tensor(DType::Float32, {2, 2}, {1.0f, -0.0f, 3.0f, 4.0f});
        setElementBits(a, 3, 0x7fc01234u);
        const HostTensor b = tensor(DType::Float32, {2, 2}, {5.0f, 6.0f, 7.0f, 8.0f});
        const OpParams ranks{{"ranks", std::vector<std::string>{"g0", "g1"}}};
        const HostTensor gathered = run("all_gather", {a, b}, ranks);
        QCOMPARE(gathered.shape, (std::vector<uint64_t>{4, 2}));
        QVERIFY(std::memcmp(gathered.data.data(), a.data.data(), a.byteCount()) == 0);
        QVERIFY(std::memcmp(gathered.data.data() + a.byteCount(), b.data.data(), b.byteCount()) == 0);
        const auto gatherBound = boundOf("all_gather", {a, b}, ranks, gathered);
        QCOMPARE(gatherBound[0], 0.0);
        QVERIFY(std::isinf(gatherBound[3]));  // NaN: the same class is required, not a distance
        // One ulp off in one element is beyond the bound.
        std::vector<double> candidate = toDoubleVector(gathered), want = candidate;
        candidate[5] = std::nextafter(float(candidate[5]), 100.0f);
        const BoundCheck off = checkWithinBound(candidate, want, gatherBound);
        QCOMPARE(off.violations, uint64_t(1));
        QCOMPARE(off.firstViolation, int64_t(5));

        const HostTensor root1 = run("broadcast", {a, b}, {{"root", int64_t(1)}});
        QVERIFY(root1.data == b.data);
        const HostTensor root0 = run("broadcast", {a, b});
        QVERIFY(root0.data == a.data);  // root defaults to rank 0
        for (double v : boundOf("broadcast", {a, b}, {{"root", int64_t(1)}}, root1)) QCOMPARE(v, 0.0);
    }

    void reduceScatter()
    {
        // The golden is all_reduce's reduction; rank r records block r along dim 0.
        std::vector<HostTensor> in;
        for (uint32_t r = 0; r < 3; ++r)
            in.push_back(tensor(DType::Float32, {6, 4},
                                representable(DType::Float32, randomValues(24, 300 + r, Data::WideRange))));
        const OpParams p{{"ranks", std::vector<std::string>{"g0", "g1", "g2"}}};
        const HostTensor scattered = run("reduce_scatter", in, p);
        const HostTensor reduced = run("all_reduce", in, p);
        QVERIFY(scattered.data == reduced.data);
        QVERIFY(boundOf("reduce_scatter", in, p, scattered) == boundOf("all_reduce", in, p, reduced));
        const auto rows = recordedRowsOf("reduce_scatter", p, "g2", scattered.shape);
        QVERIFY(rows.ok() && rows->has_value());
        QCOMPARE((*rows)->begin, uint64_t(4));
        QCOMPARE((*rows)->count, uint64_t(2));
        const HostTensor block = rowsOf(scattered, **rows);
        QCOMPARE(block.shape, (std::vector<uint64_t>{2, 4}));
        QCOMPARE(floats(block)[0], floats(scattered)[16]);
        QCOMPARE(rowsOf(toDoubleVector(scattered), scattered.shape, **rows).size(), size_t(8));
        // Every other op: the whole output; a device outside ranks: an error naming it.
        QVERIFY(!recordedRowsOf("all_reduce", p, "g2", scattered.shape)->has_value());
        const auto stranger = recordedRowsOf("reduce_scatter", p, "g9", scattered.shape);
        QVERIFY(!stranger.ok());
        QVERIFY(stranger.message().find("'g9'") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestGoldenOps)
#include "test_golden_ops.moc"
