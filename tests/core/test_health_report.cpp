// Kernel logs and nvidia-smi XML merged per GPU (core/health/HealthReport): which GPUs exist (a bus
// id seen only in a log is one), identity joined across sources, the same event read twice counted
// once, flags, recommendations with their reasons, the `faultline health --json` schema, the live
// inventory (DeviceReport) as snapshots, and errors of collectHealth naming file and line.
#include <QtTest>

#include "core/devices/DeviceReport.h"
#include "core/health/BootId.h"
#include "core/health/KernelLogParser.h"
#include "test_health_fields.h"

using namespace faultline;
using faultline::test::fixturePath;

namespace {

std::vector<std::string> paths(const QStringList& names)
{
    std::vector<std::string> out;
    for (const QString& n : names) out.push_back(fixturePath(n).toStdString());
    return out;
}

const GpuHealthRecord* gpu(const HealthReport& r, const std::string& bus)
{
    for (const GpuHealthRecord& g : r.gpus)
        if (g.identity.busId == bus) return &g;
    return nullptr;
}

QString reasonsText(const GpuHealthRecord& g)
{
    QStringList out;
    for (const HealthReason& r : g.reasons)
        out << QString("%1: %2").arg(healthActionName(r.action)).arg(QString::fromStdString(r.why));
    return out.join("\n");
}

}  // namespace

class TestHealthReport : public QObject {
    Q_OBJECT

private slots:
    void recommendations_data()
    {
        QTest::addColumn<QStringList>("logs");
        QTest::addColumn<QStringList>("xml");
        QTest::addColumn<QString>("bus");
        QTest::addColumn<QString>("recommendation");
        QTest::addColumn<QString>("reason");
        QTest::newRow("row-remap failure and SRAM threshold")
            << QStringList{} << QStringList{"nvidia-smi-v13.xml"} << "0000:86:00.0"
            << "rma_candidate"
            << "rma_candidate: row-remapping failure";
        QTest::newRow("SRAM threshold is a reason of its own")
            << QStringList{} << QStringList{"nvidia-smi-v13.xml"} << "0000:86:00.0"
            << "rma_candidate"
            << "rma_candidate: SRAM uncorrectable error threshold exceeded";
        QTest::newRow("recovery action from nvidia-smi")
            << QStringList{} << QStringList{"nvidia-smi-v13.xml"} << "0000:86:00.0"
            << "rma_candidate"
            << "drain: recovery action \"Drain and Reset\"";
        QTest::newRow("pending remap") << QStringList{} << QStringList{"nvidia-smi-v12.xml"} << "0000:18:00.0"
                                       << "reset"
                                       << "reset: row remapping pending";
        QTest::newRow("healthy GPU") << QStringList{} << QStringList{"nvidia-smi-v12.xml"} << "0000:19:00.0"
                                     << "none"
                                     << "";
        QTest::newRow("pending page retirement")
            << QStringList{} << QStringList{"nvidia-smi-v11.xml"} << "0000:3b:00.0"
            << "reset"
            << "reset: page retirement pending";
        QTest::newRow("Xid 79 drains") << QStringList{"dmesg-stamps.log"} << QStringList{} << "0000:3b:00.0"
                                       << "drain"
                                       << "drain: Xid 79 (GPU has fallen off the bus, 1 event";
        QTest::newRow("Xid 154 node reboot")
            << QStringList{"dmesg-stamps.log"} << QStringList{} << "0000:3b:00.0"
            << "drain"
            << "the driver asks for \"Node Reboot Required\"";
        QTest::newRow("Xid 64 remap failure")
            << QStringList{"dmesg-stamps.log"} << QStringList{} << "0000:86:00.0"
            << "rma_candidate"
            << "rma_candidate: Xid 64";
        QTest::newRow("Xid 95 resets") << QStringList{"dmesg-stamps.log"} << QStringList{} << "0000:86:00.0"
                                       << "rma_candidate"
                                       << "reset: Xid 95";
        QTest::newRow("Xid 74 NVLink workflow")
            << QStringList{"dmesg-stamps.log"} << QStringList{} << "0000:86:00.0"
            << "rma_candidate"
            << "reset: Xid 74 (NVLink error, 1 event";
        QTest::newRow("Xid 45 alone") << QStringList{"dmesg-plain.log"} << QStringList{} << "0000:10:1c.0"
                                      << "monitor"
                                      << "monitor: Xid 45";
        QTest::newRow("Xid 154 GPU reset")
            << QStringList{"dmesg-plain.log"} << QStringList{} << "0008:01:00.0"
            << "reset"
            << "reset: Xid 154";
        QTest::newRow("Xid 48 with 63 drains")
            << QStringList{"nvidia-bug-report.log.gz"} << QStringList{"nvidia-smi-v12.xml"} << "0000:18:00.0"
            << "drain"
            << "drain: Xid 48 (Double bit ECC error, 1 event";
        QTest::newRow("journal: 79 then 140")
            << QStringList{"journal-k.json"} << QStringList{} << "0000:41:00.0"
            << "drain"
            << "reset: Xid 140";
        QTest::newRow("unknown Xid is kept")
            << QStringList{"dmesg-stamps.log"} << QStringList{} << "0000:3b:00.0"
            << "drain"
            << "monitor: Xid 999 (unknown, 1 event";
        QTest::newRow("GSP RPC timeout resets")
            << QStringList{"dmesg-human.log"} << QStringList{} << "0000:c6:00.0"
            << "drain"
            << "reset: Xid 119";
    }
    void recommendations()
    {
        QFETCH(QStringList, logs);
        QFETCH(QStringList, xml);
        QFETCH(QString, bus);
        QFETCH(QString, recommendation);
        QFETCH(QString, reason);
        auto r = collectHealth(HealthInputs{paths(logs), paths(xml), {}});
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const GpuHealthRecord* g = gpu(*r, bus.toStdString());
        QVERIFY2(g, qPrintable("no GPU " + bus));
        QCOMPARE(QString(healthActionName(g->recommendation)), recommendation);
        if (reason.isEmpty())
            QVERIFY2(g->reasons.empty(), qPrintable(reasonsText(*g)));
        else
            QVERIFY2(reasonsText(*g).contains(reason), qPrintable(reasonsText(*g)));
    }

    void gpusFromLogsAndXmlAreJoined()
    {
        auto r = collectHealth(
            HealthInputs{paths({"nvidia-bug-report.log.gz"}), paths({"nvidia-smi-v12.xml"}), {}});
        QVERIFY(r.ok());
        QCOMPARE(int(r->gpus.size()), 2);
        const GpuHealthRecord* g = gpu(*r, "0000:18:00.0");
        QVERIFY(g);
        // dmesg and journalctl sections of the bug report hold the same 48 and 63: counted once.
        QCOMPARE(int(g->events.size()), 3);
        QCOMPARE(g->events[0].code, 48);
        QCOMPARE(g->events[1].code, 63);
        QCOMPARE(g->events[2].code, 94);
        QCOMPARE(g->identity.serial, std::string("1321020031337"));
        QCOMPARE(g->identity.product, std::string("NVIDIA A100-SXM4-80GB"));
        QCOMPARE(g->events[2].serial, std::string("1321020031337"));  // from the identity lines, via the GPU
        QVERIFY(g->flags.rowRemapPending);
        QVERIFY(!g->flags.rowRemapFailure);
        QCOMPARE(int(r->unattributedEvents.size()), 1);
        QCOMPARE(r->unattributedEvents[0].code, 12028);
        QCOMPARE(int(r->sources.size()), 2);
        QVERIFY(r->somethingFound());
    }

    void aBusIdOnlyInALogIsAGpu()
    {
        auto r = collectHealth(HealthInputs{paths({"nvidia-bug-report.log"}), {}, {}});
        QVERIFY(r.ok());
        const GpuHealthRecord* g = gpu(*r, "0000:19:00.0");  // identity lines, no Xid, no XML
        QVERIFY(g);
        QCOMPARE(g->identity.uuid, std::string("GPU-19191919-aaaa-bbbb-cccc-dddddddddddd"));
        QCOMPARE(g->identity.serial, std::string("1321020031338"));
        QVERIFY(g->events.empty());
        QCOMPARE(g->recommendation, HealthAction::None);
    }

    void nothingFoundOnAHealthyMachine()
    {
        auto snapshots = collectHealth(HealthInputs{{}, paths({"nvidia-smi-v12.xml"}), {}});
        QVERIFY(snapshots.ok());
        QVERIFY(snapshots->somethingFound());  // GPU 18 has a pending remap
        std::string xml =
            "<nvidia_smi_log><gpu id=\"00000000:19:00.0\"><remapped_rows><remapped_row_corr>0"
            "</remapped_row_corr><remapped_row_pending>No</remapped_row_pending><remapped_row_failure>"
            "No</remapped_row_failure></remapped_rows></gpu></nvidia_smi_log>";
        QTemporaryDir dir;
        const QString path = dir.filePath("healthy.xml");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(xml.data(), qint64(xml.size()));
        f.close();
        auto healthy = collectHealth(HealthInputs{{}, {path.toStdString()}, {}});
        QVERIFY(healthy.ok());
        QCOMPARE(int(healthy->gpus.size()), 1);
        QVERIFY(!healthy->somethingFound());
    }

    void jsonSchema()
    {
        auto r = collectHealth(HealthInputs{paths({"nvidia-bug-report.log.gz", "journal-k.json"}),
                                            paths({"nvidia-smi-v12.xml", "nvidia-smi-v13.xml"}),
                                            {}});
        QVERIFY(r.ok());
        const nlohmann::json j = healthReportJson(*r);
        // Invalid UTF-8 from the journal's byte-array message must not break serialisation.
        const std::string text = j.dump(2);
        QVERIFY(!text.empty());
        QVERIFY(j.at("gpus").is_array());
        QVERIFY(j.at("unattributed_events").is_array());
        QCOMPARE(int(j.at("unattributed_events").size()), 1);
        QCOMPARE(j["unattributed_events"][0].at("kind").get<std::string>(), std::string("sxid"));
        for (const auto& g : j["gpus"]) {
            for (const char* k : {"bus_id", "uuid", "serial", "product", "flags", "counters", "events",
                                  "recommendation", "recommendation_reasons"})
                QVERIFY2(g.contains(k), k);
            for (const char* k : {"row_remap_pending", "row_remap_failure", "sram_threshold_exceeded"})
                QVERIFY2(g["flags"].at(k).is_boolean(), k);
            for (const auto& e : g["events"])
                for (const char* k :
                     {"xid", "time", "pid", "process", "message", "meaning", "immediate_action",
                      "investigatory_action", "decoded", "source", "boot"})
                    QVERIFY2(e.contains(k), k);
        }
        const auto h100 = std::find_if(j["gpus"].begin(), j["gpus"].end(),
                                       [](const nlohmann::json& g) { return g["bus_id"] == "0000:86:00.0"; });
        QVERIFY(h100 != j["gpus"].end());
        QCOMPARE((*h100)["recommendation"].get<std::string>(), std::string("rma_candidate"));
        QCOMPARE((*h100)["flags"]["row_remap_failure"].get<bool>(), true);
        QCOMPARE((*h100)["flags"]["sram_threshold_exceeded"].get<bool>(), true);
        QCOMPARE((*h100)["counters"]["remapped_rows"]["uncorrectable"].get<int>(), 7);
        QCOMPARE((*h100)["serial"].get<std::string>(), std::string("1650122009999"));
        const auto a100 = std::find_if(j["gpus"].begin(), j["gpus"].end(),
                                       [](const nlohmann::json& g) { return g["bus_id"] == "0000:18:00.0"; });
        QVERIFY(a100 != j["gpus"].end());
        const auto& e48 = (*a100)["events"][0];
        QCOMPARE(e48["xid"].get<int>(), 48);
        QCOMPARE(e48["pid"].get<int>(), 4242);
        QCOMPARE(e48["process"].get<std::string>(), std::string("torchrun"));
        QCOMPARE(e48["immediate_action"].get<std::string>(), std::string("WORKFLOW_XID_48"));
        QCOMPARE(e48["decoded"]["partition"].get<std::string>(), std::string("1"));
        QVERIFY((*a100)["events"][1]["pid"].is_null());  // pid='<unknown>'
        QCOMPARE((*a100)["xid_summary"]["48"].get<int>(), 1);
    }

    void anyBytesGiveValidJson()
    {
        // A syslog time, a process name, a decoded field and a path with bytes that are not UTF-8
        // (found by fuzz_health): the report still serialises.
        const std::string log =
            "Nov 30 08:00:0\xb5 host kernel: NVRM: Xid (PCI:0000:18:00): 94, pid=1, name=p\xff, Contained: "
            "S\xc3 (0x1). RST: No, D-RST: No\n";
        auto parsed = parseKernelLog(log, "/tmp/\xfe.log");
        QVERIFY(parsed.ok());
        QCOMPARE(int(parsed->events.size()), 1);
        HealthReport r = buildHealthReport(std::move(parsed->events), {});
        r.sources.push_back("/tmp/\xfe.log");
        std::string text;
        try {
            text = healthReportJson(r).dump();
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        QVERIFY(text.find("\xef\xbf\xbd") != std::string::npos);  // U+FFFD where the bytes were
    }

    void liveInventoryFillsTheSameStructure()
    {
        const char* doc = R"({"cuda_built":true,"cuda_available":true,"driver_version":"570.172.08","gpus":[
            {"index":0,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-aaaa","pci_bus_id":"00000000:3B:00.0",
             "ecc_enabled":true,"nvml":{"serial":"1650","ecc_uncorrected_volatile":0,"ecc_uncorrected_aggregate":3,
             "remapped_rows_correctable":0,"remapped_rows_uncorrectable":2,"remap_pending":true,"remap_failure":false,
             "temperature_c":40,"power_w":70.5}},
            {"index":1,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-bbbb","pci_bus_id":"00000000:3C:00.0",
             "nvml":{"serial":"1651","remap_pending":false,"remap_failure":true}},
            {"index":2,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-cccc","pci_bus_id":"00000000:3D:00.0"}]})";
        auto devices = parseDeviceReport(doc, "worker");
        QVERIFY(devices.ok());
        const std::vector<GpuHealthSnapshot> live = healthSnapshotsFromDevices(*devices);
        QCOMPARE(int(live.size()), 2);  // GPU 2 has no NVML data
        auto r = collectHealth(HealthInputs{paths({"dmesg-stamps.log"}), {}, live});
        QVERIFY(r.ok());
        const GpuHealthRecord* a = gpu(*r, "0000:3b:00.0");
        QVERIFY(a);
        QCOMPARE(a->identity.serial, std::string("1650"));  // NVML wins over the log's serial line
        QCOMPARE(a->identity.driverVersion, std::string("570.172.08"));
        QVERIFY(a->flags.rowRemapPending);
        QCOMPARE(a->counters.remappedRowsUncorrectable.value_or(0), uint64_t(2));
        QCOMPARE(a->snapshots.back().source, std::string("nvml"));
        QVERIFY(!a->events.empty());
        const GpuHealthRecord* b = gpu(*r, "0000:3c:00.0");
        QVERIFY(b);
        QVERIFY(b->flags.rowRemapFailure);
        QCOMPARE(b->recommendation, HealthAction::RmaCandidate);
    }

    void bootIdOfTheReportAndItsLiveSnapshots()
    {
        QTemporaryDir dir;
        auto plant = [&](const QString& name, const QByteArray& text) {
            QFile f(dir.filePath(name));
            if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(f.fileName()));
            f.write(text);
            return f.fileName().toStdString();
        };
        // Linux writes it with dashes; journald's _BOOT_ID (and so the ledger) without.
        QCOMPARE(readBootId(plant("id", "6C1B1D2E-3F40-4142-4344-45464748494a\n")),
                 std::string("6c1b1d2e3f404142434445464748494a"));
        QCOMPARE(readBootId(plant("short", "6c1b1d2e\n")), std::string());
        QCOMPARE(readBootId(plant("prose", "not a boot id at all, not even close\n")), std::string());
        QCOMPARE(readBootId(dir.filePath("missing").toStdString()), std::string());
        // This machine's, where Linux has one.
        if (QFile::exists(kBootIdPath)) QCOMPARE(int(readBootId().size()), 32);

        GpuHealthSnapshot live;
        live.source = "nvml";
        live.identity.busId = "0000:3b:00.0";
        live.bootId = "6c1b1d2e3f404142434445464748494a";
        auto r = collectHealth(HealthInputs{{}, {}, {live}});
        QVERIFY(r.ok());
        r->bootId = live.bootId;
        const nlohmann::json j = healthReportJson(*r);
        QCOMPARE(j.at("boot_id").get<std::string>(), live.bootId);
        QCOMPARE(j.at("gpus")[0].at("snapshots")[0].at("boot_id").get<std::string>(), live.bootId);
        // Unknown: null.
        r->bootId.clear();
        QVERIFY(healthReportJson(*r).at("boot_id").is_null());
    }

    void errorsNameFileAndLine_data()
    {
        QTest::addColumn<QStringList>("logs");
        QTest::addColumn<QStringList>("xml");
        QTest::addColumn<QString>("expected");
        QTest::newRow("bad journal after a good log")
            << QStringList{"dmesg-stamps.log", "malformed-journal.json"} << QStringList{}
            << "malformed-journal.json:2: ";
        QTest::newRow("bad XML") << QStringList{"dmesg-stamps.log"} << QStringList{"malformed.xml"}
                                 << "malformed.xml:7: malformed XML";
        QTest::newRow("XML given as a log") << QStringList{"nvidia-smi-v12.xml"} << QStringList{} << "";
    }
    void errorsNameFileAndLine()
    {
        QFETCH(QStringList, logs);
        QFETCH(QStringList, xml);
        QFETCH(QString, expected);
        auto r = collectHealth(HealthInputs{paths(logs), paths(xml), {}});
        if (expected.isEmpty()) {
            // An XML file read as a log has no Xid lines: not an error, nothing found.
            QVERIFY(r.ok());
            QVERIFY(!r->somethingFound());
            return;
        }
        QVERIFY(!r.ok());
        QVERIFY2(QString::fromStdString(r.message()).contains(expected), r.message().c_str());
    }

    void errorCodes()
    {
        auto missing = collectHealth(HealthInputs{{"/nonexistent/dmesg.log"}, {}, {}});
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, ErrorCode::Usage);
        auto malformed = collectHealth(HealthInputs{paths({"malformed-journal.json"}), {}, {}});
        QVERIFY(!malformed.ok());
        QCOMPARE(malformed.error().code, ErrorCode::Format);
        // An unreadable Xid line is a warning: the report still comes.
        auto xid = collectHealth(HealthInputs{paths({"malformed-xid.log"}), {}, {}});
        QVERIFY(xid.ok());
        QCOMPARE(int(xid->warnings.size()), 1);
        auto xml = collectHealth(HealthInputs{{}, paths({"entities.xml"}), {}});
        QVERIFY(!xml.ok());
        QCOMPARE(xml.error().code, ErrorCode::Format);
    }

    void textSummary()
    {
        auto r = collectHealth(HealthInputs{paths({"dmesg-stamps.log"}), paths({"nvidia-smi-v13.xml"}), {}});
        QVERIFY(r.ok());
        const QString text = QString::fromStdString(healthReportText(*r));
        QVERIFY2(text.contains("GPU 0000:86:00.0  NVIDIA H100 80GB HBM3"), qPrintable(text));
        QVERIFY2(text.contains("recommendation: RMA candidate"), qPrintable(text));
        QVERIFY2(text.contains("row remap failure YES"), qPrintable(text));
        QVERIFY2(text.contains("Xid 79 GPU has fallen off the bus (RESTART_BM)"), qPrintable(text));
        QVERIFY2(text.contains("link = 14; registers = 0x10 0x0 0x10000"), qPrintable(text));
    }
};

QTEST_GUILESS_MAIN(TestHealthReport)
#include "test_health_report.moc"
