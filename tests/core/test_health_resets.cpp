// GPU resets and reboots in kernel logs (core/health/KernelLogParser): the driver's reset lines
// in the shapes it and nvidia-smi -r leave in dmesg become resets of the GPU they name (bus id,
// time, FILE:LINE); a reset asked for, or a process's line quoting one, is not one. The kernel's
// banner ("Linux version", "Command line:") after other lines starts a new boot, counted once with
// the stamps going back or the journal's separator.
#include <QtTest>

#include "core/health/KernelLogParser.h"

using namespace faultline;

namespace {

const char* kBanner =
    "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, "
    "GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)";
const char* kCommandLine = "Command line: BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=/dev/md0 ro quiet";

KernelLogContents parseOrFail(const std::string& text)
{
    auto log = parseKernelLog(text, "kern.log");
    if (!log) qFatal("%s", log.message().c_str());
    return std::move(log).value();
}

}  // namespace

class TestHealthResets : public QObject {
    Q_OBJECT

private slots:
    void resetLines_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("busId");  // "" when it is no reset
        QTest::newRow("GPU at ... has been reset")
            << "[Tue Mar  3 11:02:00 2026] NVRM: GPU at PCI:0000:3b:00: GPU has been reset"
            << "0000:3b:00.0";
        QTest::newRow("nvidia-smi -r") << "[ 5021.338817] NVRM: GPU 0000:86:00.0: GPU was successfully reset"
                                       << "0000:86:00.0";
        QTest::newRow("resetting")
            << "Mar  3 11:02:00 node7 kernel: NVRM: Resetting GPU (PCI:0000:3B:00.0) after Xid 79"
            << "0000:3b:00.0";
        QTest::newRow("reset complete") << "[ 5021.4] NVRM: GPU 0000:1a:00.0: GPU reset complete"
                                        << "0000:1a:00.0";
        QTest::newRow("reset required is no reset") << "[ 5021.4] NVRM: GPU 0000:1a:00.0: GPU reset required"
                                                    << "";
        QTest::newRow("recovery action is no reset")
            << "[ 5021.4] NVRM: GPU 0000:1a:00.0: GPU recovery action changed from 0x0 (None) to 0x1 (Reset)"
            << "";
        QTest::newRow("no bus id") << "[ 5021.4] NVRM: GPU has been reset"
                                   << "";
        QTest::newRow("a process quoting it")
            << "Mar  3 11:02:00 node7 python3[991]: NVRM: GPU 0000:3b:00.0: GPU has been reset"
            << "";
        QTest::newRow("identity line stays one")
            << "[ 5.0] NVRM: GPU at PCI:0000:3b:00: GPU-3b8e5a55-1f4c-2e9b-8a5e-0c7d1e2f3a4b"
            << "";
    }
    void resetLines()
    {
        QFETCH(QString, line);
        QFETCH(QString, busId);
        const KernelLogContents log = parseOrFail(line.toStdString() + "\n");
        if (busId.isEmpty()) {
            QCOMPARE(log.resets.size(), size_t(0));
            return;
        }
        QCOMPARE(log.resets.size(), size_t(1));
        QCOMPARE(QString::fromStdString(log.resets[0].busId), busId);
        QCOMPARE(QString::fromStdString(log.resets[0].source), QString("kern.log:1"));
        QVERIFY(log.resets[0].message.find("eset") != std::string::npos);
        QVERIFY(log.events.empty());  // a reset is no Xid
    }

    void resetKeepsTimeAndStamp()
    {
        const KernelLogContents log = parseOrFail(
            "[Tue Mar  3 11:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has "
            "fallen "
            "off the bus.\n"
            "[Tue Mar  3 11:02:00 2026] NVRM: GPU at PCI:0000:3b:00: GPU has been reset\n");
        QCOMPARE(log.events.size(), size_t(1));
        QCOMPARE(log.resets.size(), size_t(1));
        QCOMPARE(QString::fromStdString(log.resets[0].time), QString("2026-03-03T11:02:00"));
        QCOMPARE(QString::fromStdString(log.resets[0].source), QString("kern.log:2"));
        const KernelLogContents stamped =
            parseOrFail("[ 5021.338817] NVRM: GPU 0000:86:00.0: GPU was reset\n");
        QVERIFY(stamped.resets[0].uptime);
        QCOMPARE(*stamped.resets[0].uptime, 5021.338817);
    }

    void bannerStartsABoot_data()
    {
        QTest::addColumn<QString>("log");
        QTest::addColumn<int>("boots");
        const QString banner = kBanner, cmd = kCommandLine;
        QTest::newRow("one boot, banner first")
            << "[Tue Mar  3 10:00:00 2026] " + banner + "\n[Tue Mar  3 10:00:00 2026] " + cmd +
                   "\n[Tue Mar  3 10:05:00 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n"
            << 1;
        QTest::newRow("two boots by date")
            << "[Tue Mar  3 10:00:00 2026] " + banner + "\n[Tue Mar  3 10:00:00 2026] " + cmd +
                   "\n[Tue Mar  3 11:00:00 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n"
                   "[Wed Mar  4 09:00:00 2026] " +
                   banner + "\n[Wed Mar  4 09:00:00 2026] " + cmd + "\n"
            << 2;
        QTest::newRow("command line alone")
            << "Mar  3 10:00:00 node7 kernel: usb 1-1: new device\nMar  4 09:00:00 node7 kernel: " + cmd +
                   "\n"
            << 2;
        QTest::newRow("stamps going back count once")
            << "[    0.000000] " + banner + "\n[  900.000000] NVRM: loading\n[    0.000000] " + banner +
                   "\n[    0.000000] " + cmd + "\n[    3.000000] NVRM: loading\n"
            << 2;
        QTest::newRow("journal separator counts once") << "Mar 03 10:00:00 node7 kernel: NVRM: loading\n-- "
                                                          "Boot 0f1e2d3c4b5a69788796a5b4c3d2e1f0 --\nMar 04 "
                                                          "09:00:00 node7 kernel: " +
                                                              banner + "\n"
                                                       << 2;
        QTest::newRow("a process quoting it")
            << "[Tue Mar  3 10:00:00 2026] NVRM: loading\nMar  4 09:00:00 node7 logger: " + banner + "\n"
            << 1;
    }
    void bannerStartsABoot()
    {
        QFETCH(QString, log);
        QFETCH(int, boots);
        const KernelLogContents parsed = parseOrFail(log.toStdString());
        // Boots are numbered from 0 in log order; a boot with no stamp, id or banner is not listed.
        QCOMPARE(parsed.boots.empty() ? 1 : parsed.boots.back().index + 1, boots);
    }

    void secondBootStartsAtItsBanner()
    {
        const std::string log =
            std::string("[Tue Mar  3 10:00:00 2026] NVRM: loading\n[Wed Mar  4 09:00:00 2026] ") + kBanner +
            "\n";
        const KernelLogContents parsed = parseOrFail(log);
        // The first boot has no stamp, id or banner, so it is not listed; the second is, at its banner.
        QCOMPARE(parsed.boots.size(), size_t(1));
        QCOMPARE(parsed.boots[0].index, 1);
        QCOMPARE(QString::fromStdString(parsed.boots[0].time), QString("2026-03-04T09:00:00"));
        QCOMPARE(QString::fromStdString(parsed.boots[0].source), QString("kern.log:2"));
    }
};

QTEST_GUILESS_MAIN(TestHealthResets)
#include "test_health_resets.moc"
