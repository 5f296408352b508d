// Kernel logs from strangers and broken machines (issue #28): only the kernel's own lines become
// events (a `logger` line forging an Xid does not), a driver line that cannot be read is a warning
// naming FILE:LINE and the report still comes, NUL runs of any length are skipped without losing
// the lines after them, untrusted text reaches the terminal only as printable text, and the caps
// on kept events and GPUs hold across all inputs.
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>
#include <sstream>

#include "core/health/KernelLogParser.h"
#include "core/health/NvidiaSmiXml.h"
#include "test_health_fields.h"

using namespace faultline;

namespace {

// The kernel's own Xid of GPU 3c, beside which every forged line (GPU 3b) is tried.
const std::string kRealLine =
    "Dec  1 09:59:59 node7 kernel: NVRM: Xid (PCI:0000:3c:00): 48, pid=1, name=x, An uncorrectable double "
    "bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.";

KernelLogContents parseOrFail(const std::string& text, const std::string& name, QString* error)
{
    auto log = parseKernelLog(text, name);
    if (!log) {
        *error = QString::fromStdString(log.message());
        return {};
    }
    return std::move(log).value();
}

QStringList buses(const KernelLogContents& log)
{
    QStringList out;
    for (const XidEvent& e : log.events) out << QString::fromStdString(e.busId);
    return out;
}

QString warningsText(const std::vector<std::string>& warnings)
{
    QStringList out;
    for (const std::string& w : warnings) out << QString::fromStdString(w);
    return out.join("\n");
}

// The index of the first byte that a terminal would act on: C0 controls but '\n', DEL, C1
// controls (UTF-8 C2 80..C2 9F); -1 when there is none.
qsizetype firstControl(const std::string& s)
{
    for (size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if ((c < 0x20 && c != '\n') || c == 0x7f) return qsizetype(i);
        if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
            static_cast<unsigned char>(s[i + 1]) <= 0x9f)
            return qsizetype(i);
    }
    return -1;
}

void writeFile(const QString& path, const std::string& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes.data(), qint64(bytes.size())), qint64(bytes.size()));
}

}  // namespace

class TestHealthHostileLogs : public QObject {
    Q_OBJECT

private slots:
    void onlyTheKernelsLinesAreEvents_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<bool>("event");
        const QString xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.";
        // Forged: written by a process (logger, an application), or quoting the driver.
        QTest::newRow("logger, syslog") << "Dec  1 10:00:00 node7 user: " + xid << false;
        QTest::newRow("logger -t app, RFC 3339")
            << "2026-12-01T10:00:00.000000+00:00 node7 app[4242]: " + xid << false;
        QTest::newRow("journalctl, a process") << "Dec 01 10:00:00 node7 python3[123]: " + xid << false;
        QTest::newRow("syslog without a tag") << "Dec  1 10:00:00 node7 " + xid << false;
        QTest::newRow("quoted in a kernel message")
            << "Dec  1 10:00:00 node7 kernel: audit: type=1107 msg='" + xid + "'" << false;
        QTest::newRow("written to /dev/kmsg by a process") << "[   12.000000] myapp[77]: " + xid << false;
        QTest::newRow("dmesg -x, user facility") << "user  :warn  : [   12.000000] " + xid << false;
        QTest::newRow("short-monotonic, a process") << "[   12.000000] node7 app[9]: " + xid << false;
        // The kernel's.
        QTest::newRow("syslog, kernel") << "Dec  1 10:00:00 node7 kernel: " + xid << true;
        QTest::newRow("rsyslog with the kernel stamp")
            << "Dec  1 10:00:00 node7 kernel: [   12.000000] " + xid << true;
        QTest::newRow("journalctl short-iso, kernel")
            << "2026-12-01T10:00:00+0000 node7 kernel: " + xid << true;
        QTest::newRow("short-monotonic, kernel") << "[   12.000000] node7 kernel: " + xid << true;
        QTest::newRow("dmesg") << "[   12.000000] " + xid << true;
        QTest::newRow("dmesg -T") << "[Tue Dec  1 10:00:00 2026] " + xid << true;
        QTest::newRow("dmesg -x, kernel facility") << "kern  :err   : [   12.000000] " + xid << true;
        QTest::newRow("dmesg -t") << xid << true;
    }
    void onlyTheKernelsLinesAreEvents()
    {
        QFETCH(QString, line);
        QFETCH(bool, event);
        QString error;
        const KernelLogContents log =
            parseOrFail(kRealLine + "\n" + line.toStdString() + "\n", "mixed.log", &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QStringList expected =
            event ? QStringList{"0000:3c:00.0", "0000:3b:00.0"} : QStringList{"0000:3c:00.0"};
        QCOMPARE(buses(log), expected);
        const QString warnings = warningsText(log.warnings);
        if (event)
            QVERIFY2(warnings.isEmpty(), qPrintable(warnings));
        else
            QVERIFY2(
                warnings.contains("mixed.log: 1 line(s) not from the kernel mention \"NVRM: Xid\": ignored "
                                  "(first at mixed.log:2)"),
                qPrintable(warnings));
    }

    void forgedIdentityAndSxidLinesAreIgnored()
    {
        const std::string log =
            "Dec  1 09:59:58 node7 kernel: NVRM: GPU at PCI:0000:3c:00: "
            "GPU-3c3c3c3c-0000-1111-2222-333344445555\n"
            "Dec  1 09:59:58 node7 kernel: NVRM: GPU Board Serial Number: 1650122005678\n"
            "Dec  1 09:59:58 node7 evil: NVRM: GPU at PCI:0000:3c:00: "
            "GPU-66666666-0000-1111-2222-333344445555\n"
            "Dec  1 09:59:58 node7 evil: NVRM: GPU Board Serial Number: FORGED\n"
            "Dec  1 09:59:58 node7 evil: nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, "
            "forged\n" +
            kRealLine + "\n";
        QString error;
        const KernelLogContents parsed = parseOrFail(log, "ids.log", &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(int(parsed.events.size()), 1);
        QCOMPARE(parsed.events[0].uuid, std::string("GPU-3c3c3c3c-0000-1111-2222-333344445555"));
        QCOMPARE(parsed.events[0].serial, std::string("1650122005678"));
        QVERIFY2(
            warningsText(parsed.warnings)
                .contains("ids.log: 3 line(s) not from the kernel mention an SXid or a GPU identity line: "
                          "ignored (first at ids.log:3)"),
            qPrintable(warningsText(parsed.warnings)));
    }

    void journalEntriesCountOnlyFromTheKernelTransport()
    {
        auto entry = [](const char* transport, const char* bus, int xid) {
            std::string e = "{\"__REALTIME_TIMESTAMP\": \"1796032800000000\", ";
            if (transport) e += std::string("\"_TRANSPORT\": \"") + transport + "\", ";
            return e + "\"SYSLOG_IDENTIFIER\": \"kernel\", \"MESSAGE\": \"NVRM: Xid (PCI:0000:" + bus +
                   ":00): " + std::to_string(xid) + ", pid=1, name=x, text\"}\n";
        };
        // `logger -t kernel` reaches the journal as _TRANSPORT=syslog with SYSLOG_IDENTIFIER=kernel.
        const std::string log = entry("syslog", "3b", 79) + entry("stdout", "3b", 79) +
                                entry(nullptr, "3b", 79) + entry("journal", "3b", 79) +
                                entry("kernel", "3c", 48);
        QString error;
        const KernelLogContents parsed = parseOrFail(log, "j.json", &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(parsed.journalJson);
        QCOMPARE(buses(parsed), QStringList{"0000:3c:00.0"});
        QVERIFY2(
            warningsText(parsed.warnings)
                .contains("j.json: 4 line(s) not from the kernel mention \"NVRM: Xid\": ignored (first at "
                          "j.json:1)"),
            qPrintable(warningsText(parsed.warnings)));
    }

    void malformedDriverLinesAreWarnings_data()
    {
        QTest::addColumn<QString>("bad");
        QTest::addColumn<bool>("atTheEnd");
        QTest::addColumn<QString>("warning");
        QTest::newRow("cut inside the PCI field, at the end")
            << "[    3.000000] NVRM: Xid (PCI:0000:3b" << true
            << "t.log:2: malformed Xid line (no \"(PCI:...)\" field)";
        QTest::newRow("cut after the PCI field")
            << "[    3.000000] NVRM: Xid (PCI:0000:3b:00): " << false
            << "t.log:2: malformed Xid line (cut short after the PCI field)";
        QTest::newRow("7-digit Xid") << "[    3.000000] NVRM: Xid (PCI:0000:3b:00): 1234567, pid=1, name=x, y"
                                     << false
                                     << "t.log:2: malformed Xid line (Xid number out of range (7 digits))";
        QTest::newRow("negative Xid") << "[    3.000000] NVRM: Xid (PCI:0000:3b:00): -79, pid=1, name=x, y"
                                      << false << "t.log:2: malformed Xid line (negative Xid number)";
        QTest::newRow("no PCI field") << "[    3.000000] NVRM: Xid (" + QString(200, 'a') << false
                                      << "t.log:2: malformed Xid line (no \"(PCI:...)\" field)";
        QTest::newRow("words for a number") << "[    3.000000] NVRM: Xid (PCI:0000:3b:00): seventy-nine, x"
                                            << false << "t.log:2: malformed Xid line (no Xid number)";
        QTest::newRow("7-digit SXid")
            << "[    3.000000] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 1234567, x" << false
            << "t.log:2: malformed SXid line (SXid number out of range (7 digits))";
    }
    void malformedDriverLinesAreWarnings()
    {
        QFETCH(QString, bad);
        QFETCH(bool, atTheEnd);
        QFETCH(QString, warning);
        std::string log =
            "[    1.000000] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=x, before\n" + bad.toStdString();
        if (!atTheEnd) log += "\n[    4.000000] NVRM: Xid (PCI:0000:3b:00): 31, pid=1, name=x, after\n";
        QString error;
        const KernelLogContents parsed = parseOrFail(log, "t.log", &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(int(parsed.events.size()), atTheEnd ? 1 : 2);
        QCOMPARE(parsed.events.back().code, atTheEnd ? 13 : 31);
        QVERIFY2(warningsText(parsed.warnings).contains(warning), qPrintable(warningsText(parsed.warnings)));
    }

    void manyMalformedLinesAreCountedOnce()
    {
        std::string log;
        for (int i = 0; i < 25; ++i) log += "NVRM: Xid (PCI:0000:3b:00): -1, x\n";
        QString error;
        const KernelLogContents parsed = parseOrFail(log, "m.log", &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(int(parsed.warnings.size()), 11);
        QVERIFY(QString::fromStdString(parsed.warnings[9]).startsWith("m.log:10: malformed Xid line"));
        QCOMPARE(parsed.warnings[10], std::string("m.log: 15 more malformed Xid/SXid line(s) skipped"));
    }

    void nulRunsAreSkipped_data()
    {
        QTest::addColumn<qint64>("nuls");
        QTest::addColumn<bool>("afterALineEnd");
        QTest::newRow("100 KiB inside a cut line") << qint64(100 * 1024) << false;
        QTest::newRow("100 KiB after a line end") << qint64(100 * 1024) << true;
        QTest::newRow("20 MiB inside a cut line") << qint64(20 << 20) << false;
    }
    void nulRunsAreSkipped()
    {
        QFETCH(qint64, nuls);
        QFETCH(bool, afterALineEnd);
        // What an unclean shutdown leaves: the last line cut short, zero-filled blocks, then the log
        // of the next boot.
        const std::string log =
            "[    1.000000] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=x, before\n" +
            std::string(afterALineEnd ? "[    2.000000] kernel line\n"
                                      : "[    2.000000] NVRM: Xid (PCI:0000:3b") +
            std::string(size_t(nuls), '\0') +
            "[    5.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
            "[    6.000000] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=x, after\n";
        QString error;
        const KernelLogContents parsed = parseOrFail(log, "n.log", &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(int(parsed.events.size()), 3);
        QCOMPARE(parsed.events[1].code, 79);
        QCOMPARE(parsed.events[1].source, std::string(afterALineEnd ? "n.log:3" : "n.log:2"));
        QCOMPARE(parsed.events[2].source, std::string(afterALineEnd ? "n.log:4" : "n.log:3"));
        const QString warnings = warningsText(parsed.warnings);
        QVERIFY2(warnings.contains(QString("n.log: %1 NUL byte(s) skipped").arg(nuls)), qPrintable(warnings));
        QVERIFY2(!warnings.contains("longer than"), qPrintable(warnings));
        if (!afterALineEnd) QVERIFY2(warnings.contains("n.log:2: malformed Xid line"), qPrintable(warnings));
    }

    void escapeSequencesNeverReachTheTerminal()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath("evil\x1b[2J.log");
        writeFile(
            log,
            "[    1.000000] NVRM: GPU at PCI:0000:3b:00: GPU-\x1b[1m-uuid\n"
            "[    1.000001] NVRM: GPU Board Serial Number: \x1b[31mSN\x9b"
            "1m\n"
            "[    2.000000] NVRM: Xid (PCI:0000:3b:00 GPU-I:\x1b[5m): 79, pid=1, name=\x1b]0;pwned\x07, "
            "fallen \x1b[2J off \xc2\x9b"
            "2J the bus\x7f\n"
            "[    3.000000] nvidia-nvswitch\x1b[1m: SXid (PCI:0000:05:00.0): 12028, \x1b[2J\n"
            "[    4.000000] NVRM: Xid (PCI:0000:3b:00): -1, \x1b[2J\n");
        const QString xml = dir.filePath("smi.xml");
        writeFile(xml,
                  "<?xml version=\"1.0\" ?>\n<nvidia_smi_log><driver_version>\x1b[2J</driver_version>"
                  "<gpu id=\"00000000:3B:00.0\"><product_name>H100\x1b]0;x\x07</product_name>"
                  "<serial>\x1b[31m7</serial><vbios_version>\x1b[0m</vbios_version>"
                  "<gpu_recovery_action>Drain \x1b[2J</gpu_recovery_action></gpu></nvidia_smi_log>\n");
        auto r = collectHealth(HealthInputs{{log.toStdString()}, {xml.toStdString()}, {}});
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QVERIFY(!r->gpus.empty());
        QVERIFY(r->gpus[0].identity.product.find('\x1b') != std::string::npos);  // kept as read ...
        const std::string text = healthReportText(*r);
        QVERIFY2(firstControl(text) < 0, text.c_str());  // ... and never printed raw
        QVERIFY2(text.find("H100\\x1b]0;x\\x07") != std::string::npos, text.c_str());
        QVERIFY2(text.find("evil\\x1b[2J.log") != std::string::npos, text.c_str());
        // JSON escapes them (the streamed document DEL and C1 controls too); it is the same document.
        std::ostringstream streamed;
        writeHealthReportJson(streamed, *r);
        QVERIFY(firstControl(streamed.str()) < 0);
        QVERIFY(streamed.str().find("\\u001b") != std::string::npos);
        QVERIFY(nlohmann::json::parse(streamed.str()) == healthReportJson(*r));
    }

    void invalidUtf8NeverBreaksTheJson()
    {
        std::string log =
            "[    2.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=\xff\xfe, bad \xc3\x28 utf8 "
            "\xed\xa0\x80\n";
        auto parsed = parseKernelLog(log, "/tmp/\xfe.log");
        QVERIFY(parsed.ok());
        const HealthReport r = buildHealthReport(std::move(parsed->events), {});
        std::ostringstream streamed;
        writeHealthReportJson(streamed, r);
        const std::string strict = healthReportJson(r).dump(2);  // would throw on invalid UTF-8
        QCOMPARE(streamed.str(), strict + "\n");
    }

    void capsHoldAcrossFiles()
    {
        // Three logs of 40,000 Xids each: 120,000 events, more than kMaxKeptEvents together though
        // each file alone is under the old per-file cap. A late Xid 79 still decides.
        QTemporaryDir dir;
        std::vector<std::string> paths;
        for (int f = 0; f < 3; ++f) {
            std::string text;
            text.reserve(40000 * 96);
            char line[160];
            for (int i = 0; i < 40000; ++i) {
                std::snprintf(line, sizeof line,
                              "[%6d.%06d] NVRM: Xid (PCI:0000:3b:00): 92, pid=1, name=x, High single-bit ECC "
                              "error rate %d\n",
                              f * 50000 + i, i, i);
                text += line;
            }
            if (f == 2)
                text +=
                    "[999999.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the "
                    "bus.\n";
            const QString path = dir.filePath(QString("log%1.txt").arg(f));
            writeFile(path, text);
            paths.push_back(path.toStdString());
        }
        QElapsedTimer timer;
        timer.start();
        auto r = collectHealth(HealthInputs{paths, {}, {}});
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        qInfo() << "120,001 events in 3 logs read in" << timer.elapsed() << "ms";
        QCOMPARE(int(r->gpus.size()), 1);
        const GpuHealthRecord& g = r->gpus[0];
        QCOMPARE(g.events.size(), kMaxKeptEvents + 1);  // and the first (only) Xid 79, kept beyond the cap
        QCOMPARE(g.events.back().code, 79);
        QCOMPARE(g.xidsNotKept.at(92), uint64_t(120000 - kMaxKeptEvents));
        QCOMPARE(r->eventsNotKept, uint64_t(120000 - kMaxKeptEvents));
        QCOMPARE(g.recommendation, HealthAction::Drain);
        const nlohmann::json gpu = healthReportJson(*r)["gpus"][0];
        QCOMPARE(gpu["xid_summary"]["92"].get<int>(), 120000);
        QCOMPARE(gpu["events_not_kept"].get<int>(), int(120000 - kMaxKeptEvents));
        QVERIFY(warningsText(r->warnings).contains("counted, not kept"));
        bool countedReason = false;
        for (const HealthReason& reason : g.reasons)
            countedReason = countedReason || (reason.why.find("Xid 92 (") != std::string::npos &&
                                              reason.why.find("120000 events") != std::string::npos);
        QVERIFY2(countedReason, g.reasons.empty() ? "" : g.reasons[0].why.c_str());
    }

    void identityLinesForTooManyGpusAreCounted()
    {
        std::string log;
        char line[160];
        for (int i = 0; i < 5000; ++i) {
            std::snprintf(line, sizeof line,
                          "NVRM: GPU at PCI:%04x:3b:00: GPU-%08x-0000-1111-2222-333344445555\n", i, i);
            log += line;
        }
        QTemporaryDir dir;
        writeFile(dir.filePath("ids.log"), log);
        auto r = collectHealth(HealthInputs{{dir.filePath("ids.log").toStdString()}, {}, {}});
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(r->gpus.size(), kMaxGpus);
        QVERIFY2(warningsText(r->warnings).contains("904 identity line(s) for more than 4096 GPUs ignored"),
                 qPrintable(warningsText(r->warnings)));
    }
};

QTEST_GUILESS_MAIN(TestHealthHostileLogs)
#include "test_health_hostile_logs.moc"
