// `faultline health` through the real executable: exit 0 when nothing is found, 1 when a GPU needs
// attention or an Xid was logged, 2 on bad input (the message naming the file and line); the JSON
// document's fields; the text summary. Hostile inputs (issue #28): forged Xid lines, unreadable Xid
// lines, escape sequences, FIFOs, and the memory a big log takes.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "support/TestSupport.h"

using faultline::test::runProcess;
using faultline::test::sourcePath;

namespace {

QString fixture(const QString& name)
{
    return sourcePath(QStringLiteral("tests/fixtures/health/") + name);
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes), qint64(bytes.size()));
}

// The first byte a terminal would act on (C0 but '\n', DEL, UTF-8 C1), or -1.
qsizetype firstControl(const QByteArray& s)
{
    for (qsizetype i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if ((c < 0x20 && c != '\n') || c == 0x7f) return i;
        if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
            static_cast<unsigned char>(s[i + 1]) <= 0x9f)
            return i;
    }
    return -1;
}

struct Measured {
    int exitCode = -1;
    long peakRssKiB = 0;
    bool timedOut = false;
};

// Runs `faultline args...` with its output thrown away and returns its own peak RSS (wait4), so
// the memory of one run is measured, not the largest of this process's children.
Measured runMeasured(const QStringList& args, int timeoutMs)
{
    Measured m;
    std::vector<std::string> storage{FAULTLINE_EXE};
    for (const QString& a : args) storage.push_back(a.toStdString());
    std::vector<char*> argv;
    for (std::string& a : storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return m;
    QElapsedTimer timer;
    timer.start();
    int status = 0;
    struct rusage usage {};
    for (;;) {
        const pid_t done = wait4(pid, &status, WNOHANG, &usage);
        if (done == pid) break;
        if (timer.elapsed() > timeoutMs) {
            m.timedOut = true;
            ::kill(pid, SIGKILL);
            wait4(pid, &status, 0, &usage);
            break;
        }
        QThread::msleep(20);
    }
    m.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    m.peakRssKiB = usage.ru_maxrss;
    return m;
}

// A kernel log of about `bytes` of Xid lines (several GPUs and codes, distinct stamps).
void writeXidLog(const QString& path, qint64 bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    static const int codes[] = {13, 31, 43, 48, 63, 74, 79, 92, 94, 119};
    char line[256];
    qint64 written = 0;
    for (int i = 0; written < bytes; ++i) {
        const int n =
            std::snprintf(line, sizeof line,
                          "[%7d.%06d] NVRM: Xid (PCI:0000:%02x:00): %d, pid=%d, name=python3, event %d of a "
                          "noisy GPU\n",
                          i / 1000, i % 1000 * 1000, 0x10 + i % 8, codes[i % 10], 1000 + i % 50, i);
        QCOMPARE(f.write(line, n), qint64(n));
        written += n;
    }
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
        QTest::newRow("malformed journal") << QStringList{"--logs", fixture("malformed-journal.json")} << 2
                                           << "malformed-journal.json:2: not a journal entry";
        QTest::newRow("malformed XML")
            << QStringList{"--nvidia-smi", fixture("malformed.xml")} << 2 << "malformed.xml:7: malformed XML";
        QTest::newRow("truncated gzip") << QStringList{"--logs", fixture("truncated.log.gz")} << 2
                                        << "truncated.log.gz: truncated gzip data";
        QTest::newRow("no inputs") << QStringList{} << 2 << "nothing to read";
        QTest::newRow("missing file")
            << QStringList{"--logs", "/nonexistent/dmesg.log"} << 2 << "/nonexistent/dmesg.log: no such file";
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

    void onlyTheKernelsXidLinesAreEvents()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath("syslog");
        // The first line is what `logger "NVRM: Xid (...)"` writes; the second is the kernel's.
        writeFile(
            log,
            "Dec  1 10:00:00 node7 alice: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off "
            "the "
            "bus.\n"
            "Dec  1 10:00:01 node7 kernel: NVRM: Xid (PCI:0000:3c:00): 79, pid=1, name=x, GPU has fallen off "
            "the bus.\n");
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), {"health", "--logs", log, "--json"});
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        const QJsonArray gpus = o.value("gpus").toArray();
        QCOMPARE(gpus.size(), 1);
        QCOMPARE(gpus[0].toObject().value("bus_id").toString(), QString("0000:3c:00.0"));
        QCOMPARE(gpus[0].toObject().value("recommendation").toString(), QString("drain"));
        QStringList warnings;
        for (const QJsonValue& w : o.value("warnings").toArray()) warnings << w.toString();
        QVERIFY2(warnings.contains(
                     log + ": 1 line(s) not from the kernel mention \"NVRM: Xid\": ignored (first at " + log +
                     ":1)"),
                 qPrintable(warnings.join("\n")));
    }

    void unreadableXidLinesAreWarnings_data()
    {
        QTest::addColumn<QByteArray>("bad");
        QTest::addColumn<QString>("warning");
        QTest::newRow("cut short at the end of the log")
            << QByteArray("[    9.000000] NVRM: Xid (PCI:0000:3b:00")
            << ":2: malformed Xid line (no \"(PCI:...)\" field)";
        QTest::newRow("7-digit Xid") << QByteArray("[    9.000000] NVRM: Xid (PCI:0000:3b:00): 1234567, x\n")
                                     << ":2: malformed Xid line (Xid number out of range (7 digits))";
        QTest::newRow("negative Xid") << QByteArray("[    9.000000] NVRM: Xid (PCI:0000:3b:00): -5, x\n")
                                      << ":2: malformed Xid line (negative Xid number)";
        QTest::newRow("quoted without the PCI field")
            << QByteArray("[    9.000000] NVRM: Xid (see the logs\n")
            << ":2: malformed Xid line (no \"(PCI:...)\" field)";
    }
    void unreadableXidLinesAreWarnings()
    {
        QFETCH(QByteArray, bad);
        QFETCH(QString, warning);
        QTemporaryDir dir;
        const QString log = dir.filePath("dmesg.log");
        writeFile(log, "[    1.000000] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=x, DBE\n" + bad);
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), {"health", "--logs", log});
        QCOMPARE(r.exitCode, 1);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains("GPU 0000:3b:00.0"), qPrintable(out));
        QVERIFY2(out.contains("warning: " + log + warning), qPrintable(out));
    }

    void escapeSequencesNeverReachTheTerminal()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath("dmesg.log");
        writeFile(log,
                  "[    1.000000] NVRM: GPU at PCI:0000:3b:00: GPU-\x1b[8m\n"
                  "[    1.000001] NVRM: GPU Board Serial Number: \x1b]0;owned\x07\n"
                  "[    2.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=\x1b[2J, fallen \xc2\x9b"
                  "31m off\n"
                  "[    3.000000] NVRM: Xid (PCI:0000:3b:00): 99999999, \x1b[2J\n");
        const QString xml = dir.filePath("smi.xml");
        writeFile(xml,
                  "<nvidia_smi_log><gpu id=\"00000000:3B:00.0\"><product_name>\x1b[31mH100</product_name>"
                  "<serial>\x1b[1m1</serial></gpu></nvidia_smi_log>");
        for (const QStringList& extra : {QStringList{}, QStringList{"--json"}}) {
            auto r = runProcess(QStringLiteral(FAULTLINE_EXE),
                                QStringList{"health", "--logs", log, "--nvidia-smi", xml} + extra);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(firstControl(r.out) < 0, r.out.constData());
        }
        // Error messages too (the file name is the user's, the excerpt the log's).
        auto missing =
            runProcess(QStringLiteral(FAULTLINE_EXE), {"health", "--logs", dir.filePath("\x1b[2J.log")});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(firstControl(missing.err) < 0, missing.err.constData());
        QVERIFY2(missing.err.contains("\\x1b[2J.log: no such file"), missing.err.constData());
    }

    void fifoInputsAreRefusedWithoutBlocking_data()
    {
        QTest::addColumn<QString>("option");
        QTest::newRow("--logs") << "--logs";
        QTest::newRow("--nvidia-smi") << "--nvidia-smi";
    }
    void fifoInputsAreRefusedWithoutBlocking()
    {
        QFETCH(QString, option);
        QTemporaryDir dir;
        const QString fifo = dir.filePath("input.fifo");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), {"health", option, fifo}, 20000);
        QVERIFY2(!r.timedOut, "faultline health blocked on a FIFO");
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(fifo.toUtf8() + ": not a regular file (a FIFO)"), r.err.constData());
    }

    void peakMemoryStaysBoundedOnBigLogs()
    {
        // bench/health: 1 GB of Xid lines stays under 1 GiB. Here: 25 MB and 50 MB (about 250,000
        // and 500,000 Xids, beyond kMaxKeptEvents) take the same memory, well under 1 GiB.
        QTemporaryDir dir;
        const QString small = dir.filePath("small.log"), big = dir.filePath("big.log");
        writeXidLog(small, 25'000'000);
        writeXidLog(big, 50'000'000);
        const Measured s = runMeasured({"health", "--logs", small, "--json"}, 120000);
        const Measured b = runMeasured({"health", "--logs", big, "--json"}, 120000);
        qInfo() << "peak RSS: 25 MB log" << s.peakRssKiB / 1024 << "MiB, 50 MB log" << b.peakRssKiB / 1024
                << "MiB";
        QVERIFY(!s.timedOut && !b.timedOut);
        QCOMPARE(s.exitCode, 1);
        QCOMPARE(b.exitCode, 1);
        QVERIFY2(b.peakRssKiB < 512 * 1024, qPrintable(QString("%1 KiB").arg(b.peakRssKiB)));
        QVERIFY2(b.peakRssKiB < s.peakRssKiB + 48 * 1024,
                 qPrintable(QString("%1 KiB vs %2 KiB").arg(b.peakRssKiB).arg(s.peakRssKiB)));
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
