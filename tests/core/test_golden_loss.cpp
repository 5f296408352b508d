// The loss, embedding and backward ops of the golden model (LossGolden.h, BackwardGolden.h):
// PyTorch's own CPU kernels (tests/fixtures/golden_torch_reference.py, run at test time) lie inside
// the bounds judged as bisect judges a capture (device_type=cpu), in float32, bfloat16 and, where
// torch's CPU runs the op, float16; the bounds see flipped exponent and high mantissa bits; exact
// values, goldenLog's accuracy, and the errors for bad indices and targets.
#include <QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <map>

#include "core/golden/GoldenLog.h"
#include "core/golden/RecordedNumerics.h"
#include "support/TestSupport.h"
#include "test_golden_util.h"

using namespace faultline;
using namespace faultline::golden;
using namespace goldentest;

namespace {

HostTensor readTensor(const QString& dir, const QJsonObject& spec, QString* error)
{
    const auto dtype = parseDTypeName(spec["dtype"].toString().toStdString());
    std::vector<uint64_t> shape;
    for (const QJsonValue d : spec["shape"].toArray()) shape.push_back(uint64_t(d.toInteger()));
    if (!dtype) {
        *error = "unknown dtype " + spec["dtype"].toString();
        return {};
    }
    HostTensor t(*dtype, shape);
    QFile f(dir + "/" + spec["file"].toString() + ".bin");
    if (!f.open(QIODevice::ReadOnly)) {
        *error = "cannot open " + f.fileName();
        return {};
    }
    const QByteArray bytes = f.readAll();
    if (size_t(bytes.size()) != t.data.size()) {
        *error = f.fileName() + ": wrong size";
        return {};
    }
    std::memcpy(t.data.data(), bytes.data(), t.data.size());
    return t;
}

OpParams readParams(const QJsonObject& p)
{
    OpParams out;
    for (auto it = p.begin(); it != p.end(); ++it) {
        if (it->isString())
            out[it.key().toStdString()] = it->toString().toStdString();
        else
            out[it.key().toStdString()] = int64_t(it->toInteger());
    }
    out["device_type"] = std::string("cpu");  // as faultline_capture records it
    return out;
}

// The bit positions whose flips the golden judges must see: the exponent and the top two
// mantissa bits.
std::vector<unsigned> watchedBits(DType t)
{
    const BitLayout l = bitLayout(t);
    std::vector<unsigned> bits;
    for (unsigned b = l.mantissaBits - 2; b < l.mantissaBits + l.exponentBits; ++b) bits.push_back(b);
    return bits;
}

struct Tally {
    double worst = 0;
    QString worstCase;
    size_t flips = 0, seen = 0;
};

}  // namespace

class TestGoldenLoss : public QObject {
    Q_OBJECT

private slots:
    void torchReferencesInsideBound()
    {
        // FAULTLINE_TORCH_REFERENCE_DIR: cases another torch wrote (golden_torch_reference.py DIR
        // run by that torch's python), judged instead of this python's.
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = qEnvironmentVariableIsSet("FAULTLINE_TORCH_REFERENCE_DIR")
                                ? qEnvironmentVariable("FAULTLINE_TORCH_REFERENCE_DIR")
                                : tmp.path();
        if (dir == tmp.path())
            FL_WRITE_FIXTURE(QStringLiteral("golden_torch_reference.py"), QStringList{dir});
        QFile m(dir + "/cases.json");
        QVERIFY(m.open(QIODevice::ReadOnly));
        const QJsonArray cases = QJsonDocument::fromJson(m.readAll()).array();
        QVERIFY(cases.size() > 80);
        std::map<std::string, Tally> tally;      // by op/dtype
        std::map<std::string, Tally> detection;  // by dtype
        for (const QJsonValue v : cases) {
            const QJsonObject c = v.toObject();
            const QString name = c["name"].toString();
            const std::string op = c["op"].toString().toStdString();
            QString error;
            std::vector<HostTensor> inputs;
            for (const QJsonValue i : c["inputs"].toArray())
                inputs.push_back(readTensor(dir, i.toObject(), &error));
            const HostTensor torch = readTensor(dir, c["output"].toObject(), &error);
            QVERIFY2(error.isEmpty(), qPrintable(name + ": " + error));
            const OpParams p = readParams(c["params"].toObject());
            const Result<HostTensor> golden = runGolden(op, inputs, p);
            QVERIFY2(golden.ok(),
                     qPrintable(name + ": " +
                                (golden.ok() ? QString() : QString::fromStdString(golden.message()))));
            QVERIFY2(golden->dtype == torch.dtype && golden->shape == torch.shape, qPrintable(name));
            const RecordedJudgement j = recordedJudgement(op, p, inputs);
            const Result<std::vector<double>> bound = goldenErrorBound(op, inputs, p, *golden, j.options);
            QVERIFY2(
                bound.ok(),
                qPrintable(name + ": " + (bound.ok() ? QString() : QString::fromStdString(bound.message()))));
            const std::vector<double> recorded = doubles(torch);
            const BoundCheck r = check(recorded, *golden, *bound);
            QVERIFY2(r.violations == 0, qPrintable(name + ": " + describe(r, recorded, *golden, *bound)));
            // Cases judged in PyTorch's CPU order (cpu_order) are counted apart.
            const std::string kind = op + (p.count("cpu_order") ? "[cpu_order]" : "");
            Tally& t = tally[kind + "/" + std::string(dtypeName(torch.dtype))];
            if (r.worstRatio > t.worst) {
                t.worst = r.worstRatio;
                t.worstCase = name;
            }
            // Flip each watched bit of up to 16 elements of torch's output (both directions, as the
            // bits are): the judge must see it.
            Tally& d = detection[std::string(dtypeName(torch.dtype))];
            Tally& dOp = detection[kind + "/" + std::string(dtypeName(torch.dtype))];
            const std::vector<double> g = doubles(*golden);
            const uint64_t n = torch.elementCount();
            for (uint64_t k = 0; k < std::min<uint64_t>(n, 16); ++k) {
                const uint64_t e = (k * 7919) % n;
                if (!std::isfinite(recorded[e])) continue;
                for (unsigned b : watchedBits(torch.dtype)) {
                    HostTensor bad = torch;
                    setElementBits(bad, e, elementBits(bad, e) ^ (uint64_t(1) << b));
                    const std::vector<double> c1 = doubles(bad);
                    const double one[] = {c1[e]}, gold[] = {g[e]}, bnd[] = {(*bound)[e]};
                    const size_t seen = checkWithinBound(one, gold, bnd).violations;
                    ++d.flips;
                    d.seen += seen;
                    ++dOp.flips;
                    dOp.seen += seen;
                }
            }
        }
        for (const auto& [key, t] : tally)
            qInfo("%-34s worst |torch - golden| / bound %.3g (%s)", key.c_str(), t.worst,
                  qPrintable(t.worstCase));
        for (const auto& [key, d] : detection)
            qInfo("%-10s flipped exponent and top-2 mantissa bits seen: %zu of %zu (%.1f%%)", key.c_str(),
                  d.seen, d.flips, 100.0 * double(d.seen) / double(d.flips));
        // Floors on this awkward data (cancelling derivatives, far tails, rows with a large mean,
        // narrow sums on the CPU in bf16), where a flip of a tiny element can stay inside the error
        // PyTorch's own formula makes there; on a real training step the figures are higher
        // (tests/capture/test_capture_gpt_step.py).
        QVERIFY(detection["float32"].seen >= detection["float32"].flips * 95 / 100);
        QVERIFY(detection["bfloat16"].seen >= detection["bfloat16"].flips * 70 / 100);
        QVERIFY(detection["float16"].seen >= detection["float16"].flips * 95 / 100);
        // In PyTorch's CPU order (torch 1.13 and 2.15 record cpu_order) narrow sums are judged bit
        // for bit: every flip seen.
        for (const char* op :
             {"embedding_backward[cpu_order]/bfloat16", "embedding_backward[cpu_order]/float16",
              "layernorm_backward_weight[cpu_order]/bfloat16",
              "layernorm_backward_bias[cpu_order]/bfloat16"}) {
            if (!detection.count(op)) continue;  // another torch: no cpu_order cases
            QVERIFY2(detection[op].seen == detection[op].flips, op);
            QCOMPARE(tally[op].worst, 0.0);
        }
        // the bounds are not absurdly wide where torch's kernels compute in another order
        QVERIFY(tally["layernorm_backward_input/float32"].worst > 1e-3);
        QVERIFY(tally["log_softmax/float32"].worst > 1e-3);
        QVERIFY(tally["softmax_backward/float32"].worst > 1e-3);
    }

    void goldenLogAccuracy()
    {
        double worst = 0;
        auto ulps = [&](float x) {
            const double exact = std::log(double(x));
            const double got = double(goldenLog(x));
            const double u = ulpAt(DType::Float32, exact);
            worst = std::max(worst, std::fabs(got - exact) / u);
        };
        for (float x = 1e-6f; x < 1e6f; x *= 1.0001f) ulps(x);
        for (uint32_t b = 1; b < 0x00800000u; b += 997) ulps(floatFromBits(b));                  // subnormals
        for (uint32_t b = floatBits(0.5f); b < floatBits(2.0f); b += 7) ulps(floatFromBits(b));  // near 1
        qInfo("goldenLog: worst %.3f ulp", worst);
        QVERIFY(worst <= 2.0);
        QCOMPARE(goldenLog(1.0f), 0.0f);
        QVERIFY(std::isinf(goldenLog(0.0f)) && goldenLog(0.0f) < 0);
        QVERIFY(std::isinf(goldenLog(-0.0f)) && goldenLog(-0.0f) < 0);
        QVERIFY(std::isnan(goldenLog(-1.0f)));
        QVERIFY(std::isinf(goldenLog(INFINITY)) && goldenLog(INFINITY) > 0);
        QVERIFY(std::isnan(goldenLog(NAN)));
    }

    void exactValues()
    {
        // embedding: rows copied, bound 0
        const HostTensor w = tensor(DType::BFloat16, {3, 2}, {1, 2, 3, 4, 5, 6});
        HostTensor idx(DType::Int64, {3});
        const int64_t ids[] = {2, 0, 2};
        std::memcpy(idx.data.data(), ids, sizeof ids);
        const std::vector<HostTensor> in{w, idx};
        auto y = runGolden("embedding", in, {});
        QVERIFY(y.ok());
        QCOMPARE(floats(*y), (std::vector<float>{5, 6, 1, 2, 5, 6}));
        QCOMPARE(y->shape, (std::vector<uint64_t>{3, 2}));
        auto b = goldenErrorBound("embedding", in, {}, *y);
        QVERIFY(b.ok() && *std::max_element(b->begin(), b->end()) == 0.0);

        // embedding_backward: index 2 twice, padding 0 skipped, row 1 untouched
        const HostTensor g = tensor(DType::Float32, {3, 2}, {1, 2, 10, 20, 100, 200});
        const std::vector<HostTensor> bin{g, idx};
        auto gw = runGolden("embedding_backward", bin,
                            params({{"num_weights", int64_t(3)}, {"padding_idx", int64_t(0)}}));
        QVERIFY(gw.ok());
        QCOMPARE(floats(*gw), (std::vector<float>{0, 0, 0, 0, 101, 202}));
        auto gb = goldenErrorBound("embedding_backward", bin,
                                   params({{"num_weights", int64_t(3)}, {"padding_idx", int64_t(0)}}), *gw);
        QVERIFY(gb.ok());
        QCOMPARE((*gb)[0], 0.0);  // padding row: exact
        QVERIFY((*gb)[4] > 0.0);  // two terms: a sum in an unknown order

        // nll_loss: -x[i, t_i], an ignored row; mean divides by the rows kept
        const HostTensor x = tensor(DType::Float32, {3, 2}, {-1, -2, -3, -4, -5, -6});
        HostTensor t(DType::Int64, {3});
        const int64_t ts[] = {1, -100, 0};
        std::memcpy(t.data.data(), ts, sizeof ts);
        const std::vector<HostTensor> nin{x, t};
        auto none = runGolden("nll_loss", nin, params({{"reduction", std::string("none")}}));
        QVERIFY(none.ok());
        QCOMPARE(floats(*none), (std::vector<float>{2, 0, 5}));
        auto mean = runGolden("nll_loss", nin, {});
        QVERIFY(mean.ok());
        QCOMPARE(floats(*mean), (std::vector<float>{3.5f}));
        QVERIFY(mean->shape.empty());
        auto total = runGolden("nll_loss_total_weight", nin, {});
        QVERIFY(total.ok());
        QCOMPARE(floats(*total), (std::vector<float>{2}));
        const std::vector<HostTensor> bwin{tensor(DType::Float32, {}, {1}), x, t, *total};
        auto gx = runGolden("nll_loss_backward", bwin, {});
        QVERIFY(gx.ok());
        QCOMPARE(floats(*gx), (std::vector<float>{0, -0.5f, 0, 0, -0.5f, 0}));

        // layernorm backward: grad_bias is the column sum, grad_weight sum dy xhat
        const HostTensor dy = tensor(DType::Float32, {2, 2}, {1, 2, 3, 4});
        const HostTensor xs = tensor(DType::Float32, {2, 2}, {0, 2, 1, 3});
        const std::vector<HostTensor> lin{dy,
                                          xs,
                                          tensor(DType::Float32, {2}, {1, 2}),
                                          tensor(DType::Float32, {2}, {1, 1}),
                                          tensor(DType::Float32, {2}, {1, 1}),
                                          tensor(DType::Float32, {2}, {0, 0})};
        auto bias = runGolden("layernorm_backward_bias", lin, {});
        QVERIFY(bias.ok());
        QCOMPARE(floats(*bias), (std::vector<float>{4, 6}));
        auto weight = runGolden("layernorm_backward_weight", lin, {});
        QVERIFY(weight.ok());
        QCOMPARE(floats(*weight), (std::vector<float>{-4, 6}));  // 1(-1) + 3(-1), 2(1) + 4(1)
        auto input = runGolden("layernorm_backward_input", lin, {});
        QVERIFY(input.ok());
        QCOMPARE(floats(*input), (std::vector<float>{0, 0, 0, 0}));  // xhat = -1, 1: the row's terms cancel
    }

    void badIndicesAreErrors()
    {
        const HostTensor w = tensor(DType::Float32, {3, 2}, {1, 2, 3, 4, 5, 6});
        HostTensor idx(DType::Int64, {2});
        const int64_t ids[] = {1, 3};
        std::memcpy(idx.data.data(), ids, sizeof ids);
        auto y = runGolden("embedding", std::vector<HostTensor>{w, idx}, {});
        QVERIFY(!y.ok());
        QVERIFY2(y.message().find("inputs[1] (indices) holds 3 at 1, outside [0, 3)") != std::string::npos,
                 qPrintable(QString::fromStdString(y.message())));
        // float indices: refused with the dtypes it reads
        auto f = runGolden("embedding", std::vector<HostTensor>{w, tensor(DType::Float32, {1}, {0})}, {});
        QVERIFY(!f.ok() && f.message().find("needs int64 or int32") != std::string::npos);
        // a target outside the classes that is not ignore_index
        HostTensor t(DType::Int64, {3});
        const int64_t ts[] = {0, 2, -100};
        std::memcpy(t.data.data(), ts, sizeof ts);
        auto n = runGolden(
            "nll_loss", std::vector<HostTensor>{tensor(DType::Float32, {3, 2}, {1, 2, 3, 4, 5, 6}), t}, {});
        QVERIFY(!n.ok());
        QVERIFY2(n.message().find("holds class 2 at 1, outside [0, 2)") != std::string::npos,
                 qPrintable(QString::fromStdString(n.message())));
        // embedding_backward needs num_weights; grad must match the indices
        auto e = runGolden("embedding_backward",
                           std::vector<HostTensor>{tensor(DType::Float32, {2, 2}, {1, 2, 3, 4}), idx}, {});
        QVERIFY(!e.ok() && e.message().find("missing parameter num_weights") != std::string::npos);
        auto s = runGolden("embedding_backward",
                           std::vector<HostTensor>{tensor(DType::Float32, {3, 2}, {1, 2, 3, 4, 5, 6}), idx},
                           params({{"num_weights", int64_t(5)}}));
        QVERIFY(!s.ok() && s.message().find("inputs[0] (grad) has shape [3, 2]") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestGoldenLoss)
#include "test_golden_loss.moc"
