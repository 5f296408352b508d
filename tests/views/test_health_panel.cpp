// The devices panel's health section (views/HealthPanel): each GPU's recommendation, flags and
// decoded Xid timeline from kernel logs and nvidia-smi XML read off the GUI thread, the live
// inventory's NVML counters merged in, errors naming the file and line, stale loads dropped.
#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest>

#include "support/TestSupport.h"
#include "views/fleet/HealthPanel.h"
#include "views/replay/DevicesPanel.h"

using namespace faultline;
using namespace faultline::views;

namespace {

QString fixture(const QString& name)
{
    return test::sourcePath(QStringLiteral("tests/fixtures/health/") + name);
}

int rowOf(QTableWidget* t, const QString& bus)
{
    for (int r = 0; r < t->rowCount(); ++r)
        if (t->item(r, HealthPanel::GpuBusId)->text() == bus) return r;
    return -1;
}

}  // namespace

class TestHealthPanel : public QObject {
    Q_OBJECT

private slots:
    void showsFlagsRecommendationAndTimeline()
    {
        HealthPanel panel;
        QSignalSpy shown(&panel, &HealthPanel::reportShown);
        panel.loadFilesOnWorker({fixture("dmesg-stamps.log")}, {fixture("nvidia-smi-v13.xml")});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        QTableWidget* gpus = panel.gpuTable();
        QCOMPARE(gpus->rowCount(), 2);
        const int h100 = rowOf(gpus, "0000:86:00.0");
        QVERIFY(h100 >= 0);
        QCOMPARE(gpus->item(h100, HealthPanel::GpuProduct)->text(), QString("NVIDIA H100 80GB HBM3"));
        QCOMPARE(gpus->item(h100, HealthPanel::GpuRecommendation)->text(), QString("RMA candidate"));
        QVERIFY(
            gpus->item(h100, HealthPanel::GpuRecommendation)->toolTip().contains("row-remapping failure"));
        QVERIFY(gpus->item(h100, HealthPanel::GpuFlags)->text().contains("row remap failure"));
        QVERIFY(gpus->item(h100, HealthPanel::GpuFlags)->text().contains("SRAM threshold exceeded"));
        QCOMPARE(gpus->item(h100, HealthPanel::GpuXids)->text(), QString("64, 74, 94 ×2, 95"));
        panel.selectGpu(h100);
        QTableWidget* events = panel.eventTable();
        QCOMPARE(events->rowCount(), 5);
        QCOMPARE(events->item(0, HealthPanel::EventXid)->text(), QString("94"));
        QCOMPARE(events->item(0, HealthPanel::EventProcess)->text(), QString("python3 (7194)"));
        QCOMPARE(events->item(3, HealthPanel::EventXid)->text(), QString("74"));
        QVERIFY(events->item(3, HealthPanel::EventDecoded)->text().contains("link = 14"));
        QCOMPARE(events->item(3, HealthPanel::EventAction)->text(), QString("WORKFLOW_NVLINK_ERR"));

        const int a = rowOf(gpus, "0000:3b:00.0");
        QVERIFY(a >= 0);
        QCOMPARE(gpus->item(a, HealthPanel::GpuFlags)->text(), QString("n/a (no snapshot)"));
        panel.selectGpu(a);
        QCOMPARE(events->rowCount(), 8);
        bool unknownShown = false;
        for (int r = 0; r < events->rowCount(); ++r)
            if (events->item(r, HealthPanel::EventXid)->text() == "999")
                unknownShown = events->item(r, HealthPanel::EventName)->text() == "unknown";
        QVERIFY(unknownShown);
    }

    void errorNamesFileAndLine()
    {
        HealthPanel panel;
        QSignalSpy shown(&panel, &HealthPanel::reportShown);
        panel.loadFilesOnWorker({fixture("malformed-xid.log")}, {});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        QVERIFY2(panel.summaryText().contains("malformed-xid.log:3: malformed Xid line"),
                 qPrintable(panel.summaryText()));
    }

    void aNewerLoadSupersedesAnOlderOne()
    {
        HealthPanel panel;
        QSignalSpy shown(&panel, &HealthPanel::reportShown);
        panel.loadFilesOnWorker({fixture("dmesg-stamps.log")}, {});
        panel.loadFilesOnWorker({}, {fixture("nvidia-smi-v12.xml")});
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        QTest::qWait(200);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(panel.gpuTable()->rowCount(), 2);
        QVERIFY(rowOf(panel.gpuTable(), "0000:18:00.0") >= 0);
        QCOMPARE(rowOf(panel.gpuTable(), "0000:3b:00.0"), -1);
    }

    void devicesPanelPassesTheLiveInventory()
    {
        DevicesPanel devices;
        HealthPanel* health = devices.healthPanel();
        QVERIFY(health);
        QSignalSpy shown(health, &HealthPanel::reportShown);
        devices.showInventoryJson(R"({"cuda_built":true,"cuda_available":true,"gpus":[
            {"index":0,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-aaaa","pci_bus_id":"00000000:3B:00.0",
             "nvml":{"serial":"1650","remap_pending":false,"remap_failure":true}}]})",
                                  "worker");
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10000);
        QTableWidget* gpus = health->gpuTable();
        QCOMPARE(gpus->rowCount(), 1);
        QCOMPARE(gpus->item(0, HealthPanel::GpuBusId)->text(), QString("0000:3b:00.0"));
        QCOMPARE(gpus->item(0, HealthPanel::GpuSerial)->text(), QString("1650"));
        QCOMPARE(gpus->item(0, HealthPanel::GpuRecommendation)->text(), QString("RMA candidate"));
    }
};

QTEST_MAIN(TestHealthPanel)
#include "test_health_panel.moc"
