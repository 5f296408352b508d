// File > Export Evidence…: the dialog's trial bundle fills the checklist (present and missing)
// and the report preview; Export writes a bundle that verifies; a refusal is shown, not thrown;
// a campaign where a simulated target failed and the suspect did not blames only the suspect.
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QtTest>

#include "cli/ReplayTrace.h"
#include "core/evidence/BundleVerifier.h"
#include "core/replay/CampaignResultsFile.h"
#include "support/TestSupport.h"
#include "views/EvidenceExportDialog.h"

using faultline::views::EvidenceExportDialog;

class TestEvidenceExportDialog : public QObject {
    Q_OBJECT

    static QString fixture(const QString& name)
    {
        return faultline::test::sourcePath("tests/fixtures/evidence/" + name);
    }
    static QLineEdit* edit(EvidenceExportDialog& d, int index)
    {
        return d.findChildren<QLineEdit*>().at(index);
    }

private slots:
    void previewShowsWhatIsMissingAndExportWrites()
    {
        QTemporaryDir dir;
        EvidenceExportDialog d;
        // Form order: out, campaign, trace, logs, nvidia-smi, attach, key, case id, suspect.
        edit(d, 4)->setText(fixture("nvidia-smi-before-reset.xml") + ";" +
                            fixture("nvidia-smi-after-reset.xml"));
        edit(d, 3)->setText(fixture("dmesg-incident.log"));
        edit(d, 8)->setText("1652822001234");
        QSignalSpy shown(&d, &EvidenceExportDialog::previewShown);
        d.runPreview();
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        QTreeWidget* list = d.checklist();
        QVERIFY(list->topLevelItemCount() >= 5);
        bool bugReportMissing = false, snapshotPresent = false;
        for (int i = 0; i < list->topLevelItemCount(); ++i) {
            const QTreeWidgetItem* it = list->topLevelItem(i);
            if (it->text(0).contains("nvidia-bug-report")) bugReportMissing = it->text(1) == "missing";
            if (it->text(0).contains("before the reset")) snapshotPresent = it->text(1) == "yes";
        }
        QVERIFY(bugReportMissing);
        QVERIFY(snapshotPresent);
        QVERIFY(d.preview()->toPlainText().contains("1652822001234"));

        const QString out = dir.filePath("case-gui");
        edit(d, 0)->setText(out);
        QSignalSpy exported(&d, &EvidenceExportDialog::exported);
        d.runExport();
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, 60000);
        auto check = faultline::verifyBundle(out.toStdString());
        QVERIFY(check);
        QVERIFY2(check->intact(), faultline::bundleCheckText(*check).c_str());
        QVERIFY(QFile::exists(out + ".tar"));
    }

    // Issue 23 through the GUI's export path: sim:flip failed every run, the suspect (cuda:0, tied
    // by the node's inventory given in the dialog) failed none, the log's Xid is another GPU's.
    void previewBlamesOnlyTheSuspect()
    {
        QTemporaryDir dir;
        const QString trace = dir.filePath("trace.h5");
        QCOMPARE(faultline::test::makeReplayTrace(trace), QString());
        using nlohmann::json;
        auto target = [](const char* label, const char* verdict, int failures, json failing) {
            return json{
                {"target", label}, {"description", label}, {"verdict", verdict},    {"explanation", ""},
                {"runs", 8},       {"failures", failures}, {"failing_ops", failing}};
        };
        json ops = json::array();
        for (int i = 0; i < 4; ++i)
            ops.push_back({{"index", i},
                           {"op", "gemm"},
                           {"name", "op"},
                           {"targets",
                            {{"cpu", {{"runs", 2}, {"failures", 0}}},
                             {"sim:flip", {{"runs", 2}, {"failures", 2}}},
                             {"cuda:0", {{"runs", 2}, {"failures", 0}}}}}});
        const json doc = {
            {"trace", trace.toStdString()},
            {"reps", 2},
            {"seed", 1},
            {"targets",
             {target("cpu", "healthy", 0, json::array()), target("sim:flip", "persistent", 8, {0, 1, 2, 3}),
              target("cuda:0", "healthy", 0, json::array())}},
            {"ops", ops}};
        const QString campaign = dir.filePath("results.h5");
        QVERIFY(faultline::writeCampaignResultsJson(campaign.toStdString(), doc));
        const QString inventory = dir.filePath("devices.json");
        QFile inv(inventory);
        QVERIFY(inv.open(QIODevice::WriteOnly));
        inv.write(R"({"cuda_built": true, "cuda_available": true, "gpus": [{"index": 0, "name": "H200",
                  "uuid": "GPU-9c3b0f17-0000-4000-8000-000000000001", "pci_bus_id": "0000:2a:00.0"}]})");
        inv.close();
        const QString log = dir.filePath("dmesg.log");
        QFile l(log);
        QVERIFY(l.open(QIODevice::WriteOnly));
        l.write(
            "[ 4102.118003] NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=python3, GPU has fallen off the "
            "bus.\n");
        l.close();

        EvidenceExportDialog d;
        // Form order: out, campaign, trace, logs, nvidia-smi, attach, key, case id, suspect, inventory.
        edit(d, 1)->setText(campaign);
        edit(d, 3)->setText(log);
        edit(d, 8)->setText("GPU-9c3b0f17-0000-4000-8000-000000000001");
        edit(d, 9)->setText(inventory);
        QSignalSpy shown(&d, &EvidenceExportDialog::previewShown);
        d.runPreview();
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        const QString report = d.preview()->toPlainText();
        const qsizetype reasons = report.indexOf("No candidate RMA reason");
        QVERIFY2(reasons >= 0, qPrintable(report));
        const qsizetype context = report.indexOf("context only");
        QVERIFY2(context > reasons, qPrintable(report));
        QVERIFY2(!report.left(context).contains("sim:flip"), qPrintable(report));
        QVERIFY2(report.contains("cuda:0 failed none of 8 runs"), qPrintable(report));
        QVERIFY2(report.contains("is the suspect GPU's (bus 0000:18:00.0"), qPrintable(report));
        QVERIFY(report.contains("the suspect GPU"));
    }

    void refusalIsShown()
    {
        EvidenceExportDialog d;
        QSignalSpy failed(&d, &EvidenceExportDialog::failed);
        d.runPreview();  // nothing given
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
        QVERIFY(d.status()->text().contains("nothing to export"));
    }
};

QTEST_MAIN(TestEvidenceExportDialog)
#include "test_evidence_export_dialog.moc"
