// Healthy numpy implementations of the golden ops (tests/fixtures/golden_numpy_reference.py:
// float32 BLAS matmul, numpy's exp/tanh and pairwise sums) lie inside the golden error bounds.
#include <QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "support/TestSupport.h"
#include "test_golden_util.h"

using namespace faultline;
using namespace faultline::golden;
using namespace goldentest;

namespace {

struct NumpyCase {
    QString name;
    std::string op;
    OpParams params;
    QJsonObject jsonParams;
    std::vector<HostTensor> inputs;
};

bool writeFloats(const QString& path, const std::vector<float>& v)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return false;
    return f.write(reinterpret_cast<const char*>(v.data()), qint64(v.size() * sizeof(float))) ==
           qint64(v.size() * sizeof(float));
}

std::vector<double> readFloats(const QString& path, size_t n)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray bytes = f.readAll();
    if (size_t(bytes.size()) != n * sizeof(float)) return {};
    std::vector<float> v(n);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return std::vector<double>(v.begin(), v.end());
}

NumpyCase makeCase(const QString& name, const std::string& op, const QJsonObject& params,
                   std::vector<std::pair<std::vector<uint64_t>, std::vector<float>>> inputs)
{
    NumpyCase c{name, op, {}, params, {}};
    for (auto it = params.begin(); it != params.end(); ++it) {
        if (it->isBool())
            c.params[it.key().toStdString()] = int64_t(it->toBool());
        else if (it->isString())
            c.params[it.key().toStdString()] = it->toString().toStdString();
        else
            c.params[it.key().toStdString()] = it->toDouble();
    }
    for (auto& [shape, values] : inputs) c.inputs.push_back(tensor(DType::Float32, shape, values));
    return c;
}

}  // namespace

class TestGoldenNumpy : public QObject {
    Q_OBJECT

private slots:
    void numpyInsideBound()
    {
        std::vector<NumpyCase> cases;
        cases.push_back(
            makeCase("gemm", "gemm", {},
                     {{{64, 300}, randomValues(64 * 300, 1)}, {{300, 48}, randomValues(300 * 48, 2)}}));
        cases.push_back(makeCase("gemm_tb_cancel", "gemm", {{"trans_b", true}},
                                 {{{40, 512}, randomValues(40 * 512, 3, Data::Cancelling)},
                                  {{24, 512}, randomValues(24 * 512, 4, Data::Uniform)}}));
        cases.push_back(makeCase("gemm_batched", "gemm", {},
                                 {{{3, 20, 50}, randomValues(3000, 5)}, {{50, 30}, randomValues(1500, 6)}}));
        cases.push_back(makeCase("layernorm", "layernorm", {{"eps", 1e-5}},
                                 {{{8, 256}, randomValues(2048, 7)},
                                  {{256}, randomValues(256, 8)},
                                  {{256}, randomValues(256, 9)}}));
        cases.push_back(makeCase("rmsnorm", "rmsnorm", {{"eps", 1e-6}},
                                 {{{8, 256}, randomValues(2048, 10)}, {{256}, randomValues(256, 11)}}));
        cases.push_back(makeCase("softmax", "softmax", {{"scale", 0.2}},
                                 {{{8, 500}, randomValues(4000, 12, Data::Normal, 10.0f)}}));
        cases.push_back(makeCase("gelu_tanh", "gelu", {{"approximate", "tanh"}},
                                 {{{4000}, randomValues(4000, 13, Data::Normal, 3.0f)}}));
        cases.push_back(makeCase("gelu_none", "gelu", {{"approximate", "none"}},
                                 {{{4000}, randomValues(4000, 14, Data::Normal, 3.0f)}}));
        cases.push_back(makeCase("silu", "silu", {}, {{{4000}, randomValues(4000, 15, Data::Normal, 5.0f)}}));
        cases.push_back(makeCase("attention", "attention", {{"causal", true}},
                                 {{{2, 2, 24, 16}, randomValues(1536, 16)},
                                  {{2, 2, 24, 16}, randomValues(1536, 17)},
                                  {{2, 2, 24, 8}, randomValues(768, 18)}}));

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QJsonArray manifest;
        for (const NumpyCase& c : cases) {
            QJsonArray inputs;
            for (size_t i = 0; i < c.inputs.size(); ++i) {
                const QString file = c.name + QStringLiteral("_in%1").arg(i);
                QVERIFY(writeFloats(dir.filePath(file + ".f32"), floats(c.inputs[i])));
                QJsonArray shape;
                for (uint64_t d : c.inputs[i].shape) shape.append(qint64(d));
                inputs.append(QJsonObject{{"file", file}, {"shape", shape}});
            }
            manifest.append(QJsonObject{{"name", c.name},
                                        {"op", QString::fromStdString(c.op)},
                                        {"params", c.jsonParams},
                                        {"inputs", inputs}});
        }
        QFile m(dir.filePath("cases.json"));
        QVERIFY(m.open(QIODevice::WriteOnly));
        m.write(QJsonDocument(manifest).toJson());
        m.close();
        FL_WRITE_FIXTURE(QStringLiteral("golden_numpy_reference.py"), QStringList{dir.path()});

        for (const NumpyCase& c : cases) {
            const Result<HostTensor> golden = runGolden(c.op, c.inputs, c.params);
            QVERIFY2(golden.ok(), golden.ok() ? "" : golden.message().c_str());
            const Result<std::vector<double>> bound = goldenErrorBound(c.op, c.inputs, c.params, *golden);
            QVERIFY(bound.ok());
            const auto numpy = readFloats(dir.filePath(c.name + ".out.f32"), size_t(golden->elementCount()));
            QVERIFY2(!numpy.empty(), qPrintable(c.name + ": no numpy output"));
            const BoundCheck r = check(numpy, *golden, *bound);
            QVERIFY2(r.violations == 0, qPrintable(c.name + ": " + describe(r, numpy, *golden, *bound)));
            // and the numpy result is a different computation, not a copy of the golden bits
            if (c.op == "gemm" || c.op == "softmax") QVERIFY(numpy != doubles(*golden));
        }
    }
};

QTEST_GUILESS_MAIN(TestGoldenNumpy)
#include "test_golden_numpy.moc"
