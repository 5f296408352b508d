// Kernel logs read into Xid/SXid events (core/health/KernelLogParser): every line shape the
// driver writes, in dmesg (kernel stamps, -T, none), journalctl -k (text, -o json), and
// nvidia-bug-report logs plain and as several gzip members; each field checked against the
// hand-written fixtures in tests/fixtures/health. Unreadable files and journal lines are errors
// naming file and line; unreadable Xid lines are warnings naming them.
#include <QtTest>

#include "core/health/KernelLogParser.h"
#include "core/health/LogLineReader.h"
#include "core/health/XidCatalog.h"
#include "test_health_fields.h"

using namespace faultline;
using faultline::test::eventField;
using faultline::test::fixturePath;
namespace test = faultline::test;

namespace {

KernelLogContents readOrFail(const QString& name, QString* error)
{
    auto log = readKernelLog(fixturePath(name).toStdString());
    if (!log) {
        *error = QString::fromStdString(log.message());
        return {};
    }
    for (XidEvent& e : log->events) XidCatalog::builtIn().decorate(e);
    return std::move(log).value();
}

}  // namespace

class TestHealthLogs : public QObject {
    Q_OBJECT

private slots:
    void eventCounts_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("identities");
        QTest::newRow("dmesg with kernel stamps") << "dmesg-stamps.log" << 13 << 2;
        QTest::newRow("dmesg -T") << "dmesg-human.log" << 2 << 0;
        QTest::newRow("dmesg without stamps") << "dmesg-plain.log" << 3 << 0;
        QTest::newRow("journalctl -k") << "journal-k.txt" << 3 << 1;
        QTest::newRow("journalctl -k -o json") << "journal-k.json" << 3 << 1;
        QTest::newRow("bug report") << "nvidia-bug-report.log" << 6 << 2;
        QTest::newRow("bug report, gzip members") << "nvidia-bug-report.log.gz" << 6 << 2;
    }
    void eventCounts()
    {
        QFETCH(QString, file);
        QFETCH(int, events);
        QFETCH(int, identities);
        QString error;
        const KernelLogContents log = readOrFail(file, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(int(log.events.size()), events);
        QCOMPARE(int(log.identities.size()), identities);
    }

    void fields_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("expected");
        auto row = [](const char* file, int index, const char* field, const QString& expected) {
            QTest::addRow("%s #%d %s", file, index, field)
                << QString(file) << index << QString(field) << expected;
        };
        const char* d = "dmesg-stamps.log";
        row(d, 0, "code", "48");
        row(d, 0, "uptime", "3215.100003");
        row(d, 0, "boot", "0");
        row(d, 0, "bus", "0000:3b:00.0");
        row(d, 0, "uuid", "GPU-3b8e5a55-1f4c-2e9b-8a5e-0c7d1e2f3a4b");
        row(d, 0, "serial", "1650122005678");
        row(d, 0, "pid", "2137");
        row(d, 0, "process", "python3");
        row(d, 0, "known", "yes");
        row(d, 0, "immediate", "WORKFLOW_XID_48");
        row(d, 0, "decoded.memory", "DRAM (framebuffer)");
        row(d, 0, "decoded.partition", "6");
        row(d, 0, "decoded.subpartition", "0");
        row(d, 0, "source", fixturePath(d) + ":6");
        row(d, 1, "code", "63");
        row(d, 1, "pid", "none");
        row(d, 1, "process", "");
        row(d, 1, "message",
            "Row Remapper: New row (0x00000000abc12345) marked for remapping, reset gpu to activate.");
        row(d, 1, "decoded.mechanism", "row remapping");
        row(d, 1, "decoded.outcome", "pending");
        row(d, 1, "decoded.activation", "GPU reset");
        row(d, 1, "decoded.address", "0x00000000abc12345");
        row(d, 2, "decoded.gpc", "2");
        row(d, 2, "decoded.tpc", "1");
        row(d, 2, "decoded.sm", "0");
        row(d, 3, "decoded.address", "0x7f2a_4c000000");
        row(d, 3, "decoded.fault_type", "FAULT_PDE");
        row(d, 3, "decoded.engine", "GRAPHICS");
        row(d, 4, "bus", "0000:86:00.0");
        row(d, 4, "gpu_instance", "05");
        row(d, 4, "compute_instance", "");
        row(d, 4, "serial", "1650122009999");
        row(d, 4, "decoded.contained", "yes");
        row(d, 4, "decoded.unit", "CE User Channel");
        row(d, 4, "decoded.location", "0x9");
        row(d, 4, "decoded.reset_required", "no");
        row(d, 4, "decoded.drain_and_reset_recommended", "no");
        row(d, 5, "gpu_instance", "02");
        row(d, 5, "compute_instance", "01");
        row(d, 5, "process", "pt_main_thread");
        row(d, 6, "decoded.contained", "no");
        row(d, 6, "decoded.unit", "LTC TAG");
        row(d, 6, "decoded.location", "0x2,0x1");
        row(d, 6, "decoded.reset_required", "yes");
        row(d, 7, "code", "74");
        row(d, 7, "decoded.link", "14");
        row(d, 7, "decoded.severity", "fatal");
        row(d, 7, "decoded.registers", "0x10 0x0 0x10000 0x0 0x0 0x0 0x0");
        row(d, 7, "decoded.register0 bits 4",
            "ecc_parity: likely a hardware ECC/parity error: report if seen more than twice on the same "
            "link");
        row(d, 7, "decoded.register2 bits 16", "diagnostics: if repeated, run field diagnostics and report");
        row(d, 8, "decoded.outcome", "failed");
        row(d, 9, "code", "79");
        row(d, 9, "name", "GPU has fallen off the bus");
        row(d, 9, "immediate", "RESTART_BM");
        row(d, 10, "decoded.recovery_action", "Node Reboot Required");
        row(d, 10, "decoded.recovery_action_code", "2");
        row(d, 10, "decoded.from", "None");
        row(d, 10, "message", "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)");
        row(d, 11, "code", "999");
        row(d, 11, "boot", "1");
        row(d, 11, "uptime", "120.25");
        row(d, 11, "known", "no");
        row(d, 11, "name", "unknown");
        row(d, 11, "process", "systemd");
        row(d, 12, "code", "14");
        row(d, 12, "bus", "0000:3b:00.0");
        row(d, 12, "message", "Channel 00000001");
        row(d, 12, "boot", "1");

        const char* h = "dmesg-human.log";
        row(h, 0, "time", "2026-12-01T10:00:00");
        row(h, 0, "uptime", "n/a");
        row(h, 0, "bus", "0000:c6:00.0");
        row(h, 0, "pid", "1101234");
        row(h, 0, "process", "nvc:[driver]");
        row(h, 1, "code", "119");
        row(h, 1, "process", "nvidia-smi");

        const char* p = "dmesg-plain.log";
        row(p, 0, "pid", "1896");
        row(p, 0, "process", "");
        row(p, 0, "time", "");
        row(p, 0, "message", "Row Remapper: New row marked for remapping, reset gpu to activate.");
        row(p, 1, "process", "python");
        row(p, 1, "immediate", "WORKFLOW_XID_45");
        row(p, 2, "bus", "0008:01:00.0");
        row(p, 2, "pid", "none");
        row(p, 2, "decoded.recovery_action", "GPU Reset Required");

        const char* j = "journal-k.txt";
        row(j, 0, "code", "92");
        row(j, 0, "time", "Nov 30 21:14:03");
        row(j, 0, "boot", "0");
        row(j, 0, "uuid", "GPU-18181818-aaaa-bbbb-cccc-dddddddddddd");
        row(j, 0, "serial", "1321020031337");
        row(j, 1, "code", "48");
        row(j, 1, "boot", "1");
        row(j, 1, "process", "torchrun");
        row(j, 2, "kind", "sxid");
        row(j, 2, "code", "12028");
        row(j, 2, "device", "nvidia-nvswitch2");
        row(j, 2, "bus", "0000:07:00.0");
        row(j, 2, "message",
            "Non-fatal, Link 32 egress non-posted PRIV error (First); Data {0x00000000, 0x00000000, "
            "0x00000000, "
            "0x00000000}");
        row(j, 2, "name", "Egress non-posted PRIV error");

        const char* js = "journal-k.json";
        row(js, 0, "code", "79");
        row(js, 0, "time", "2026-11-30T10:00:02.123456Z");
        row(js, 0, "uptime", "7.123456");
        row(js, 0, "boot", "0");
        row(js, 0, "boot_id", "6c1b1d2e3f404142434445464748494a");
        row(js, 0, "uuid", "GPU-41414141-0000-1111-2222-333344445555");
        row(js, 1, "code", "140");
        row(js, 1, "boot", "1");
        row(js, 1, "time", "2026-11-30T12:00:00.000000Z");
        row(js, 1, "process",
            QString::fromUtf8("\xEF\xBF\xBD\xEF\xBF\xBD"
                              "bad-utf8"));
        row(js, 2, "decoded.recovery_action", "GPU Reset Required");

        for (const char* b : {"nvidia-bug-report.log", "nvidia-bug-report.log.gz"}) {
            row(b, 0, "time", "2026-12-01T10:00:07");
            row(b, 0, "serial", "1321020031337");
            row(b, 2, "kind", "sxid");
            row(b, 3, "time", "Dec 01 10:00:07");
            row(b, 5, "code", "94");
        }
    }
    void fields()
    {
        QFETCH(QString, file);
        QFETCH(int, index);
        QFETCH(QString, field);
        QFETCH(QString, expected);
        QString error;
        const KernelLogContents log = readOrFail(file, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(index < int(log.events.size()));
        QCOMPARE(eventField(log.events[size_t(index)], field), expected);
    }

    void gzipMembersMatchThePlainLog()
    {
        QString error;
        const KernelLogContents plain = readOrFail("nvidia-bug-report.log", &error);
        const KernelLogContents gz = readOrFail("nvidia-bug-report.log.gz", &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(gz.lines, plain.lines);
        QCOMPARE(gz.events.size(), plain.events.size());
        for (size_t i = 0; i < gz.events.size(); ++i) QCOMPARE(gz.events[i].rawLine, plain.events[i].rawLine);
        auto reader = LogLineReader::open(fixturePath("nvidia-bug-report.log.gz").toStdString());
        QVERIFY(reader.ok());
        QVERIFY((*reader)->gzip());
    }

    void errorsNameFileAndLine_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("journal line that is not JSON") << "malformed-journal.json"
                                                       << "malformed-journal.json:2: not a journal entry";
        QTest::newRow("truncated gzip") << "truncated.log.gz"
                                        << "truncated.log.gz: truncated gzip data";
        QTest::newRow("garbage after gzip") << "trailing-garbage.log.gz"
                                            << "is not gzip";
        QTest::newRow("missing file") << "no-such-file.log"
                                      << "no-such-file.log: no such file";
    }
    void errorsNameFileAndLine()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        auto log = readKernelLog(fixturePath(file).toStdString());
        QVERIFY(!log.ok());
        const QString message = QString::fromStdString(log.message());
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY2(message.startsWith(fixturePath(file)), qPrintable(message));
    }

    void malformedXidLineIsAWarningNamingFileAndLine()
    {
        QString error;
        const KernelLogContents log = readOrFail("malformed-xid.log", &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(int(log.events.size()), 1);
        QCOMPARE(int(log.warnings.size()), 1);
        const QString warning = QString::fromStdString(log.warnings[0]);
        QVERIFY2(
            warning.startsWith(fixturePath("malformed-xid.log") + ":3: malformed Xid line (no Xid number)"),
            qPrintable(warning));
    }

    void hugeLinesAreCutNotKept()
    {
        std::string text = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, " +
                           std::string(3 * kMaxLogLineBytes, 'A') +
                           "\nNVRM: Xid (PCI:0000:3b:00): 48, tail\n";
        auto log = parseKernelLog(text, "huge.log");
        QVERIFY2(log.ok(), log.ok() ? "" : log.message().c_str());
        QCOMPARE(int(log->events.size()), 2);
        QCOMPARE(log->events[0].code, 79);
        QVERIFY(log->events[0].message.size() <= kMaxStoredLineBytes);
        QVERIFY(log->events[0].rawLine.size() <= kMaxStoredLineBytes);
        QCOMPARE(log->events[1].code, 48);
        QCOMPARE(log->events[1].source, std::string("huge.log:2"));
        QCOMPARE(int(log->warnings.size()), 1);
        QVERIFY(QString::fromStdString(log->warnings[0]).contains("1 line(s) longer than"));
    }

    void busIdsAreNormalised_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("bus");
        QTest::newRow("kernel log") << "NVRM: Xid (PCI:0000:3B:00): 13, x"
                                    << "0000:3b:00.0";
        QTest::newRow("old kernel log") << "NVRM: Xid (0000:3b:00): 13, x"
                                        << "0000:3b:00.0";
        QTest::newRow("domain 8 digits") << "NVRM: Xid (PCI:00000001:3b:00.1): 13, x"
                                         << "0001:3b:00.1";
        QTest::newRow("not a bus id") << "NVRM: Xid (PCI:zz): 13, x"
                                      << "";
    }
    void busIdsAreNormalised()
    {
        QFETCH(QString, line);
        QFETCH(QString, bus);
        auto log = parseKernelLog(line.toStdString() + "\n", "mem");
        QVERIFY(log.ok());
        QCOMPARE(int(log->events.size()), 1);
        QCOMPARE(QString::fromStdString(log->events[0].busId), bus);
    }

    void catalogueCoversTheFieldCodes()
    {
        const XidCatalog& c = XidCatalog::builtIn();
        for (int code : {13,  31,  32,  38,  43,  45,  48,  61,  62,  63,  64,  68,  69,
                         74,  79,  92,  94,  95,  109, 119, 120, 121, 122, 123, 136, 137,
                         140, 143, 144, 145, 146, 147, 148, 149, 150, 151, 154, 155}) {
            const XidCatalogEntry* e = c.xid(code);
            QVERIFY2(e, qPrintable(QString("Xid %1 missing").arg(code)));
            QVERIFY2(!e->meaning.empty() && !e->immediateAction.empty() && !e->investigatoryAction.empty() &&
                         !e->architectures.empty(),
                     qPrintable(QString("Xid %1 incomplete").arg(code)));
            QVERIFY2(
                !c.bucketText(e->immediateAction).empty(),
                qPrintable(QString("Xid %1: bucket %2 undescribed").arg(code).arg(qs(e->immediateAction))));
        }
        QVERIFY(!c.xid(999));
        QCOMPARE(c.recoveryActionName(4), std::string("Drain and Reset"));
        QVERIFY(c.sxid(12028));
        QVERIFY(c.sxid(12999));  // by family
        QVERIFY(!c.sxid(99999));
    }

    void builtInCatalogueIsTheResourceFile()
    {
        QFile f(test::sourcePath("resources/xid/xid-catalog.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray file = f.readAll();
        const std::string_view built = builtInXidCatalogJson();
        QCOMPARE(QByteArray(built.data(), qsizetype(built.size())), file);
    }

private:
    static QString qs(const std::string& s) { return QString::fromStdString(s); }
};

QTEST_GUILESS_MAIN(TestHealthLogs)
#include "test_health_logs.moc"
