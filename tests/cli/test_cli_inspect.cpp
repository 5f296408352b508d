// `faultline inspect`: listing, JSON document shape, and bad input (exit code 2, message naming
// the file) through the real executable.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include "support/TestSupport.h"

using faultline::test::runProcess;
using faultline::test::sourcePath;

class TestCliInspect : public QObject {
    Q_OBJECT

private:
    static faultline::test::ProcessResult inspect(const QStringList& args)
    {
        return runProcess(QStringLiteral(FAULTLINE_EXE), QStringList{QStringLiteral("inspect")} + args);
    }
    static QJsonObject tensorByName(const QJsonArray& tensors, const QString& name)
    {
        for (const QJsonValue& v : tensors)
            if (v.toObject().value("name").toString() == name) return v.toObject();
        return {};
    }
    QTemporaryDir m_dir;

private slots:
    void snapshotJson()
    {
        const QString path = sourcePath("resources/samples/sample-snapshot.h5");
        auto r = inspect({path, "--json"});
        QCOMPARE(r.exitCode, 0);
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(r.out, &err);
        QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(err.errorString()));
        const QJsonObject o = doc.object();
        QCOMPARE(o.value("file").toString(), path);
        QCOMPARE(o.value("format").toString(), QString("snapshot"));
        QVERIFY(o.value("devices").isArray());
        QVERIFY(o.value("ops").isArray());
        const QJsonArray tensors = o.value("tensors").toArray();
        QCOMPARE(tensors.size(), 8);

        const QJsonObject fc2 = tensorByName(tensors, "model/layers.0/mlp/fc2/weight");
        QCOMPARE(fc2.value("dtype").toString(), QString("bfloat16"));
        QCOMPARE(fc2.value("shape").toArray(), QJsonArray({32, 64}));
        QCOMPARE(fc2.value("bytes").toInteger(), 32 * 64 * 2);
        QCOMPARE(fc2.value("kind").toString(), QString("weight"));

        const QJsonObject fp8 = tensorByName(tensors, "activations/layers.0/mlp/input_fp8");
        QCOMPARE(fp8.value("dtype").toString(), QString("float8_e4m3fn"));
        QCOMPARE(fp8.value("bytes").toInteger(), 256);
        const QJsonObject norm = tensorByName(tensors, "model/layers.0/norm/weight");
        QCOMPARE(norm.value("dtype").toString(), QString("bfloat16"));
        const QJsonObject step = tensorByName(tensors, "optimizer/step");
        QCOMPARE(step.value("dtype").toString(), QString("int64"));
        QCOMPARE(step.value("shape").toArray(), QJsonArray());
        QCOMPARE(tensorByName(tensors, "optimizer/found_inf").value("dtype").toString(), QString("bool"));
        QCOMPARE(o.value("attributes").toObject().value("role").toString(), QString("suspect"));
    }

    void safetensorsJson()
    {
        const QString path = sourcePath("resources/samples/sample.safetensors");
        auto r = inspect({path, "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value("format").toString(), QString("safetensors"));
        const QJsonArray tensors = o.value("tensors").toArray();
        QCOMPARE(tensors.size(), 3);
        QCOMPARE(tensors.at(1).toObject().value("name").toString(), QString("model.layers.0.mlp.fc2.weight"));
        QCOMPARE(tensors.at(1).toObject().value("dtype").toString(), QString("bfloat16"));
        QCOMPARE(tensors.at(0).toObject().value("bytes").toInteger(), 64 * 32 * 4);
    }

    void severalFilesGiveAnArray()
    {
        auto r = inspect({sourcePath("resources/samples/sample.safetensors"),
                          sourcePath("resources/samples/sample-snapshot.h5"), "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonArray a = QJsonDocument::fromJson(r.out).array();
        QCOMPARE(a.size(), 2);
        QCOMPARE(a.at(0).toObject().value("format").toString(), QString("safetensors"));
        QCOMPARE(a.at(1).toObject().value("format").toString(), QString("snapshot"));
    }

    void textListing()
    {
        auto r = inspect({sourcePath("resources/samples/sample-snapshot.h5")});
        QCOMPARE(r.exitCode, 0);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains("model/layers.0/mlp/fc2/weight"), qPrintable(out));
        QVERIFY(out.contains("bfloat16"));
        QVERIFY(out.contains("[32, 64]"));
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("content");
        QByteArray random(4096, '\0');
        QRandomGenerator rng(7);
        for (auto& c : random) c = char(rng.bounded(256));
        QFile sample(sourcePath("resources/samples/sample-snapshot.h5"));
        QVERIFY(sample.open(QIODevice::ReadOnly));
        const QByteArray h5 = sample.readAll();
        QFile st(sourcePath("resources/samples/sample.safetensors"));
        QVERIFY(st.open(QIODevice::ReadOnly));
        const QByteArray safetensors = st.readAll();
        QTest::newRow("random bytes") << "random.h5" << random;
        QTest::newRow("empty") << "empty.h5" << QByteArray();
        QTest::newRow("truncated hdf5") << "truncated.h5" << h5.left(h5.size() / 3);
        QTest::newRow("truncated safetensors")
            << "truncated.safetensors" << safetensors.left(safetensors.size() - 100);
        QByteArray huge = safetensors;
        const quint64 n = quint64(1) << 60;
        for (int i = 0; i < 8; ++i) huge[i] = char((n >> (8 * i)) & 0xff);
        QTest::newRow("safetensors header 2^60") << "huge.safetensors" << huge;
    }

    void badInput()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, content);
        const QString path = m_dir.filePath(name);
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
        f.close();
        for (const QStringList& extra : {QStringList{}, QStringList{"--json"}}) {
            auto r = inspect(QStringList{path} + extra);
            QVERIFY(!r.crashed && !r.timedOut);
            QCOMPARE(r.exitCode, 2);
            const QString err = QString::fromUtf8(r.err).trimmed();
            QVERIFY2(err.contains(path), qPrintable(err));
            QCOMPARE(err.count('\n'), 0);  // one line
        }
    }

    void missingFileAndDirectory()
    {
        for (const QString& path : {m_dir.filePath("nope.h5"), m_dir.path()}) {
            auto r = inspect({path});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(QString::fromUtf8(r.err).contains(path), r.err.constData());
        }
    }

    void goodFilesStillListedBesideABadOne()
    {
        const QString bad = m_dir.filePath("bad.safetensors");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not a tensor file at all");
        f.close();
        auto r = inspect({bad, sourcePath("resources/samples/sample.safetensors"), "--json"});
        QCOMPARE(r.exitCode, 2);
        const QJsonArray a = QJsonDocument::fromJson(r.out).array();
        QCOMPARE(a.size(), 2);
        QVERIFY(a.at(0).toObject().value("error").toString().contains(bad));
        QCOMPARE(a.at(1).toObject().value("tensors").toArray().size(), 3);
    }

    void usageErrorsExitTwo()
    {
        auto r = inspect({});
        QCOMPARE(r.exitCode, 2);
        r = runProcess(QStringLiteral(FAULTLINE_EXE), {"no-such-command"});
        QCOMPARE(r.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestCliInspect)
#include "test_cli_inspect.moc"
