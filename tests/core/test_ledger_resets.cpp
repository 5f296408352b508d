// GPU resets and reboots from kernel logs in the ledger (core/ledger/LedgerFiles.h): a dmesg -T log
// with two boots (the kernel's banner), an Xid 79 and the driver's reset line adds the reset as an
// event of kind "reset" of the GPU its identity lines name and both boots; reading the same log
// again adds nothing; `ledger show` lists the reset and the boots in time order. On SQLite and on
// a PostgreSQL server the test starts (support/LedgerEngines.h).
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "core/health/HealthReport.h"
#include "core/ledger/LedgerFiles.h"
#include "core/ledger/LedgerTimeline.h"
#include "support/LedgerEngines.h"

using namespace faultline;

namespace {

const char* kLog =
    "[Tue Mar  3 10:00:00 2026] Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) (gcc-12 "
    "(Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian "
    "6.1.76-1 (2024-02-01)\n"
    "[Tue Mar  3 10:00:00 2026] Command line: BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=/dev/md0 ro "
    "quiet\n"
    "[Tue Mar  3 10:00:05 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05\n"
    "[Tue Mar  3 10:05:00 2026] NVRM: GPU at PCI:0000:3b:00: GPU-3b8e5a55-1f4c-2e9b-8a5e-0c7d1e2f3a4b\n"
    "[Tue Mar  3 10:05:00 2026] NVRM: GPU Board Serial Number: 1650122005678\n"
    "[Tue Mar  3 11:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off "
    "the bus.\n"
    "[Tue Mar  3 11:02:00 2026] NVRM: GPU at PCI:0000:3b:00: GPU has been reset\n"
    "[Wed Mar  4 09:00:00 2026] Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) (gcc-12 "
    "(Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian "
    "6.1.76-1 (2024-02-01)\n"
    "[Wed Mar  4 09:00:00 2026] Command line: BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=/dev/md0 ro "
    "quiet\n";

}  // namespace

class TestLedgerResets : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    void init() { FL_LEDGER_ENGINE_INIT(); }

    void resetsAndRebootsFromALog()
    {
        const QString path = m_dir.path() + "/kern.log";
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kLog);
        f.close();
        HealthInputs inputs;
        inputs.logFiles = {path.toStdString()};
        auto report = collectHealth(inputs);
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        QCOMPARE(report->resets.size(), size_t(1));
        const auto rows = ledgerResetEvents(*report, "node7");
        QCOMPARE(rows.size(), size_t(1));
        QCOMPARE(QString::fromStdString(rows[0].serial), QString("1650122005678"));
        QCOMPARE(QString::fromStdString(rows[0].kind), QString("reset"));
        QCOMPARE(rows[0].at.value_or(""), std::string("2026-03-03T11:02:00"));

        auto ledger = Ledger::open(test::ledgerSpec(m_dir.path(), "resets"));
        QVERIFY2(ledger.ok(), ledger.ok() ? "" : ledger.message().c_str());
        auto first = addHealthReport(*ledger, *report, {"node7", path.toStdString()});
        QVERIFY2(first.ok(), first.ok() ? "" : first.message().c_str());
        QCOMPARE(first->events, uint64_t(2));  // the Xid 79 and the reset
        QCOMPARE(first->boots, uint64_t(2));
        auto again = addHealthReport(*ledger, *report, {"node7", path.toStdString()});
        QVERIFY(again.ok());
        QCOMPARE(again->total(), uint64_t(0));
        QCOMPARE(again->repeated, first->total());

        auto t = ledgerTimeline(ledger->engine(), "1650122005678");
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        std::vector<std::string> kinds;
        for (const TimelineEntry& e : t->entries)
            if (e.kind != "identity") kinds.push_back(e.kind);
        QCOMPARE(kinds, (std::vector<std::string>{"boot", "xid", "reset", "boot"}));
        const nlohmann::json j = ledgerTimelineJson(*t);
        bool sawReset = false;
        for (const nlohmann::json& e : j["timeline"])
            if (e["kind"] == "reset") {
                sawReset = true;
                QCOMPARE(e["at"].get<std::string>(), std::string("2026-03-03T11:02:00"));
                QCOMPARE(e["bus_id"].get<std::string>(), std::string("0000:3b:00.0"));
                QVERIFY(e["message"].get<std::string>().find("has been reset") != std::string::npos);
                QVERIFY(e["summary"].get<std::string>().find("GPU reset on node7") == 0);
            }
        QVERIFY(sawReset);
        QVERIFY(ledgerTimelineText(*t).find("reset  GPU reset on node7 0000:3b:00.0") != std::string::npos);
    }
};

FL_LEDGER_TEST_MAIN(TestLedgerResets)
#include "test_ledger_resets.moc"
