// The worker's --devices-json document read back (core/devices/DeviceReport): every field the
// worker writes lands in its place, absent NVML counters stay absent, a machine without devices
// has a plain reason, and a malformed document is an error naming where it came from.
#include <QtTest>

#include "core/devices/DeviceReport.h"

using namespace faultline;

class TestDeviceReport : public QObject {
    Q_OBJECT

private slots:
    void readsEveryField()
    {
        const char* doc = R"({"cuda_built":true,"cuda_available":true,"cuda_driver_version":12040,
            "cuda_runtime_version":13000,"nvml_available":true,"driver_version":"550.54.15",
            "gpus":[{"index":3,"name":"NVIDIA A100-SXM4-40GB","uuid":"GPU-1234","pci_bus_id":"00000000:07:00.0",
                     "compute_capability":"8.0","sm_count":108,"memory_bytes":42505273344,"clock_khz":1410000,
                     "memory_clock_khz":1215000,"ecc_enabled":true,"peer_key":"A100, 108 SMs",
                     "nvml":{"serial":"S1","board_part_number":"B1","vbios_version":"V1","inforom_image_version":"I1",
                             "ecc_corrected_volatile":7,"ecc_uncorrected_aggregate":0,"remapped_rows_correctable":2,
                             "remapped_rows_uncorrectable":0,"remap_pending":false,"remap_failure":false,
                             "temperature_c":41,"power_w":88.5,"errors":["nvmlDeviceGetSerial: Not Supported"]}},
                    {"index":4,"name":"x","uuid":"GPU-5678","pci_bus_id":"00000000:08:00.0",
                     "compute_capability":"8.0","sm_count":108,"memory_bytes":1,"clock_khz":0,
                     "memory_clock_khz":0,"ecc_enabled":false}]})";
        auto r = parseDeviceReport(doc, "worker");
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QVERIFY(r->cudaBuilt && r->cudaAvailable && r->nvmlAvailable);
        QCOMPARE(r->cudaDriverVersion, 12040);
        QCOMPARE(r->cudaRuntimeVersion, 13000);
        QCOMPARE(r->driverVersion, std::string("550.54.15"));
        QCOMPARE(r->gpus.size(), size_t(2));
        const LocalGpu& g = r->gpus[0];
        QCOMPARE(g.index, 3);
        QCOMPARE(g.name, std::string("NVIDIA A100-SXM4-40GB"));
        QCOMPARE(g.uuid, std::string("GPU-1234"));
        QCOMPARE(g.pciBusId, std::string("00000000:07:00.0"));
        QCOMPARE(g.computeCapability, std::string("8.0"));
        QCOMPARE(g.smCount, 108);
        QCOMPARE(g.memoryBytes, uint64_t(42505273344));
        QCOMPARE(g.clockKHz, 1410000);
        QCOMPARE(g.memoryClockKHz, 1215000);
        QVERIFY(g.eccEnabled);
        QCOMPARE(g.peerKey, std::string("A100, 108 SMs"));
        QVERIFY(r->gpus[1].peerKey.empty());  // an older worker: unknown
        QVERIFY(g.health);
        QCOMPARE(g.health->serial, std::string("S1"));
        QCOMPARE(g.health->inforomImageVersion, std::string("I1"));
        QCOMPARE(g.health->eccCorrectedVolatile, std::optional<uint64_t>(7));
        QVERIFY(!g.health->eccUncorrectedVolatile);  // not in the document: not supported
        QCOMPARE(g.health->eccUncorrectedAggregate, std::optional<uint64_t>(0));
        QCOMPARE(g.health->remappedRowsCorrectable, std::optional<uint64_t>(2));
        QCOMPARE(g.health->temperatureC, std::optional<uint64_t>(41));
        QCOMPARE(g.health->powerW, std::optional<double>(88.5));
        QCOMPARE(g.health->errors, std::vector<std::string>{"nvmlDeviceGetSerial: Not Supported"});
        QVERIFY(!g.health->needsAttention());
        QVERIFY(!r->gpus[1].health);
        QVERIFY(r->noDevicesReason().empty());
    }

    void writesWhatItReads()
    {
        // deviceReportJson is the worker's side of the one schema: every field survives the trip.
        DeviceReport r;
        r.cudaBuilt = r.cudaAvailable = r.nvmlAvailable = true;
        r.cudaDriverVersion = 13000;
        r.cudaRuntimeVersion = 13000;
        r.driverVersion = "580.65.06";
        LocalGpu g;
        g.index = 2;
        g.name = "NVIDIA H200";
        g.uuid = "GPU-abcd";
        g.pciBusId = "00000000:19:00.0";
        g.computeCapability = "9.0";
        g.smCount = 132;
        g.memoryBytes = 150754820096ull;
        g.clockKHz = 1980000;
        g.memoryClockKHz = 3201000;
        g.eccEnabled = true;
        g.peerKey = "H200, 132 SMs";
        GpuHealth h;
        h.serial = "1654123456789";
        h.eccUncorrectedAggregate = 3;
        h.remappedRowsUncorrectable = 1;
        h.remapPending = true;
        h.temperatureC = 44;
        h.powerW = 120.25;
        h.errors = {"nvmlDeviceGetPowerUsage: Not Supported"};
        g.health = h;
        r.gpus.push_back(g);
        auto back = parseDeviceReport(deviceReportJson(r).dump(), "worker");
        QVERIFY2(back.ok(), back.ok() ? "" : back.message().c_str());
        QVERIFY(deviceReportJson(*back) == deviceReportJson(r));
        QCOMPARE(back->gpus.at(0).memoryBytes, g.memoryBytes);
        QCOMPARE(*back->gpus.at(0).health->remappedRowsUncorrectable, uint64_t(1));
        QVERIFY(back->gpus.at(0).health->needsAttention());
        DeviceReport notBuilt;
        notBuilt.cudaError = "this faultline-worker was built without the CUDA target";
        auto nb = parseDeviceReport(deviceReportJson(notBuilt).dump(), "worker");
        QVERIFY(nb.ok());
        QVERIFY(!nb->cudaBuilt);
        QCOMPARE(nb->cudaError, notBuilt.cudaError);
    }
    void peerGroupsShareAKey()
    {
        DeviceReport r;
        const std::vector<std::pair<int, std::string>> gpus = {
            {0, "H200, 132 SMs"}, {1, "H100, 132 SMs"}, {2, "H200, 132 SMs"}, {3, ""},
            {4, "H100, 132 SMs"}, {5, "H200, 132 SMs"}, {6, "L4, 58 SMs"},    {7, ""}};
        for (const auto& [index, key] : gpus) {
            LocalGpu g;
            g.index = index;
            g.peerKey = key;
            r.gpus.push_back(g);
        }
        // Unknown keys are nobody's peers; a key held by one GPU makes no group.
        QCOMPARE(r.peerGroups(), (std::vector<std::vector<int>>{{0, 2, 5}, {1, 4}}));
        r.gpus.resize(2);
        QVERIFY(r.peerGroups().empty());
    }

    void needsAttentionOnFailingMemory_data()
    {
        QTest::addColumn<QString>("nvml");
        QTest::addColumn<bool>("attention");
        QTest::newRow("corrected only")
            << R"({"ecc_corrected_volatile":100,"ecc_corrected_aggregate":900})" << false;
        QTest::newRow("uncorrected volatile") << R"({"ecc_uncorrected_volatile":1})" << true;
        QTest::newRow("uncorrected aggregate") << R"({"ecc_uncorrected_aggregate":3})" << true;
        QTest::newRow("uncorrectable remap") << R"({"remapped_rows_uncorrectable":1})" << true;
        QTest::newRow("remap pending") << R"({"remap_pending":true})" << true;
        QTest::newRow("remap failure") << R"({"remap_failure":true})" << true;
        QTest::newRow("nothing known") << R"({})" << false;
    }

    void needsAttentionOnFailingMemory()
    {
        QFETCH(QString, nvml);
        QFETCH(bool, attention);
        const std::string doc =
            R"({"cuda_built":true,"gpus":[{"index":0,"nvml":)" + nvml.toStdString() + "}]}";
        auto r = parseDeviceReport(doc, "worker");
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QVERIFY(r->gpus.at(0).health);
        QCOMPARE(r->gpus[0].health->needsAttention(), attention);
    }

    void reasonWithoutDevices()
    {
        auto noDriver = parseDeviceReport(
            R"json({"cuda_built":true,"cuda_available":false,"cuda_error":"CUDA: cudaGetDeviceCount: insufficient driver (35)","gpus":[]})json",
            "worker");
        QVERIFY(noDriver.ok());
        // No driver at all (driver version 0): said as such, not as an old driver.
        QCOMPARE(
            noDriver->noDevicesReason(),
            std::string("no NVIDIA driver is installed or loaded on this machine (the CUDA runtime reports "
                        "it as: CUDA: cudaGetDeviceCount: insufficient driver (35))"));
        auto oldDriver = parseDeviceReport(
            R"json({"cuda_built":true,"cuda_available":false,"cuda_driver_version":11040,
                    "cuda_error":"CUDA: cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version (35)","gpus":[]})json",
            "worker");
        QVERIFY(oldDriver.ok());
        QCOMPARE(oldDriver->noDevicesReason(), std::string("CUDA: cudaGetDeviceCount: CUDA driver version is "
                                                           "insufficient for CUDA runtime version (35)"));
        auto none = parseDeviceReport(R"({"cuda_built":true,"cuda_available":true,"gpus":[]})", "worker");
        QVERIFY(none.ok());
        QCOMPARE(none->noDevicesReason(), std::string("the CUDA runtime reports none"));
        auto notBuilt = parseDeviceReport(R"({"cuda_built":false})", "worker");
        QVERIFY(notBuilt.ok());
        QCOMPARE(notBuilt->noDevicesReason(), std::string("faultline-worker has no CUDA target"));
    }

    void malformedDocuments_data()
    {
        QTest::addColumn<QString>("doc");
        QTest::newRow("not json") << "CUDA error";
        QTest::newRow("not an object") << "[1,2]";
        QTest::newRow("gpus not an array") << R"({"gpus":{}})";
        QTest::newRow("gpu not an object") << R"({"gpus":[3]})";
        QTest::newRow("wrong field type") << R"({"gpus":[{"sm_count":"many"}]})";
        QTest::newRow("peer key not text") << R"({"gpus":[{"peer_key":7}]})";
        QTest::newRow("count out of range") << R"({"gpus":[{"memory_bytes":1.8e20}]})";
        QTest::newRow("fractional count") << R"({"gpus":[{"sm_count":1.5}]})";
        QTest::newRow("negative counter") << R"({"gpus":[{"nvml":{"ecc_corrected_volatile":-3}}]})";
        QTest::newRow("int overflow") << R"({"cuda_driver_version":4294967296})";
        QTest::newRow("wrong top-level type") << R"({"cuda_built":"yes"})";
    }

    void malformedDocuments()
    {
        QFETCH(QString, doc);
        auto r = parseDeviceReport(doc.toStdString(), "/usr/bin/faultline-worker");
        QVERIFY(!r.ok());
        QVERIFY2(r.message().rfind("/usr/bin/faultline-worker: malformed device report", 0) == 0,
                 r.message().c_str());
    }

    void formatsGiB()
    {
        QCOMPARE(formatGiB(uint64_t(80) << 30), std::string("80.0 GiB"));
        QCOMPARE(formatGiB(uint64_t(3) << 29), std::string("1.5 GiB"));
        QCOMPARE(formatGiB(0), std::string("0.0 GiB"));
    }
};

QTEST_GUILESS_MAIN(TestDeviceReport)
#include "test_device_report.moc"
