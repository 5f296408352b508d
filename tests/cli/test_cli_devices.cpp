// `faultline devices` through the real executables: exit 0 with or without a GPU, a plain
// statement when there is none, and a JSON document with the inventory fields.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "support/TestSupport.h"

using faultline::test::runProcess;

class TestCliDevices : public QObject {
    Q_OBJECT

private slots:
    void json()
    {
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), {"devices", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(r.out, &err);
        QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(err.errorString() + ": " + r.out));
        const QJsonObject o = doc.object();
        QVERIFY(o.contains("cuda_built"));
        QVERIFY(o.value("gpus").isArray());
        const QJsonArray gpus = o.value("gpus").toArray();
        if (!o.value("cuda_available").toBool()) {
            QVERIFY(gpus.isEmpty());
            QVERIFY2(!o.value("cuda_error").toString().isEmpty(), r.out.constData());
        }
        for (const QJsonValue& g : gpus) {
            QVERIFY(g.toObject().value("sm_count").toInt() > 0);
            QVERIFY(g.toObject().value("uuid").toString().startsWith("GPU-"));
        }
    }

    void text()
    {
        auto json = runProcess(QStringLiteral(FAULTLINE_EXE), {"devices", "--json"});
        const QJsonObject o = QJsonDocument::fromJson(json.out).object();
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), {"devices"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString out = QString::fromUtf8(r.out);
        const QJsonArray gpus = o.value("gpus").toArray();
        if (gpus.isEmpty()) {
            QVERIFY2(out.startsWith("No CUDA devices: "), qPrintable(out));
            QVERIFY2(out.contains(o.value("cuda_error").toString()), qPrintable(out));
        } else {
            QVERIFY2(out.contains("cuda:0  " + gpus[0].toObject().value("name").toString()), qPrintable(out));
        }
    }
};

QTEST_GUILESS_MAIN(TestCliDevices)
#include "test_cli_devices.moc"
