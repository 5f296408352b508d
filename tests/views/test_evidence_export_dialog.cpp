// File > Export Evidence…: the dialog's trial bundle fills the checklist (present and missing)
// and the report preview; Export writes a bundle that verifies; a refusal is shown, not thrown.
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QtTest>

#include "core/evidence/BundleVerifier.h"
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
