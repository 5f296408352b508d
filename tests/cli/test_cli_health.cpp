// `faultline health` through the real executable: exit 0 when nothing is found, 1 when a GPU needs
// attention or an Xid was logged, 2 on bad input (the message naming the file and line); the JSON
// document's fields; the text summary.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "support/TestSupport.h"

using faultline::test::runProcess;
using faultline::test::sourcePath;

namespace {

QString fixture(const QString& name)
{
    return sourcePath(QStringLiteral("tests/fixtures/health/") + name);
}

}  // namespace

class TestCliHealth : public QObject {
    Q_OBJECT

private slots:
    void exitCodes_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stderrContains");
        QTest::newRow("Xids found") << QStringList{"--logs", fixture("dmesg-stamps.log")} << 1 << "";
        QTest::newRow("remap failure in XML")
            << QStringList{"--nvidia-smi", fixture("nvidia-smi-v13.xml")} << 1 << "";
        QTest::newRow("logs and XML")
            << QStringList{"--logs", fixture("nvidia-bug-report.log.gz"), fixture("journal-k.json"),
                           "--nvidia-smi", fixture("nvidia-smi-v12.xml")}
            << 1 << "";
        QTest::newRow("malformed log") << QStringList{"--logs", fixture("malformed-xid.log")} << 2
                                       << "malformed-xid.log:3: malformed Xid line";
        QTest::newRow("malformed XML")
            << QStringList{"--nvidia-smi", fixture("malformed.xml")} << 2 << "malformed.xml:7: malformed XML";
        QTest::newRow("truncated gzip") << QStringList{"--logs", fixture("truncated.log.gz")} << 2
                                        << "truncated.log.gz: truncated gzip data";
        QTest::newRow("no inputs") << QStringList{} << 2 << "nothing to read";
        QTest::newRow("missing file")
            << QStringList{"--logs", "/nonexistent/dmesg.log"} << 2 << "/nonexistent/dmesg.log: cannot open";
    }
    void exitCodes()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, stderrContains);
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), QStringList{"health"} + args);
        QVERIFY2(!r.crashed, r.err.constData());
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(QString::fromUtf8(r.err).contains(stderrContains), r.err.constData());
    }

    void nothingFoundExitsZero()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath("clean.log");
        QFile f(log);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "[    5.000000] nvidia: module loaded\n[    6.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel "
            "Module\n");
        f.close();
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), {"health", "--logs", log, "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QVERIFY(o.value("gpus").toArray().isEmpty());
        QCOMPARE(o.value("something_found").toBool(true), false);
        auto text = runProcess(QStringLiteral(FAULTLINE_EXE), {"health", "--logs", log});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("No GPU, Xid or SXid found"), text.out.constData());
    }

    void liveInventory()
    {
        // Without a GPU the worker lists none: nothing found. With GPUs, each is a GPU of the report.
        auto devices = runProcess(QStringLiteral(FAULTLINE_EXE), {"devices", "--json"});
        QCOMPARE(devices.exitCode, 0);
        const QJsonArray local = QJsonDocument::fromJson(devices.out).object().value("gpus").toArray();
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), {"health", "--devices", "--json"});
        QVERIFY2(r.exitCode == 0 || r.exitCode == 1, r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        int withNvml = 0;
        for (const QJsonValue& g : local) withNvml += g.toObject().contains("nvml") ? 1 : 0;
        QCOMPARE(o.value("gpus").toArray().size(), withNvml);
        if (withNvml == 0) QCOMPARE(r.exitCode, 0);
    }

    void json()
    {
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE),
                            {"health", "--json", "--logs", fixture("dmesg-stamps.log"),
                             fixture("journal-k.json"), "--nvidia-smi", fixture("nvidia-smi-v13.xml")});
        QCOMPARE(r.exitCode, 1);
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(r.out, &err);
        QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(err.errorString()));
        const QJsonObject o = doc.object();
        QCOMPARE(o.value("format").toString(), QString("faultline-health"));
        QVERIFY(o.value("unattributed_events").isArray());
        QJsonObject h100;
        for (const QJsonValue& g : o.value("gpus").toArray())
            if (g.toObject().value("bus_id").toString() == "0000:86:00.0") h100 = g.toObject();
        QVERIFY(!h100.isEmpty());
        QCOMPARE(h100.value("recommendation").toString(), QString("rma_candidate"));
        QCOMPARE(h100.value("serial").toString(), QString("1650122009999"));
        QCOMPARE(h100.value("uuid").toString(), QString("GPU-86aa0001-2222-3333-4444-555566667777"));
        QCOMPARE(h100.value("product").toString(), QString("NVIDIA H100 80GB HBM3"));
        const QJsonObject flags = h100.value("flags").toObject();
        QCOMPARE(flags.value("row_remap_failure").toBool(), true);
        QCOMPARE(flags.value("sram_threshold_exceeded").toBool(), true);
        QCOMPARE(flags.value("row_remap_pending").toBool(), false);
        const QJsonArray events = h100.value("events").toArray();
        QCOMPARE(events.size(), 5);  // 94, 94, 95, 74, 64
        const QJsonObject first = events[0].toObject();
        QCOMPARE(first.value("xid").toInt(), 94);
        QCOMPARE(first.value("pid").toInt(), 7194);
        QCOMPARE(first.value("process").toString(), QString("python3"));
        QCOMPARE(first.value("immediate_action").toString(), QString("RESTART_APP"));
        QVERIFY(!first.value("meaning").toString().isEmpty());
        QVERIFY(!first.value("investigatory_action").toString().isEmpty());
        QVERIFY(first.value("time").isNull());
        QCOMPARE(first.value("uptime_s").toDouble(), 3300.500002);
        QCOMPARE(h100.value("counters").toObject().value("ecc_uncorrected_aggregate").toInt(), 20);
        QJsonObject journalGpu;
        for (const QJsonValue& g : o.value("gpus").toArray())
            if (g.toObject().value("bus_id").toString() == "0000:41:00.0") journalGpu = g.toObject();
        QCOMPARE(journalGpu.value("events").toArray()[0].toObject().value("time").toString(),
                 QString("2026-11-30T10:00:02.123456Z"));
    }

    void text()
    {
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE),
                            {"health", "--nvidia-smi", fixture("nvidia-smi-v12.xml")});
        QCOMPARE(r.exitCode, 1);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains("GPU 0000:18:00.0  NVIDIA A100-SXM4-80GB"), qPrintable(out));
        QVERIFY2(out.contains("recommendation: reset the GPU"), qPrintable(out));
        QVERIFY2(out.contains("GPU 0000:19:00.0"), qPrintable(out));
        QVERIFY2(out.contains("recommendation: nothing to do"), qPrintable(out));
    }
};

QTEST_GUILESS_MAIN(TestCliHealth)
#include "test_cli_health.moc"
