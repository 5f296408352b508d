// The element-wise golden ops (core/golden/PointwiseOps.cpp, SelectOps.cpp, ReduceOps.cpp)
// against PyTorch's own CPU kernels (tests/fixtures/golden_torch_pointwise.py, the torch of
// /usr/bin/python3) in float32, bfloat16 and float16, with awkward values; the formulas of the
// other implementations the bound must cover (CUDA's fused and reciprocal forms, emulated);
// hand-computed values; what the bounds see (the detection floor: flipped exponent bits and the
// top two mantissa bits); and the errors. Prints the worst |torch - golden| / bound per op and
// dtype, and the detection figures.
#include <QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <functional>
#include <map>
#include <set>

#include "core/golden/GoldenMath.h"
#include "core/golden/RecordedNumerics.h"
#include "support/TestSupport.h"
#include "test_golden_util.h"

using namespace faultline;
using namespace faultline::golden;
using namespace goldentest;

Q_DECLARE_METATYPE(std::vector<faultline::HostTensor>)
Q_DECLARE_METATYPE(faultline::golden::OpParams)

namespace {

constexpr DType kF32 = DType::Float32, kBF16 = DType::BFloat16, kF16 = DType::Float16;

struct Case {
    QString name;
    std::string op;
    OpParams params;
    QString variant;  // how torch is called (fixture): "", inplace, foreach, forward, reciprocal
    std::vector<HostTensor> inputs;
    bool typical = false;  // typical training data: counted in the detection floor
};

// Values of `t` (rounded to it): normal * scale, or awkward ones (signed zeros, subnormals, the
// largest values, rounding ties, NaN, infinities) mixed with normal values.
std::vector<float> values(DType t, size_t n, uint32_t seed, bool awkward = false, float scale = 1.0f,
                          float offset = 0.0f)
{
    std::vector<float> v = randomValues(n, seed, Data::Normal, scale);
    for (float& x : v) x += offset;
    if (awkward) {
        const float big = t == kF16 ? 6.0e4f : t == kBF16 ? 1.0e38f : 3.0e38f;
        const float tiny = t == kF16 ? 6.0e-8f : 1.0e-40f;
        const float ulp1 = t == kF32 ? 0x1p-23f : t == kBF16 ? 0x1p-7f : 0x1p-10f;
        const float special[] = {0.0f, -0.0f, tiny,     -tiny,       3 * tiny,
                                 big,  -big,  1.0f,     1.0f + ulp1, -1.0f - ulp1,
                                 0.5f, NAN,   INFINITY, -INFINITY,   1e-30f * scale + offset};
        for (size_t i = 0; i < v.size(); i += 3) v[i] = special[(i / 3) % std::size(special)];
    }
    return representable(t, v);
}

std::vector<float> positive(DType t, size_t n, uint32_t seed, float lo = 0.1f)
{
    std::vector<float> v = randomValues(n, seed, Data::Uniform);
    for (float& x : v) x = std::fabs(x) * 2.0f + lo;
    return representable(t, v);
}

HostTensor mask(std::vector<uint64_t> shape, uint32_t seed)
{
    HostTensor m(DType::Bool, std::move(shape));
    std::mt19937 rng(seed);
    for (auto& b : m.data) b = std::byte(rng() % 4 == 0 ? 1 : 0);
    return m;
}

QJsonObject jsonParams(const OpParams& p)
{
    QJsonObject o;
    for (const auto& [k, v] : p) {
        const QString key = QString::fromStdString(k);
        if (const auto* i = std::get_if<int64_t>(&v))
            o[key] = qint64(*i);
        else if (const auto* d = std::get_if<double>(&v))
            o[key] =
                std::isfinite(*d) ? QJsonValue(*d) : QJsonValue(QString::number(*d));  // "inf", "-inf", "nan"
        else if (const auto* s = std::get_if<std::string>(&v))
            o[key] = QString::fromStdString(*s);
        else if (const auto* iv = std::get_if<std::vector<int64_t>>(&v)) {
            QJsonArray a;
            for (int64_t e : *iv) a.append(qint64(e));
            o[key] = a;
        }
    }
    return o;
}

// The options bisect uses for an op PyTorch (`torchVersion`, "" unrecorded) ran on `device`.
BoundOptions recordedOptions(const Case& c, const std::string& device = "cpu",
                             const std::string& torchVersion = "")
{
    OpParams p = c.params;
    p["device_type"] = device;
    if (!torchVersion.empty()) p["torch_version"] = torchVersion;
    return recordedJudgement(c.op, p, c.inputs).options;
}

// The cases: every op, dtype and form, typical and awkward data.
std::vector<Case> pytorchCases()
{
    std::vector<Case> cases;
    auto add = [&](QString name, std::string op, OpParams p, std::vector<HostTensor> in, bool typical = false,
                   QString variant = {}) {
        cases.push_back({name, std::move(op), std::move(p), std::move(variant), std::move(in), typical});
    };
    for (DType t : {kF32, kBF16, kF16}) {
        const QString d = QString::fromLatin1(dtypeName(t).data());
        const uint32_t s = uint32_t(t) * 1000;
        auto T = [t](std::vector<uint64_t> shape, std::vector<float> v) {
            return tensor(t, std::move(shape), v);
        };
        const HostTensor x = T({6, 40}, values(t, 240, s + 1)), y = T({6, 40}, values(t, 240, s + 2));
        const HostTensor xa = T({6, 40}, values(t, 240, s + 3, true)),
                         ya = T({6, 40}, values(t, 240, s + 4, true));
        const HostTensor row = T({40}, values(t, 40, s + 5)), pos = T({6, 40}, positive(t, 240, s + 6));
        for (const char* op : {"add", "sub", "mul", "div"}) {
            const std::string o = op;
            const HostTensor& den = o == "div" ? pos : y;
            add(d + "_" + op, o, {}, {x, den}, true);
            add(d + "_" + op + "_awkward", o, {}, {xa, ya});
            add(d + "_" + op + "_broadcast", o, {}, {x, row});
            add(d + "_" + op + "_scalar", o, {{"other", 0.3}}, {x}, true);
            add(d + "_" + op + "_scalar_awkward", o, {{"other", -1.7e-3}}, {xa});
            add(d + "_" + op + "_inplace", o, {{"other", 0.9}}, {x}, true, "inplace");
            add(d + "_" + op + "_foreach", o, {}, {x, den}, true, "foreach");
        }
        for (const char* op : {"add", "sub"}) {
            add(d + "_" + op + "_alpha", op, {{"alpha", 0.1}}, {x, y}, true);
            add(d + "_" + op + "_alpha_awkward", op, {{"alpha", -3.7}}, {xa, ya});
            add(d + "_" + op + "_alpha_inplace", op, {{"alpha", 0.999}}, {x, y}, true, "inplace");
            add(d + "_" + op + "_alpha_foreach", op, {{"alpha", 0.1}}, {x, y}, true, "foreach");
        }
        for (const char* op : {"neg", "sqrt", "rsqrt", "exp"}) {
            const std::string o = op;
            const HostTensor& in = o == "sqrt" || o == "rsqrt" ? pos : x;
            add(d + "_" + op, o, {}, {in}, true);
            add(d + "_" + op + "_awkward", o, {}, {xa});
            add(d + "_" + op + "_inplace", o, {}, {in}, true, "inplace");
        }
        add(d + "_sqrt_foreach", "sqrt", {}, {pos}, true, "foreach");
        for (double e : {0.0, 1.0, 2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.5, 0.3333, 4.0}) {
            const QString n = d + "_pow_" + QString::number(e);
            add(n, "pow", {{"exponent", e}}, {e == 0.5 || e == 1.5 || e == 0.3333 ? pos : x}, true);
            add(n + "_awkward", "pow", {{"exponent", e}}, {xa});
        }
        add(d + "_pow_tensor", "pow", {}, {pos, T({6, 40}, values(t, 240, s + 7, false, 2.0f))}, true);
        add(d + "_reciprocal", "pow", {{"exponent", -1.0}}, {x}, true, "reciprocal");
        // Adam's update: param + (-step) exp_avg / denom, denom = sqrt(v) / bc + eps > 0.
        const HostTensor param = T({6, 40}, values(t, 240, s + 8, false, 0.05f));
        const HostTensor expAvg = T({6, 40}, values(t, 240, s + 9, false, 0.01f));
        const HostTensor denom = T({6, 40}, positive(t, 240, s + 10, 1e-3f));
        for (const char* op : {"addcmul", "addcdiv"}) {
            add(d + "_" + op, op, {{"value", -1e-3}},
                {param, expAvg, std::string(op) == "addcdiv" ? denom : expAvg}, true);
            add(d + "_" + op + "_awkward", op, {{"value", 0.7}},
                {xa, ya, std::string(op) == "addcdiv" ? pos : ya});
            add(d + "_" + op + "_broadcast", op, {{"value", 2.0}},
                {x, row, std::string(op) == "addcdiv" ? pos : y});
            add(d + "_" + op + "_inplace", op, {{"value", 1e-3}}, {param, expAvg, denom}, true, "inplace");
            add(d + "_" + op + "_foreach", op, {{"value", -1e-3}}, {param, expAvg, denom}, true, "foreach");
        }
        for (double w : {0.1, 0.5, 0.9, -0.7, 1.5}) {
            add(d + "_lerp_" + QString::number(w), "lerp", {{"weight", w}}, {x, y}, true);
            add(d + "_lerp_" + QString::number(w) + "_awkward", "lerp", {{"weight", w}}, {xa, ya});
        }
        add(d + "_lerp_inplace", "lerp", {{"weight", 0.1}}, {expAvg, x}, true, "inplace");
        add(d + "_lerp_tensor", "lerp", {}, {x, y, T({6, 40}, values(t, 240, s + 11, false, 0.6f))}, true);
        add(d + "_dropout_forward", "dropout", {{"scale", 1.0 / 0.9}}, {x, mask({6, 40}, s + 12)}, true,
            "forward");
        add(d + "_dropout_backward", "dropout", {{"scale", 1.0 / 0.7}}, {xa, mask({6, 40}, s + 13)}, false,
            "backward");
        add(d + "_masked_fill", "masked_fill", {{"value", -INFINITY}}, {xa, mask({6, 40}, s + 14)});
        add(d + "_masked_fill_row", "masked_fill", {{"value", 1.00390625 + 1e-9}}, {x, mask({40}, s + 15)},
            false, "inplace");
        add(d + "_where", "where", {}, {mask({6, 1}, s + 16), xa, row});
        add(d + "_triu", "triu", {{"diagonal", int64_t(1)}}, {T({3, 6, 40}, values(t, 720, s + 17, true))});
        if (t == kF32)  // a causal mask: bytes moved whatever the dtype
            add("bool_triu_mask", "triu", {{"diagonal", int64_t(1)}}, {mask({3, 6, 40}, s + 40)});
        add(d + "_tril", "tril", {{"diagonal", int64_t(-2)}}, {xa});
        add(d + "_cat", "cat", {{"dim", int64_t(-1)}}, {xa, x, T({6, 3}, values(t, 18, s + 18))});
        // The fused Adam/AdamW step (adam_param, adam_exp_avg, adam_exp_avg_sq) on mid-training
        // state: against torch's fused kernel where this torch has one on the CPU, and in float32
        // against torch.optim's per-tensor step (the same float steps, another order).
        if (t != kF16) {
            std::vector<float> sq = values(t, 240, s + 33, false, 0.01f);
            for (float& e : sq) e = e * e;
            const std::vector<HostTensor> state = {T({6, 40}, values(t, 240, s + 30, false, 0.05f)),
                                                   T({6, 40}, values(t, 240, s + 31, false, 0.01f)),
                                                   T({6, 40}, values(t, 240, s + 32, false, 0.003f)),
                                                   T({6, 40}, representable(t, sq))};
            const OpParams adamw = {
                {"lr", 1e-3},  {"beta1", 0.9}, {"beta2", 0.999},         {"weight_decay", 0.1},
                {"eps", 1e-8}, {"step", 10.0}, {"maximize", int64_t(0)}, {"decoupled", int64_t(1)}};
            OpParams adam = adamw, first = adamw;
            adam["decoupled"] = int64_t(0);
            adam["weight_decay"] = 0.01;
            adam["maximize"] = int64_t(1);
            first["step"] = 1.0;
            for (const char* op : {"adam_param", "adam_exp_avg", "adam_exp_avg_sq"}) {
                const QString n = d + "_" + op;
                for (const auto& [form, params] : {std::pair<QString, OpParams>{"adamw", adamw},
                                                   {"adam_maximize", adam},
                                                   {"first_step", first}}) {
                    add(n + "_" + form + "_fused", op, params, state, true, "fused");
                    if (t == kF32) add(n + "_" + form + "_per_tensor", op, params, state, true, "per_tensor");
                }
            }
        }
        add(d + "_relu", "relu", {}, {x}, true);
        add(d + "_relu_awkward", "relu", {}, {xa});
        add(d + "_relu_inplace", "relu", {}, {xa}, false, "inplace");
        add(d + "_threshold_backward", "threshold_backward", {}, {y, x}, true);
        add(d + "_threshold_backward_awkward", "threshold_backward", {{"threshold", 0.25}}, {ya, xa});
        add(d + "_select_backward", "select_backward",
            {{"input_sizes", std::vector<int64_t>{6, 5, 40}}, {"dim", int64_t(1)}, {"index", int64_t(-2)}},
            {xa}, true);
        add(d + "_select_backward_last", "select_backward",
            {{"input_sizes", std::vector<int64_t>{6, 40, 3}}, {"dim", int64_t(-1)}, {"index", int64_t(0)}},
            {x});
        const HostTensor cube = T({4, 30, 20}, values(t, 2400, s + 19, false, 1.0f, 0.3f));
        add(d + "_sum_dim", "sum", {{"dims", std::vector<int64_t>{1}}}, {cube}, true);
        add(d + "_sum_dims_keep", "sum", {{"dims", std::vector<int64_t>{0, -1}}, {"keepdim", int64_t(1)}},
            {cube}, true);
        add(d + "_sum_all", "sum", {}, {cube}, true);
        add(d + "_sum_awkward", "sum", {{"dims", std::vector<int64_t>{1}}}, {xa});
        add(d + "_sum_float", "sum",
            {{"dims", std::vector<int64_t>{1}}, {"out_dtype", std::string("float32")}}, {cube}, true);
        add(d + "_mean_dim", "mean", {{"dims", std::vector<int64_t>{-1}}}, {cube}, true);
        add(d + "_mean_all", "mean", {}, {cube}, true);
        add(d + "_mean_awkward", "mean", {{"dims", std::vector<int64_t>{0}}}, {xa});
    }
    return cases;
}

bool writeBytes(const QString& path, const HostTensor& t)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(reinterpret_cast<const char*>(t.data.data()),
                                                   qint64(t.data.size())) == qint64(t.data.size());
}

// Exponent bits and the top two mantissa bits of `t`.
std::vector<unsigned> watchedBits(DType t)
{
    const BitLayout l = bitLayout(t);
    std::vector<unsigned> bits;
    for (unsigned b = l.mantissaBits - 2; b < l.mantissaBits + l.exponentBits; ++b) bits.push_back(b);
    return bits;
}

struct Tally {
    double worstRatio = 0.0;
    bool exact = true;  // every bound 0 (where the golden value is finite)
    uint64_t flips = 0, detected = 0;
};

}  // namespace

class TestGoldenPointwise : public QObject {
    Q_OBJECT

private slots:
    void againstPyTorch()
    {
        const std::vector<Case> cases = pytorchCases();
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QJsonArray manifest;
        for (const Case& c : cases) {
            QJsonArray inputs;
            for (size_t i = 0; i < c.inputs.size(); ++i) {
                const QString file = c.name + QStringLiteral("_in%1").arg(i);
                QVERIFY(writeBytes(dir.filePath(file + ".bin"), c.inputs[i]));
                QJsonArray shape;
                for (uint64_t d : c.inputs[i].shape) shape.append(qint64(d));
                inputs.append(
                    QJsonObject{{"file", file},
                                {"shape", shape},
                                {"dtype", QString::fromLatin1(dtypeName(c.inputs[i].dtype).data())}});
            }
            manifest.append(QJsonObject{{"name", c.name},
                                        {"op", QString::fromStdString(c.op)},
                                        {"params", jsonParams(c.params)},
                                        {"variant", c.variant},
                                        {"inputs", inputs}});
        }
        QFile m(dir.filePath("cases.json"));
        QVERIFY(m.open(QIODevice::WriteOnly));
        m.write(QJsonDocument(manifest).toJson());
        m.close();
        FL_WRITE_FIXTURE(QStringLiteral("golden_torch_pointwise.py"), QStringList{dir.path()});
        QFile versionFile(dir.filePath("torch_version"));
        QVERIFY2(versionFile.open(QIODevice::ReadOnly), "the fixture wrote no torch_version");
        const std::string torchVersion = versionFile.readAll().trimmed().toStdString();
        const bool torch1 = torchVersion.starts_with("1.");

        std::map<std::pair<std::string, std::string>, Tally> tally;  // (op, dtype)
        QStringList unsupported;
        int knownPowDifferences = 0;
        for (const Case& c : cases) {
            if (QFile::exists(dir.filePath(c.name + ".unsupported"))) {
                unsupported << c.name;
                continue;
            }
            const Result<HostTensor> golden = runGolden(c.op, c.inputs, c.params);
            QVERIFY2(golden.ok(),
                     qPrintable(c.name + ": " + QString::fromStdString(golden.ok() ? "" : golden.message())));
            const BoundOptions options = recordedOptions(c, "cpu", torchVersion);
            const Result<std::vector<double>> bound =
                goldenErrorBound(c.op, c.inputs, c.params, *golden, options);
            QVERIFY2(bound.ok(),
                     qPrintable(c.name + ": " + QString::fromStdString(bound.ok() ? "" : bound.message())));
            QFile out(dir.filePath(c.name + ".out.bin"));
            QVERIFY2(out.open(QIODevice::ReadOnly), qPrintable(c.name + ": no torch output"));
            HostTensor torch(golden->dtype, golden->shape);
            const QByteArray bytes = out.readAll();
            QVERIFY2(size_t(bytes.size()) == torch.data.size(), qPrintable(c.name + ": torch output size"));
            std::memcpy(torch.data.data(), bytes.data(), torch.data.size());
            const std::vector<double> t = doubles(torch), g = doubles(*golden);
            BoundCheck r = checkWithinBound(t, g, *bound);
            if (c.op == "pow" && golden->dtype == kF16 && c.inputs.size() == 1) {
                // Known: PyTorch 1.13's float16 CPU pow(x, +-0.5) is std::pow, which differs from
                // sqrt and 1/sqrt (its float32/bfloat16 CPU and its CUDA kernels, and the golden)
                // at x = -0 and -inf only: pow(-inf, 0.5) = +inf, pow(-0, -0.5) = +inf,
                // pow(-inf, -0.5) = +0.
                const std::vector<double> x = doubles(c.inputs[0]);
                const double e = std::get<double>(c.params.at("exponent"));
                std::vector<double> tt = t;
                for (size_t i = 0; i < x.size(); ++i)
                    if ((x[i] == -INFINITY || (x[i] == 0 && std::signbit(x[i]))) &&
                        t[i] == std::pow(x[i], e) &&
                        !(t[i] == g[i] || (std::isnan(t[i]) && std::isnan(g[i])))) {
                        tt[i] = g[i];
                        ++knownPowDifferences;
                    }
                r = checkWithinBound(tt, g, *bound);
            }
            QVERIFY2(r.violations == 0, qPrintable(c.name + ": " + describe(r, t, *golden, *bound)));

            Tally& k = tally[{c.op, std::string(dtypeName(golden->dtype))}];
            for (size_t i = 0; i < g.size(); ++i) {
                if (!std::isfinite(g[i])) continue;
                if ((*bound)[i] != 0.0) k.exact = false;
                if ((*bound)[i] > 0.0)
                    k.worstRatio = std::max(k.worstRatio, std::fabs(t[i] - g[i]) / (*bound)[i]);
            }
            if (!c.typical) continue;
            // Detection floor: each watched bit flipped in up to 64 elements of torch's output.
            const auto bits = watchedBits(torch.dtype);
            for (uint64_t i = 0, seen = 0; i < torch.elementCount() && seen < 64; ++i) {
                if (!std::isfinite(t[i]) || t[i] == 0.0) continue;
                ++seen;
                for (unsigned b : bits) {
                    HostTensor one(torch.dtype, {1});
                    setElementBits(one, 0, elementBits(torch, i) ^ (uint64_t(1) << b));
                    const double bad = doubles(one)[0];
                    const double want[] = {g[i]}, have[] = {bad}, lim[] = {(*bound)[i]};
                    ++k.flips;
                    if (checkWithinBound(have, want, lim).violations) ++k.detected;
                }
            }
        }
        qInfo(
            "op           dtype     worst |torch-golden|/bound   exact   detected flips (exponent + top 2 "
            "mantissa)");
        for (const auto& [key, k] : tally)
            qInfo("%-12s %-9s %-28s %-7s %s", key.first.c_str(), key.second.c_str(),
                  k.exact ? "-" : qPrintable(QString::number(k.worstRatio, 'g', 3)), k.exact ? "yes" : "no",
                  k.flips ? qPrintable(QStringLiteral("%1/%2 (%3%)")
                                           .arg(k.detected)
                                           .arg(k.flips)
                                           .arg(100.0 * double(k.detected) / double(k.flips), 0, 'f', 2))
                          : "-");
        qInfo("not run by this torch's CPU kernels: %s", qPrintable(unsupported.join(", ")));
        qInfo("float16 pow(-0 or -inf, +-0.5) where torch's std::pow differs from sqrt: %d",
              knownPowDifferences);
        // Float32 forms PyTorch computes with one correctly rounded operation are judged bit for bit
        // (sqrt only on PyTorch 1.x: 2.x's CPU sqrt is one ulp off at times, faithfulSqrt).
        for (const char* op : {"neg", "sqrt", "where", "masked_fill", "triu", "tril", "cat", "relu",
                               "threshold_backward", "select_backward"})
            QVERIFY2((tally[std::make_pair(std::string(op), std::string("float32"))].exact) ==
                         (torch1 || std::string(op) != "sqrt"),
                     op);
        // The optimizer updates' ops see >= 99% of the flips in every dtype (the goal);
        // the others >= 95% on typical data.
        const std::set<std::string> optimizer = {
            "add",     "sub",  "mul",        "div",          "sqrt",           "addcmul",
            "addcdiv", "lerp", "adam_param", "adam_exp_avg", "adam_exp_avg_sq"};
        for (const auto& [key, k] : tally) {
            if (!k.flips) continue;
            const double rate = double(k.detected) / double(k.flips);
            QVERIFY2(rate >= (optimizer.count(key.first) ? 0.99 : 0.95),
                     qPrintable(QString::fromStdString(key.first + " " + key.second) +
                                QStringLiteral(": %1% of flips detected").arg(100 * rate)));
        }
    }

    // The formulas of implementations other than PyTorch 1.13's CPU kernels, emulated (no GPU
    // here): CUDA contracts a * b + c into one FMA, multiplies by the rounded reciprocal of a CPU
    // scalar divisor, computes addcdiv as value * (t1 / t2) + self and mean as sum * (1/n),
    // divides pow(x, -2) in double; PyTorch 2.x takes lerp's large branch for w <= -0.5. Each lies
    // inside the bound of the recorded settings (float32: the strict ones; bfloat16: a CUDA capture).
    void otherImplementationsInsideBound()
    {
        for (DType t : {kF32, kBF16}) {
            const auto x = values(t, 2000, 71), y = values(t, 2000, 72), p = positive(t, 2000, 73, 1e-3f);
            const HostTensor X = tensor(t, {2000}, x), Y = tensor(t, {2000}, y), P = tensor(t, {2000}, p);
            struct Variant {
                const char* what;
                std::string op;
                OpParams params;
                std::vector<HostTensor> in;
                std::function<float(size_t)> value;  // the other implementation's float result
            };
            const float a = 0.1f, v = -1e-3f, s = 0.3f, w = -0.7f;
            const std::vector<Variant> variants = {
                {"add alpha unfused",
                 "add",
                 {{"alpha", 0.1}},
                 {X, Y},
                 [&](size_t i) { return x[i] + mulRn(a, y[i]); }},
                {"sub alpha unfused",
                 "sub",
                 {{"alpha", 0.1}},
                 {X, Y},
                 [&](size_t i) { return x[i] - mulRn(a, y[i]); }},
                {"div by reciprocal",
                 "div",
                 {{"other", 0.3}},
                 {X},
                 [&](size_t i) { return mulRn(x[i], divRn(1.0f, s)); }},
                {"addcmul cuda",
                 "addcmul",
                 {{"value", -1e-3}},
                 {X, Y, P},
                 [&](size_t i) { return fmaRn(v, mulRn(y[i], p[i]), x[i]); }},
                {"addcdiv cuda",
                 "addcdiv",
                 {{"value", -1e-3}},
                 {X, Y, P},
                 [&](size_t i) { return fmaRn(v, divRn(y[i], p[i]), x[i]); }},
                {"addcdiv unfused",
                 "addcdiv",
                 {{"value", -1e-3}},
                 {X, Y, P},
                 [&](size_t i) { return x[i] + mulRn(v, divRn(y[i], p[i])); }},
                {"lerp unfused",
                 "lerp",
                 {{"weight", 0.1}},
                 {X, Y},
                 [&](size_t i) { return x[i] + mulRn(0.1f, y[i] - x[i]); }},
                {"lerp w=-0.7 small branch",
                 "lerp",
                 {{"weight", -0.7}},
                 {X, Y},
                 [&](size_t i) { return fmaRn(w, y[i] - x[i], x[i]); }},
                {"pow -2 in double",
                 "pow",
                 {{"exponent", -2.0}},
                 {P},
                 [&](size_t i) { return float(1.0 / double(mulRn(p[i], p[i]))); }},
                {"rsqrt 2 ulp off",
                 "rsqrt",
                 {},
                 {P},
                 [&](size_t i) {
                     const float r = float(1.0 / std::sqrt(double(p[i])));
                     return floatFromBits(floatBits(r) + (i % 2 ? 2 : -2));
                 }},
                {"exp 2 ulp off",
                 "exp",
                 {},
                 {X},
                 [&](size_t i) {
                     return floatFromBits(floatBits(float(std::exp(double(x[i])))) + (i % 2 ? 2 : -2));
                 }},
                // p = 0.15: CUDA's scale 1/float(1 - p) is one float ulp from float(1/(1 - p)).
                {"dropout cuda scale",
                 "dropout",
                 {{"scale", 1.0 / 0.85}},
                 {X, X},
                 [&](size_t i) { return mulRn(mulRn(x[i], x[i]), float(1.0 / double(float(0.85)))); }},
            };
            for (const Variant& c : variants) {
                const HostTensor golden = *runGolden(c.op, c.in, c.params);
                OpParams rec = c.params;
                rec["device_type"] = std::string("cuda");
                const BoundOptions o =
                    t == kF32 ? BoundOptions{} : recordedJudgement(c.op, rec, c.in).options;
                const auto bound = *goldenErrorBound(c.op, c.in, c.params, golden, o);
                std::vector<float> other(golden.elementCount());
                for (size_t i = 0; i < other.size(); ++i) other[i] = c.value(i);
                const auto d = doubles(tensor(t, golden.shape, other));
                const BoundCheck r = check(d, golden, bound);
                QVERIFY2(r.violations == 0, qPrintable(QString(c.what) + " " + dtypeName(t).data() + ": " +
                                                       describe(r, d, golden, bound)));
                // ... and it is another computation: in float32 it differs from the golden somewhere.
                const auto g = doubles(golden);
                size_t differ = 0;
                for (size_t i = 0; i < g.size(); ++i)
                    differ += d[i] != g[i] && !(std::isnan(d[i]) && std::isnan(g[i]));
                qInfo("%-26s %-9s differs from the golden in %zu of %zu, worst ratio %.3g", c.what,
                      dtypeName(t).data(), differ, g.size(), r.worstRatio);
                if (t == kF32 && c.op != "pow") QVERIFY2(differ > 0, c.what);
            }
            // mean: CUDA's sum * rounded(1/n) in float, then rounded once.
            const std::vector<HostTensor> cube = {
                tensor(t, {40, 50}, values(t, 2000, 74, false, 1.0f, 0.2f))};
            const OpParams mp = {{"dims", std::vector<int64_t>{1}}};
            const HostTensor golden = *runGolden("mean", cube, mp);
            const BoundOptions o =
                t == kF32 ? BoundOptions{}
                          : recordedJudgement("mean", {{"device_type", std::string("cuda")}}, cube).options;
            const auto bound = *goldenErrorBound("mean", cube, mp, golden, o);
            const auto cv = floats(cube[0]);
            std::vector<float> other(40);
            for (size_t r = 0; r < 40; ++r) {
                double sum = 0;
                for (size_t k = 0; k < 50; ++k) sum += cv[r * 50 + k];
                other[r] = mulRn(float(sum), divRn(1.0f, 50.0f));
            }
            const auto d = doubles(tensor(t, {40}, other));
            QVERIFY(check(d, golden, bound).violations == 0);
        }
    }

    // PyTorch 2.x's CPU sqrt is one float ulp off at times (measured on 2.15 with AVX-512): a
    // recorded CPU sqrt of torch 2.x (or of no recorded version) is allowed its neighbouring float,
    // never two; 1.x's and CUDA's sqrt stay bit for bit; pow 0.5 follows sqrt.
    void faithfulSqrtFollowsTheRecordedTorch()
    {
        const std::vector<float> p = positive(kF32, 1000, 81, 1e-6f);
        const std::vector<HostTensor> in = {tensor(kF32, {1000}, p)};
        struct Row {
            std::string op;
            OpParams params;
            bool faithful;
        };
        const std::vector<Row> rows = {
            {"sqrt",
             {{"device_type", std::string("cpu")}, {"torch_version", std::string("2.15.0+cu132")}},
             true},
            {"sqrt", {{"device_type", std::string("cpu")}}, true},
            {"pow",
             {{"device_type", std::string("cpu")},
              {"torch_version", std::string("2.4.1")},
              {"exponent", 0.5}},
             true},
            {"sqrt",
             {{"device_type", std::string("cpu")}, {"torch_version", std::string("1.13.0a0")}},
             false},
            {"sqrt", {{"device_type", std::string("cuda")}, {"torch_version", std::string("2.15.0")}}, false},
            {"pow", {{"device_type", std::string("cpu")}, {"exponent", 2.0}}, false},
        };
        for (const Row& row : rows) {
            OpParams goldenParams;
            if (row.op == "pow") goldenParams["exponent"] = row.params.at("exponent");
            const HostTensor golden = *runGolden(row.op, in, goldenParams);
            const RecordedJudgement j = recordedJudgement(row.op, row.params, in);
            QCOMPARE(j.options.faithfulSqrt, row.faithful);
            const auto bound = *goldenErrorBound(row.op, in, goldenParams, golden, j.options);
            const std::vector<float> g = floats(golden);
            for (int off : {1, 2}) {
                std::vector<float> other(g);
                for (size_t i = 0; i < other.size(); i += 3)
                    other[i] = floatFromBits(floatBits(other[i]) + uint32_t(i % 2 ? off : -off));
                const BoundCheck r =
                    checkWithinBound(doubles(tensor(kF32, golden.shape, other)), doubles(golden), bound);
                const size_t changed = (other.size() + 2) / 3;
                const size_t want = off == 1 && row.faithful ? 0 : changed;
                QVERIFY2(r.violations == want,
                         qPrintable(QStringLiteral("%1 %2 ulp off: %3 violations, want %4 (%5)")
                                        .arg(QString::fromStdString(row.op))
                                        .arg(off)
                                        .arg(r.violations)
                                        .arg(want)
                                        .arg(QString::fromStdString(j.model))));
            }
        }
    }

    void handComputed()
    {
        auto f32 = [](std::vector<uint64_t> shape, std::vector<float> v) {
            return tensor(kF32, std::move(shape), v);
        };
        auto run1 = [](const char* op, std::vector<HostTensor> in, OpParams p = {}) {
            const Result<HostTensor> r = runGolden(op, in, p);
            if (!r) qWarning("%s: %s", op, r.message().c_str());
            return r ? *r : HostTensor{};
        };
        auto bound1 = [](const char* op, std::vector<HostTensor> in, OpParams p, const HostTensor& g) {
            const Result<std::vector<double>> b = goldenErrorBound(op, in, p, g);
            return b ? *b : std::vector<double>{-1};
        };
        // add with alpha is fused (PyTorch's CPU vector path and CUDA): -(1 + 2^-22) + (1 + 2^-23)^2
        // is exactly 2^-46; the unfused form gives 0, which the bound allows.
        const float one23 = 1.0f + 0x1p-23f;
        const std::vector<HostTensor> fin = {f32({1}, {-(1.0f + 0x1p-22f)}), f32({1}, {one23})};
        const HostTensor fused = run1("add", fin, {{"alpha", double(one23)}});
        QCOMPARE(floats(fused)[0], 0x1p-46f);
        QVERIFY(bound1("add", fin, {{"alpha", double(one23)}}, fused)[0] >= 0x1p-46);
        // Exact where one correctly rounded operation is all there is: bound 0.
        const std::vector<HostTensor> xy = {f32({4}, {1, -2, 3.5f, 1e-30f}),
                                            f32({4}, {0.1f, 0.2f, -0.3f, 7})};
        for (const char* op : {"add", "sub", "mul", "div"}) {
            const HostTensor g = run1(op, xy);
            QCOMPARE(bound1(op, xy, {}, g), std::vector<double>(4, 0.0));
        }
        const HostTensor scaled = run1("mul", {xy[0]}, {{"other", 0.9}});
        QCOMPARE(bound1("mul", {xy[0]}, {{"other", 0.9}}, scaled), std::vector<double>(4, 0.0));
        QCOMPARE(floats(scaled)[2], 3.5f * 0.9f);
        // ... and not where CUDA's reciprocal may differ: a scalar divisor.
        const HostTensor divided = run1("div", {xy[0]}, {{"other", 0.3}});
        QVERIFY(bound1("div", {xy[0]}, {{"other", 0.3}}, divided)[0] > 0);
        // masked_fill rounds its value to float first, then to the dtype (as c10::Scalar::to):
        // 1 + 2^-8 + 1e-9 -> 1 + 2^-8 in float, a tie in bfloat16 -> 1.
        HostTensor m(DType::Bool, {2});
        m.data[0] = std::byte(1);
        const HostTensor filled =
            run1("masked_fill", {tensor(kBF16, {2}, {5, 6}), m}, {{"value", 1.00390625 + 1e-9}});
        QCOMPARE(floats(filled), (std::vector<float>{1.0f, 6.0f}));
        // pow's special exponents are PyTorch's: x^0 = 1 (NaN too), x^0.5 = sqrt (-0 stays -0).
        const HostTensor px = f32({5}, {NAN, -0.0f, 2.0f, 3.0f, -2.0f});
        QCOMPARE(floats(run1("pow", {px}, {{"exponent", 0.0}})), std::vector<float>(5, 1.0f));
        const auto half = floats(run1("pow", {px}, {{"exponent", 0.5}}));
        QVERIFY(std::signbit(half[1]) && half[1] == 0.0f && std::isnan(half[4]));
        QCOMPARE(floats(run1("pow", {px}, {{"exponent", -1.0}}))[2], 0.5f);
        QCOMPARE(floats(run1("pow", {px}, {{"exponent", 3.0}}))[3], 27.0f);
        QVERIFY(std::isnan(floats(run1("pow", {px}, {{"exponent", 1.5}}))[4]));
        QCOMPARE(floats(run1("pow", {f32({1}, {0.0f})}, {{"exponent", -1.0}}))[0], INFINITY);
        // lerp: |w| < 0.5 from self, else from end (PyTorch's two branches).
        const std::vector<HostTensor> se = {f32({1}, {1e8f}), f32({1}, {1.0f})};
        const float d = 1.0f - 1e8f;
        QCOMPARE(floats(run1("lerp", se, {{"weight", 0.25}}))[0], fmaRn(0.25f, d, 1e8f));
        QCOMPARE(floats(run1("lerp", se, {{"weight", 0.6}}))[0], fmaRn(-d, 1.0f - 0.6f, 1.0f));
        QCOMPARE(floats(run1("lerp", se, {{"weight", -0.6}}))[0], fmaRn(-d, 1.0f - -0.6f, 1.0f));
        // dropout: x * mask * scale, the mask bool.
        HostTensor keep(DType::Bool, {3});
        keep.data[0] = keep.data[2] = std::byte(1);
        const float sc = float(1.0 / 0.9);
        QCOMPARE(floats(run1("dropout", {f32({3}, {1, 2, 3}), keep}, {{"scale", 1.0 / 0.9}})),
                 (std::vector<float>{sc, 0.0f, 3.0f * sc}));
        // triu / tril over the last two dims; the rest is +0.
        const HostTensor ones = f32({3, 3}, std::vector<float>(9, 1.0f));
        QCOMPARE(floats(run1("triu", {ones}, {{"diagonal", int64_t(1)}})),
                 (std::vector<float>{0, 1, 1, 0, 0, 1, 0, 0, 0}));
        QCOMPARE(floats(run1("tril", {ones}, {{"diagonal", int64_t(-1)}})),
                 (std::vector<float>{0, 0, 0, 1, 0, 0, 1, 1, 0}));
        QVERIFY(!std::signbit(floats(run1("triu", {f32({2, 2}, {-1, -1, -1, -1})}))[2]));
        // cat skips empty 1-D inputs (PyTorch's legacy rule).
        const HostTensor c =
            run1("cat", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({0}, {}), f32({1, 3}, {7, 8, 9})});
        QCOMPARE(c.shape, (std::vector<uint64_t>{3, 3}));
        QCOMPARE(floats(c)[8], 9.0f);
        const HostTensor c1 =
            run1("cat", {f32({2, 1}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})}, {{"dim", int64_t(-1)}});
        QCOMPARE(floats(c1), (std::vector<float>{1, 3, 4, 2, 5, 6}));
        // where broadcasts condition, x and y together.
        HostTensor cond(DType::Bool, {2, 1});
        cond.data[1] = std::byte(1);
        const HostTensor w = run1("where", {cond, f32({1, 3}, {1, 2, 3}), f32({}, {-1})});
        QCOMPARE(w.shape, (std::vector<uint64_t>{2, 3}));
        QCOMPARE(floats(w), (std::vector<float>{-1, -1, -1, 1, 2, 3}));
        // sum and mean: dims, keepdim, out_dtype.
        std::vector<float> v24(24);
        for (int i = 0; i < 24; ++i) v24[size_t(i)] = float(i);
        const HostTensor x24 = f32({2, 3, 4}, v24);
        const HostTensor s1 =
            run1("sum", {x24}, {{"dims", std::vector<int64_t>{-1}}, {"keepdim", int64_t(1)}});
        QCOMPARE(s1.shape, (std::vector<uint64_t>{2, 3, 1}));
        QCOMPARE(floats(s1)[1], 4.0f + 5 + 6 + 7);
        const HostTensor s02 = run1("sum", {x24}, {{"dims", std::vector<int64_t>{0, 2}}});
        QCOMPARE(s02.shape, (std::vector<uint64_t>{3}));
        QCOMPARE(floats(s02)[0], 0.0f + 1 + 2 + 3 + 12 + 13 + 14 + 15);
        QCOMPARE(floats(run1("sum", {x24}))[0], 276.0f);
        QCOMPARE(floats(run1("mean", {x24}, {{"dims", std::vector<int64_t>{1}}}))[0], 4.0f);
        const HostTensor b = tensor(kBF16, {3}, {1.0f, 0x1p-9f, 0x1p-9f});
        QCOMPARE(floats(run1("sum", {b}))[0], 1.0f);  // 1 + 2^-8 rounds (a tie) to 1 in bfloat16
        QCOMPARE(floats(run1("sum", {b}, {{"out_dtype", std::string("float32")}}))[0], 1.00390625f);
        QCOMPARE(floats(run1("sum", {f32({2, 0}, {})}, {{"dims", std::vector<int64_t>{1}}})),
                 (std::vector<float>{0, 0}));
        QVERIFY(std::isnan(floats(run1("mean", {f32({2, 0}, {})}, {{"dims", std::vector<int64_t>{1}}}))[0]));
        // A sum of one element is exact; of more, bounded.
        QCOMPARE(bound1("sum", {f32({1}, {3})}, {}, f32({}, {3})), std::vector<double>{0.0});
        QVERIFY(bound1("sum", {f32({2}, {3, 1})}, {}, f32({}, {4}))[0] > 0);
    }

    void errors_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<std::vector<HostTensor>>("inputs");
        QTest::addColumn<OpParams>("params");
        QTest::addColumn<QString>("message");
        auto f = [](std::vector<uint64_t> s) { return HostTensor(kF32, std::move(s)); };
        HostTensor i32(DType::Int32, {2});
        QTest::newRow("add both") << "add" << std::vector<HostTensor>{f({2}), f({2})}
                                  << OpParams{{"other", 1.0}}
                                  << "op add: parameter other and inputs[1] (y) both give the second operand";
        QTest::newRow("sub no other") << "sub" << std::vector<HostTensor>{f({2})} << OpParams{}
                                      << "op sub: needs parameter other with 1 input";
        QTest::newRow("no broadcast")
            << "mul" << std::vector<HostTensor>{f({2, 3}), f({4})} << OpParams{}
            << "op mul: inputs[1] has shape [4], which does not broadcast with [2, 3]";
        QTest::newRow("dtypes")
            << "div" << std::vector<HostTensor>{f({2}), HostTensor(kBF16, {2})} << OpParams{}
            << "op div: inputs[1] is bfloat16 but inputs[0] is float32: the op computes in one dtype";
        QTest::newRow("cat shapes")
            << "cat" << std::vector<HostTensor>{f({2, 3}), f({2, 4})} << OpParams{}
            << "op cat: inputs[1] has shape [2, 4], which does not match [2, 3] but along dim 0";
        QTest::newRow("sum twice") << "sum" << std::vector<HostTensor>{f({2, 3})}
                                   << OpParams{{"dims", std::vector<int64_t>{1, -1}}}
                                   << "op sum: parameter dims names dim 1 twice";
        QTest::newRow("mean range") << "mean" << std::vector<HostTensor>{f({2, 3})}
                                    << OpParams{{"dims", std::vector<int64_t>{2}}}
                                    << "op mean: parameter dims=2 is out of range for 2 dimension(s)";
        QTest::newRow("where int")
            << "where" << std::vector<HostTensor>{i32, f({2}), f({2})} << OpParams{}
            << "op where: inputs[0] (condition) has dtype int32; a mask is bool, uint8, "
               "float32, bfloat16, float16, float8_e4m3fn, float8_e5m2";
        QTest::newRow("mask shape")
            << "masked_fill" << std::vector<HostTensor>{f({2, 3}), HostTensor(DType::Bool, {2})}
            << OpParams{{"value", 0.0}}
            << "op masked_fill: inputs[1] (mask) has shape [2], which does not broadcast to "
               "x's [2, 3]";
        QTest::newRow("triu 1-D") << "triu" << std::vector<HostTensor>{f({3})} << OpParams{}
                                  << "op triu: inputs[0] (x) has shape [3] but needs at least 2 dims";
        QTest::newRow("lerp both") << "lerp" << std::vector<HostTensor>{f({2}), f({2}), f({2})}
                                   << OpParams{{"weight", 0.5}}
                                   << "op lerp: parameter weight and inputs[2] (weight) both give the weight";
        QTest::newRow("dropout scale")
            << "dropout" << std::vector<HostTensor>{f({2}), HostTensor(DType::Bool, {2})}
            << OpParams{{"scale", -1.0}} << "op dropout: parameter scale=-1.000000 must be finite and >= 0";
        QTest::newRow("threshold_backward shapes")
            << "threshold_backward" << std::vector<HostTensor>{f({2, 3}), f({3})} << OpParams{}
            << "op threshold_backward: inputs[0] (grad) has shape [2, 3] but inputs[1] (x) [3]";
        const OpParams select = {
            {"input_sizes", std::vector<int64_t>{2, 4, 3}}, {"dim", int64_t(1)}, {"index", int64_t(4)}};
        QTest::newRow("select_backward index")
            << "select_backward" << std::vector<HostTensor>{f({2, 3})} << select
            << "op select_backward: index=4 is out of range for size 4 of dim 1";
        OpParams selectShape = select;
        selectShape["index"] = int64_t(-4);
        QTest::newRow("select_backward grad shape")
            << "select_backward" << std::vector<HostTensor>{f({2, 4})} << selectShape
            << "op select_backward: inputs[0] (grad) has shape [2, 4] but input_sizes [2, 4, 3] without dim "
               "1 "
               "is [2, 3]";
        QTest::newRow("unknown param")
            << "sqrt" << std::vector<HostTensor>{f({2})} << OpParams{{"alpha", 2.0}}
            << "op sqrt: parameter 'alpha' is not one the golden model reads (it reads "
               "none): judging the op without it would compare another computation";
    }

    void errors()
    {
        QFETCH(QString, op);
        QFETCH(std::vector<HostTensor>, inputs);
        QFETCH(OpParams, params);
        QFETCH(QString, message);
        const Result<OutputSpec> r = inferGoldenOutput(op.toStdString(), inputs, params);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.message()), message);
        QVERIFY(!runGolden(op.toStdString(), inputs, params).ok());
    }
};

QTEST_GUILESS_MAIN(TestGoldenPointwise)
#include "test_golden_pointwise.moc"
