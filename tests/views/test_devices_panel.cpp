// The devices panel's local inventory on the offscreen platform: a worker document with two
// GPUs fills the table cell by cell, a machine without devices says why in plain words, a
// missing, failing or hanging worker is reported in the panel (never a dialog), and the real
// faultline-worker answers with either devices or the reason.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "support/TestSupport.h"
#include "views/plots/PlotStyle.h"
#include "views/replay/DevicesPanel.h"
#include "views/replay/ReplayPanel.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;

namespace {

// Two H100s as faultline-worker --devices-json reports them (kernels/DeviceInventory.cpp's
// field names): the first healthy, the second with uncorrected ECC errors, an uncorrectable
// remapped row pending, and NVML unable to read its temperature and power.
const char* const kTwoGpus = R"({
  "cuda_built": true, "cuda_available": true, "cuda_driver_version": 12040, "cuda_runtime_version": 13000,
  "nvml_available": true, "driver_version": "550.54.15",
  "gpus": [
    {"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-0a1b2c3d-0000-1111-2222-333344445555",
     "pci_bus_id": "00000000:18:00.0", "compute_capability": "9.0", "sm_count": 132,
     "memory_bytes": 85899345920, "clock_khz": 1980000, "memory_clock_khz": 2619000, "ecc_enabled": true,
     "peer_key": "NVIDIA H100 80GB HBM3, 132 SMs, sm_90, driver 12040, runtime 13000, cuBLAS 130100",
     "nvml": {"serial": "1650123456789", "board_part_number": "692-2G520-0200-000",
              "vbios_version": "96.00.30.00.01", "inforom_image_version": "G520.0200.00.05",
              "ecc_corrected_volatile": 0, "ecc_uncorrected_volatile": 0,
              "ecc_corrected_aggregate": 3, "ecc_uncorrected_aggregate": 0,
              "remapped_rows_correctable": 1, "remapped_rows_uncorrectable": 0,
              "remap_pending": false, "remap_failure": false, "temperature_c": 34, "power_w": 71.5}},
    {"index": 1, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff",
     "pci_bus_id": "00000000:2A:00.0", "compute_capability": "9.0", "sm_count": 132,
     "memory_bytes": 42949672960, "clock_khz": 0, "memory_clock_khz": 0, "ecc_enabled": false,
     "peer_key": "NVIDIA H100 80GB HBM3, 132 SMs, sm_90, driver 12040, runtime 13000, cuBLAS 130100",
     "nvml": {"serial": "1650987654321", "board_part_number": "", "vbios_version": "", "inforom_image_version": "",
              "ecc_corrected_volatile": 12, "ecc_uncorrected_volatile": 2,
              "ecc_corrected_aggregate": 40, "ecc_uncorrected_aggregate": 5,
              "remapped_rows_correctable": 0, "remapped_rows_uncorrectable": 1,
              "remap_pending": true, "remap_failure": false,
              "errors": ["nvmlDeviceGetTemperature: Not Supported", "nvmlDeviceGetPowerUsage: Not Supported"]}}
  ]})";

// What the worker prints on a machine whose driver is missing or older than the runtime.
const char* const kNoDriver =
    R"json({"cuda_built":true,"cuda_available":false,"cuda_error":"CUDA: cudaGetDeviceCount: CUDA driver version is )json"
    R"json(insufficient for CUDA runtime version (cudaErrorInsufficientDriver 35)","cuda_driver_version":0,)json"
    R"json("cuda_runtime_version":13000,"nvml_available":false,"nvml_error":"no NVML: dlopen libnvidia-ml.so.1: )json"
    R"json(cannot open shared object file","gpus":[]})json";

}  // namespace

class TestDevicesPanel : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    static QString cell(const QTableWidget* t, int row, int column)
    {
        const QTableWidgetItem* item = t->item(row, column);
        return item ? item->text() : QStringLiteral("<no item>");
    }

private slots:
    void showsTwoDevicesCellByCell()
    {
        DevicesPanel panel;
        QSignalSpy shown(&panel, &DevicesPanel::inventoryShown);
        panel.showInventoryJson(kTwoGpus, "faultline-worker");
        QCOMPARE(shown.count(), 1);
        const QTableWidget* t = panel.localDevices();
        QCOMPARE(t->rowCount(), 2);
        QVERIFY(!t->isHidden());
        QCOMPARE(cell(t, 0, DevicesPanel::GpuIndex), QString("cuda:0"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuIndex), QString("cuda:1"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuName), QString("NVIDIA H100 80GB HBM3"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuUuid), QString("GPU-0a1b2c3d-0000-1111-2222-333344445555"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuPciBusId), QString("00000000:2A:00.0"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuCompute), QString("9.0"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuSms), QString("132"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuMemory), QString("80.0 GiB"));  // 80 * 2^30 bytes
        QCOMPARE(cell(t, 1, DevicesPanel::GpuMemory), QString("40.0 GiB"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuClocks), QString("1980 / 2619"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuClocks), QString("n/a / n/a"));  // not reported
        QCOMPARE(cell(t, 0, DevicesPanel::GpuEcc), QString("on"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuEcc), QString("off"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuEccErrors), QString("vol. 0 / 0, agg. 3 / 0"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuEccErrors), QString("vol. 12 / 2, agg. 40 / 5"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuRemapped), QString("1 / 0"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuRemapped), QString("0 / 1, pending"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuTemperature), QString("34 °C"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuPower), QString("71.5 W"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuTemperature), QString("n/a"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuPower), QString("n/a"));
        QCOMPARE(cell(t, 0, DevicesPanel::GpuSerial), QString("1650123456789"));
        QVERIFY(cell(t, 1, DevicesPanel::GpuNotes).contains("nvmlDeviceGetPowerUsage: Not Supported"));
        // Same model, SMs and libraries: each is the other's peer, the key in the tooltip.
        QCOMPARE(cell(t, 0, DevicesPanel::GpuPeers), QString("cuda:1"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuPeers), QString("cuda:0"));
        QVERIFY(t->item(0, DevicesPanel::GpuPeers)->toolTip().startsWith("NVIDIA H100 80GB HBM3, 132 SMs"));
        // The failing memory stands out; the healthy device does not.
        QCOMPARE(t->item(1, DevicesPanel::GpuEccErrors)->foreground().color(), PlotStyle::divergentColor());
        QVERIFY(t->item(0, DevicesPanel::GpuEccErrors)->foreground().color() != PlotStyle::divergentColor());
        const QString summary = panel.inventoryText();
        QVERIFY2(summary.contains("2 GPUs") && summary.contains("CUDA runtime 13.0") &&
                     summary.contains("driver API 12.4") && summary.contains("550.54.15"),
                 qPrintable(summary));
    }

    void peersNeedTheSameKey()
    {
        DevicesPanel panel;
        panel.showInventoryJson(
            R"({"cuda_built":true,"cuda_available":true,"gpus":[{"index":0,"peer_key":"A"},
            {"index":1,"peer_key":"B"},{"index":2,"peer_key":"A"},{"index":3}]})",
            "w");
        const QTableWidget* t = panel.localDevices();
        QCOMPARE(t->rowCount(), 4);
        QCOMPARE(cell(t, 0, DevicesPanel::GpuPeers), QString("cuda:2"));
        QCOMPARE(cell(t, 1, DevicesPanel::GpuPeers), QString("none"));
        QCOMPARE(cell(t, 2, DevicesPanel::GpuPeers), QString("cuda:0"));
        QCOMPARE(cell(t, 3, DevicesPanel::GpuPeers), QString("unknown"));  // an older worker
    }

    void saysWhyThereAreNoDevices()
    {
        DevicesPanel panel;
        panel.showInventoryJson(kTwoGpus, "faultline-worker");
        panel.showInventoryJson(kNoDriver, "faultline-worker");  // a refresh replaces the rows
        QCOMPARE(panel.localDevices()->rowCount(), 0);
        QVERIFY(panel.localDevices()->isHidden());
        const QString text = panel.inventoryText();
        QVERIFY2(text.contains("No CUDA devices"), qPrintable(text));
        QVERIFY2(text.contains("cudaErrorInsufficientDriver 35"), qPrintable(text));
        // Driver version 0: there is no driver at all, and the panel says so.
        QVERIFY2(text.contains("no NVIDIA driver is installed or loaded"), qPrintable(text));
        QVERIFY2(!text.contains("No device inventory"), qPrintable(text));  // a reason, not an error

        panel.showInventoryJson(R"({"cuda_built":false,"cuda_available":false,"gpus":[]})",
                                "faultline-worker");
        QVERIFY2(panel.inventoryText().contains("no CUDA target"), qPrintable(panel.inventoryText()));
    }

    void malformedDocumentIsAnErrorNamingTheWorker()
    {
        DevicesPanel panel;
        panel.showInventoryJson("cudaGetDeviceCount failed", "/opt/faultline/bin/faultline-worker");
        QVERIFY2(
            panel.inventoryText().contains("/opt/faultline/bin/faultline-worker: malformed device report"),
            qPrintable(panel.inventoryText()));
        panel.showInventoryJson(R"({"gpus":[{"index":0,"sm_count":"many"}]})", "w");
        QVERIFY2(panel.inventoryText().contains("w: malformed device report"),
                 qPrintable(panel.inventoryText()));
        QCOMPARE(panel.localDevices()->rowCount(), 0);
    }

    void missingWorkerIsReportedInThePanel()
    {
        DevicesPanel panel;
        panel.setWorkerProgram(m_dir.filePath("no-such-faultline-worker"));
        QSignalSpy shown(&panel, &DevicesPanel::inventoryShown);
        panel.refreshInventory();
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        QVERIFY2(panel.inventoryText().contains("could not run") &&
                     panel.inventoryText().contains("no-such-faultline-worker"),
                 qPrintable(panel.inventoryText()));
        QVERIFY(!panel.isQuerying());
        QVERIFY(panel.findChild<QPushButton*>("devicesRefresh")->isEnabled());
    }

    void hangingWorkerTimesOutWithoutBlocking()
    {
        const QString script = m_dir.filePath("hanging-worker.sh");
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("#!/bin/sh\nexec sleep 30\n");
        f.close();
        QVERIFY(f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        DevicesPanel panel;
        panel.setWorkerProgram(script);
        panel.setTimeoutMs(300);
        QSignalSpy shown(&panel, &DevicesPanel::inventoryShown);
        panel.refreshInventory();
        // refreshInventory returned while the worker still runs: the GUI thread was not held.
        QVERIFY(panel.isQuerying());
        QVERIFY(!panel.findChild<QPushButton*>("devicesRefresh")->isEnabled());
        QCOMPARE(shown.count(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        QVERIFY2(panel.inventoryText().contains("did not answer"), qPrintable(panel.inventoryText()));
        QVERIFY(!panel.isQuerying());
    }

    void failingWorkerShowsItsStderr()
    {
        const QString script = m_dir.filePath("failing-worker.sh");
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("#!/bin/sh\necho 'libcudart.so.13: cannot open shared object file' >&2\nexit 127\n");
        f.close();
        QVERIFY(f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        DevicesPanel panel;
        panel.setWorkerProgram(script);
        QSignalSpy shown(&panel, &DevicesPanel::inventoryShown);
        panel.refreshInventory();
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        const QString text = panel.inventoryText();
        QVERIFY2(text.contains("exited with code 127") && text.contains("libcudart.so.13"), qPrintable(text));
    }

    void realWorkerAnswersWithDevicesOrTheReason()
    {
        // What the worker says, read independently of the panel's parser.
        const auto direct = test::runProcess(QStringLiteral(FAULTLINE_WORKER_EXE), {"--devices-json"}, 30000);
        QVERIFY2(direct.exitCode == 0, direct.err.constData());
        const QJsonObject doc = QJsonDocument::fromJson(direct.out).object();
        const QJsonArray gpus = doc.value("gpus").toArray();

        DevicesPanel panel;
        panel.setWorkerProgram(QStringLiteral(FAULTLINE_WORKER_EXE));
        QSignalSpy shown(&panel, &DevicesPanel::inventoryShown);
        panel.show();  // the first show asks the worker
        QVERIFY(panel.isQuerying() || shown.count() == 1);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 15000);
        const QString text = panel.inventoryText();
        QVERIFY2(!text.contains("No device inventory"), qPrintable(text));
        QCOMPARE(panel.localDevices()->rowCount(), int(gpus.size()));
        if (gpus.isEmpty()) {
            QVERIFY2(text.contains("No CUDA devices"), qPrintable(text));
            const QString reason = doc.value("cuda_error").toString();
            if (!reason.isEmpty())
                QVERIFY2(text.contains(reason.toHtmlEscaped()), qPrintable(text + " / " + reason));
        } else {
            for (int i = 0; i < int(gpus.size()); ++i)
                QCOMPARE(cell(panel.localDevices(), i, DevicesPanel::GpuUuid),
                         gpus[i].toObject().value("uuid").toString());
        }

        // Refresh asks again and shows the same.
        panel.findChild<QPushButton*>("devicesRefresh")->click();
        QVERIFY(panel.isQuerying());
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 15000);
        QCOMPARE(panel.localDevices()->rowCount(), int(gpus.size()));
    }

    // The inventory's GPUs become replay targets (unchecked), in the real window's wiring; a
    // GPU the user checked survives a refresh; no GPUs leaves only the note.
    void localGpusBecomeReplayTargets()
    {
        MainWindow window;
        ReplayPanel* replay = window.replayPanel();
        QVERIFY(!replay->availableTargets().contains(QStringLiteral("cuda:0")));
        window.devicesPanel()->showInventoryJson(kTwoGpus, "faultline-worker");
        QStringList targets = replay->availableTargets();
        QVERIFY2(targets.contains(QStringLiteral("cuda:0")) && targets.contains(QStringLiteral("cuda:1")),
                 qPrintable(targets.join(',')));
        QVERIFY(!replay->checkedTargets().contains(QStringLiteral("cuda:0")));
        QVERIFY(replay->setCheckedTargets({QStringLiteral("cpu"), QStringLiteral("cuda:1")}));
        window.devicesPanel()->showInventoryJson(kTwoGpus, "faultline-worker");
        QCOMPARE(replay->availableTargets().count(QStringLiteral("cuda:1")), 1);
        QVERIFY(replay->checkedTargets().contains(QStringLiteral("cuda:1")));
        window.devicesPanel()->showInventoryJson(kNoDriver, "faultline-worker");
        targets = replay->availableTargets();
        QVERIFY(!targets.contains(QStringLiteral("cuda:0")));
        QVERIFY(targets.contains(QStringLiteral("cuda:1")));  // checked by the user: kept
    }
};

QTEST_MAIN(TestDevicesPanel)
#include "test_devices_panel.moc"
