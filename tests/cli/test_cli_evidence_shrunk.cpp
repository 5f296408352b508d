// `faultline evidence --min-reproducer MIN.h5`: the demo incident's divergent op shrunk by
// `faultline shrink` becomes the bundle's reproducer (byte-identical), reproduce.sh replays it
// and reproduces the campaign, `verify` accepts the bundle; a reproducer of an op the suspect did
// not fail, or of several ops, is refused naming the file.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "core/replay/CampaignResultsFile.h"
#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

using faultline::test::jsonObject;
using faultline::test::runFaultline;

namespace {

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestCliEvidenceShrunk : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_campaign, m_trace, m_target, m_min;
    qint64 m_op = -1;

    QString path(const QString& name) const { return m_dir.filePath(name); }

private slots:
    void initTestCase()
    {
        auto demo = runFaultline({"demo", "--headless", "--out", path("incident")});
        QVERIFY2(demo.exitCode == 0, demo.err.constData());
        m_campaign = path("incident/replay-results.h5");
        auto doc = faultline::readCampaignResults(m_campaign.toStdString());
        QVERIFY2(doc, doc ? "" : doc.message().c_str());
        m_trace = QString::fromStdString((*doc)["trace"].get<std::string>());
        // The suspect's simulated stand-in and the first op it failed.
        for (const auto& t : (*doc)["targets"])
            if (t["target"].get<std::string>().rfind("sim:", 0) == 0 && !t["failing_ops"].empty()) {
                m_target = QString::fromStdString(t["target"].get<std::string>());
                m_op = t["failing_ops"][0].get<qint64>();
            }
        QVERIFY(!m_target.isEmpty() && m_op >= 0);
        m_min = path("min.h5");
        auto shrink =
            runFaultline({"shrink", m_trace, "--op", QString::number(m_op), "--target", m_target, "--out",
                          m_min, "--seed", QString::number((*doc)["seed"].get<qint64>()), "--json"});
        QVERIFY2(shrink.exitCode == 0, shrink.err.constData());
        const QJsonObject o = jsonObject(shrink.out);
        QVERIFY(o.value("minimal_reproduces").toBool());
        QVERIFY(o.value("minimal").toObject().value("elements").toInteger() <
                o.value("original").toObject().value("elements").toInteger());
    }

    void bundleReplaysTheMinimalReproducer()
    {
        const QString bundle = path("case-min");
        auto r =
            runFaultline({"evidence", "--out", bundle, "--campaign", m_campaign, "--min-reproducer", m_min});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(readFile(bundle + "/reproducer/trace.h5"), readFile(m_min));
        QVERIFY(!QFile::exists(bundle + "/reproducer/.symptom-ops.h5"));
        const QJsonObject c = QJsonDocument::fromJson(readFile(bundle + "/case.json")).object();
        const QJsonObject repro = c.value("reproducer").toObject();
        QCOMPARE(repro.value("shrunk_from").toString(), QString("min.h5"));
        QCOMPARE(repro.value("ops").toArray(), QJsonArray{m_op});
        QVERIFY(repro.value("command").toString().contains("--ops " + QString::number(m_op)));
        const QByteArray report = readFile(bundle + "/report.md");
        QVERIFY2(report.contains("faultline shrink"), report.constData());
        const QByteArray script = readFile(bundle + "/reproducer/reproduce.sh");
        QVERIFY(script.contains("made by `faultline shrink`"));
        // The reproducer reproduces, and the bundle verifies.
        QProcess sh;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("FAULTLINE", QStringLiteral(FAULTLINE_EXE));
        env.insert("FAULTLINE_WORKER", QStringLiteral(FAULTLINE_WORKER_EXE));
        sh.setProcessEnvironment(env);
        sh.start("sh", {bundle + "/reproducer/reproduce.sh"});
        QVERIFY(sh.waitForFinished(300000));
        const QByteArray out = sh.readAllStandardOutput();
        QVERIFY2(sh.exitCode() == 0, out.constData());
        QVERIFY2(out.contains("reproduced: " + m_target.toUtf8() + " fails again"), out.constData());
        QVERIFY(!out.contains("NOT reproduced"));
        auto v = runFaultline({"verify", bundle + ".tar"});
        QVERIFY2(v.exitCode == 0, v.out.constData());
        // Without --min-reproducer the reproducer holds the incident's ops, as before.
        const QString plain = path("case-plain");
        r = runFaultline({"evidence", "--out", plain, "--campaign", m_campaign});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(readFile(plain + "/reproducer/trace.h5") != readFile(m_min));
        QVERIFY(QJsonDocument::fromJson(readFile(plain + "/case.json"))
                    .object()
                    .value("reproducer")
                    .toObject()
                    .value("shrunk_from")
                    .isNull());
    }

    void refusals()
    {
        // A one-op trace of an op the suspect did not fail.
        const QString other = path("other-op.h5");
        {
            auto w = faultline::TraceWriter::create(other.toStdString());
            QVERIFY(w);
            const float x[4] = {1, 2, 3, 4};
            QVERIFY(w->addTensor("x", {faultline::DType::Float32, {2, 2}, x}));
            faultline::TraceOp op;
            op.index = 9999;
            op.op = "silu";
            op.inputs = {"x"};
            QVERIFY(w->addOp(op));
            QVERIFY(w->close());
        }
        struct Case {
            QStringList args;
            QByteArray phrase;
        };
        const Case cases[] = {
            {{"--campaign", m_campaign, "--min-reproducer", other}, "did not fail"},
            {{"--campaign", m_campaign, "--min-reproducer", m_trace}, "a minimal reproducer"},
            {{"--campaign", m_campaign, "--min-reproducer", path("missing.h5")}, "missing.h5"},
            {{"--min-reproducer", m_min}, "needs --campaign"},
        };
        int n = 0;
        for (const Case& c : cases) {
            const QString out = path("refused-" + QString::number(n++));
            auto r = runFaultline(QStringList{"evidence", "--out", out} + c.args);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(c.phrase), r.err.constData());
            QVERIFY(!QFile::exists(out) && !QFile::exists(out + ".tar"));
        }
    }
};

QTEST_GUILESS_MAIN(TestCliEvidenceShrunk)
#include "test_cli_evidence_shrunk.moc"
