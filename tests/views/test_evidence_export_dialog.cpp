// File > Export Evidence…, driven with real key and mouse events on the offscreen platform: the
// files going into the bundle are lists (Delete removes a selected one); the kernel logs and
// nvidia-smi files loaded in the Health panel are carried over into them; Generate writes a
// key pair (core's createMinisignKeyPair, as `faultline keygen`) that signs the bundle; the
// trial bundle fills the checklist (present and missing), the report preview and the list of
// the bundle's files; Export writes a bundle that verifies; a refusal is shown, not thrown; a
// campaign where a simulated target failed and the suspect did not blames only the suspect.
// The longest GUI-thread stall while the bundles are built is printed (bench/RESULTS.md) and
// fails the test only when gross (StallProbe::kGrossStallMs).
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTreeWidget>
#include <QtTest>

#include "cli/ReplayTrace.h"
#include "core/evidence/BundleVerifier.h"
#include "core/ledger/Ledger.h"
#include "core/replay/CampaignResultsFile.h"
#include "core/test_ledger_support.h"
#include "support/StallProbe.h"
#include "support/TestSupport.h"
#include "views/evidence/EvidenceExportDialog.h"
#include "views/evidence/FileListEditor.h"
#include "views/evidence/ReportFonts.h"
#include "views/fleet/HealthPanel.h"
#include "views/replay/DevicesPanel.h"
#include "views/shell/MainWindow.h"

using faultline::test::StallProbe;
using faultline::views::EvidenceExportDialog;
using faultline::views::FileListEditor;

class TestEvidenceExportDialog : public QObject {
    Q_OBJECT

    static QString fixture(const QString& name)
    {
        return faultline::test::sourcePath("tests/fixtures/evidence/" + name);
    }
    static QLineEdit* edit(EvidenceExportDialog& d, const char* name)
    {
        auto* e = d.findChild<QLineEdit*>(QString::fromLatin1(name));
        if (!e) qFatal("no line edit %s", name);
        return e;
    }
    static QPushButton* button(EvidenceExportDialog& d, const char* name)
    {
        auto* b = d.findChild<QPushButton*>(QString::fromLatin1(name));
        if (!b) qFatal("no button %s", name);
        return b;
    }
    // Types `text` into the field as a user would: click, select all, type.
    static void type(QLineEdit* e, const QString& text)
    {
        QTest::mouseClick(e, Qt::LeftButton);
        QTest::keyClick(e, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClick(e, Qt::Key_Delete);
        QTest::keyClicks(e, text);
    }
    static void click(QPushButton* b) { QTest::mouseClick(b, Qt::LeftButton); }
    static QStringList column(const QTreeWidget* tree, int col)
    {
        QStringList out;
        for (int i = 0; i < tree->topLevelItemCount(); ++i) out << tree->topLevelItem(i)->text(col);
        return out;
    }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("FaultlineTests");
        QCoreApplication::setApplicationName("test_evidence_export_dialog");
    }

    void previewShowsWhatIsMissingAndExportWrites()
    {
        QTemporaryDir dir;
        EvidenceExportDialog d;
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        d.nvidiaSmi()->addPaths(
            {fixture("nvidia-smi-before-reset.xml"), fixture("nvidia-smi-after-reset.xml")});
        d.logs()->addPaths({fixture("dmesg-incident.log")});
        type(edit(d, "evidenceSuspect"), "1652822001234");
        StallProbe probe(QStringLiteral("export evidence (preview, export)"));
        probe.step(QStringLiteral("preview"));
        QSignalSpy shown(&d, &EvidenceExportDialog::previewShown);
        click(button(d, "evidencePreviewButton"));
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
        // The bundle's files: the vendor's files byte-identical under their folders, the report, the
        // manifest.
        const QStringList files = column(d.bundleFiles(), 0);
        QVERIFY2(files.contains("health/nvidia-smi/01-nvidia-smi-before-reset.xml") ||
                     files.filter("nvidia-smi-before-reset.xml").size() == 1,
                 qPrintable(files.join(", ")));
        QVERIFY2(files.filter("dmesg-incident.log").size() == 1, qPrintable(files.join(", ")));
        QVERIFY2(files.contains("report.md") && files.contains("MANIFEST.sha256"),
                 qPrintable(files.join(", ")));
        QVERIFY(d.status()->text().contains(QStringLiteral("%1 files").arg(files.size())));
        // The trial bundle skips the PDF (drawn on Export only; it stalled the window while drawn).
        QVERIFY2(!files.contains("report.pdf"), qPrintable(files.join(", ")));
        QVERIFY(d.status()->text().contains("report.pdf"));
        QVERIFY2(d.preview()->toPlainText().contains("drawn when the bundle is exported") &&
                     !d.preview()->toPlainText().contains("built without the GUI"),
                 qPrintable(d.preview()->toPlainText()));

        const QString out = dir.filePath("case-gui");
        type(edit(d, "evidenceOut"), out);
        probe.step(QStringLiteral("export"));
        QSignalSpy exported(&d, &EvidenceExportDialog::exported);
        click(button(d, "evidenceExportButton"));
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, 60000);
        qInfo("%s", qPrintable(probe.summary()));
        QVERIFY2(probe.longest() < StallProbe::kGrossStallMs, qPrintable(probe.summary()));
        auto check = faultline::verifyBundle(out.toStdString());
        QVERIFY(check);
        QVERIFY2(check->intact(), faultline::bundleCheckText(*check).c_str());
        QVERIFY(QFile::exists(out + ".tar"));
        QVERIFY(QFile::exists(out + "/report.pdf"));  // the real bundle has it
    }

    void listsTakeDropsAndDeleteRemoves()
    {
        EvidenceExportDialog d;
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        FileListEditor* logs = d.logs();
        logs->addPaths({fixture("dmesg-incident.log"), fixture("nvidia-bug-report.log.gz")});
        logs->addPaths({fixture("dmesg-incident.log")});  // listed once
        QCOMPARE(logs->paths().size(), 2);
        QCOMPARE(d.options().logs.size(), size_t(2));
        // Select the first row with the mouse, Delete removes it.
        QListWidget* list = logs->list();
        const QRect first = list->visualItemRect(list->item(0));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, first.center());
        QVERIFY(logs->removeButton()->isEnabled());
        QTest::keyClick(list, Qt::Key_Delete);
        QCOMPARE(logs->paths(), QStringList{fixture("nvidia-bug-report.log.gz")});
        // A file dropped on the list is added.
        auto* mime = new QMimeData;
        mime->setUrls({QUrl::fromLocalFile(fixture("fieldiag-result.txt"))});
        const QPoint at = list->viewport()->rect().center();
        QDragEnterEvent enter(at, Qt::CopyAction, mime, Qt::LeftButton, {});
        QApplication::sendEvent(d.attachments()->list()->viewport(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(at, Qt::CopyAction, mime, Qt::LeftButton, {});
        QApplication::sendEvent(d.attachments()->list()->viewport(), &drop);
        delete mime;
        QCOMPARE(d.attachments()->paths(), QStringList{fixture("fieldiag-result.txt")});
        QCOMPARE(d.options().attachments,
                 std::vector<std::string>{fixture("fieldiag-result.txt").toStdString()});
    }

    void generatedKeySignsTheBundle()
    {
        QTemporaryDir dir;
        EvidenceExportDialog d;
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        const QString key = dir.filePath("rma.key");
        type(edit(d, "evidenceKey"), key);
        QSignalSpy generated(&d, &EvidenceExportDialog::keyGenerated);
        click(button(d, "evidenceGenerateKey"));
        QCOMPARE(generated.count(), 1);
        QVERIFY(QFile::exists(key) && QFile::exists(key + ".pub"));
        QCOMPARE(QFile::permissions(key) & (QFile::ReadGroup | QFile::ReadOther), QFile::Permissions());
        QVERIFY2(d.status()->text().contains("key id"), qPrintable(d.status()->text()));
        // A second press refuses to overwrite the key, and says so.
        QSignalSpy failed(&d, &EvidenceExportDialog::failed);
        click(button(d, "evidenceGenerateKey"));
        QCOMPARE(generated.count(), 1);
        QCOMPARE(failed.count(), 1);
        QVERIFY2(d.status()->text().contains("already exists"), qPrintable(d.status()->text()));

        d.nvidiaSmi()->addPaths({fixture("nvidia-smi-before-reset.xml")});
        type(edit(d, "evidenceSuspect"), "1652822001234");
        const QString out = dir.filePath("signed");
        type(edit(d, "evidenceOut"), out);
        QSignalSpy exported(&d, &EvidenceExportDialog::exported);
        click(button(d, "evidenceExportButton"));
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, 60000);
        bool signedPresent = false;
        for (int i = 0; i < d.checklist()->topLevelItemCount(); ++i) {
            const QTreeWidgetItem* it = d.checklist()->topLevelItem(i);
            if (it->text(0).startsWith("signature")) signedPresent = it->text(1) == "yes";
        }
        QVERIFY(signedPresent);
        auto check = faultline::verifyBundle(out.toStdString(), (key + ".pub").toStdString());
        QVERIFY(check);
        QVERIFY2(check->intact(), faultline::bundleCheckText(*check).c_str());
    }

    // The Health panel's files go into the dialog that File > Export Evidence… opens.
    void healthPanelFilesAreCarriedOver()
    {
        faultline::views::MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        faultline::views::HealthPanel* health = w.devicesPanel()->healthPanel();
        QSignalSpy reported(health, &faultline::views::HealthPanel::reportShown);
        health->loadFilesOnWorker({fixture("dmesg-incident.log")}, {fixture("nvidia-smi-before-reset.xml")});
        QTRY_COMPARE_WITH_TIMEOUT(reported.count(), 1, 30000);
        QAction* exportAction = nullptr;
        for (QAction* a : w.menuBar()->actions().front()->menu()->actions())
            if (a->text().remove('&').startsWith("Export Evidence")) exportAction = a;
        QVERIFY(exportAction);
        QStringList logs, smi;
        QString note;
        QTimer::singleShot(0, this, [&] {
            auto* d = qobject_cast<EvidenceExportDialog*>(QApplication::activeModalWidget());
            if (!d) return;
            logs = d->logs()->paths();
            smi = d->nvidiaSmi()->paths();
            note = d->logs()->list()->item(0)->text();
            d->reject();
        });
        exportAction->trigger();
        QCOMPARE(logs, QStringList{fixture("dmesg-incident.log")});
        QCOMPARE(smi, QStringList{fixture("nvidia-smi-before-reset.xml")});
        QVERIFY2(note.contains("Health panel"), qPrintable(note));
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
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        type(edit(d, "evidenceCampaign"), campaign);
        d.logs()->addPaths({log});
        type(edit(d, "evidenceSuspect"), "GPU-9c3b0f17-0000-4000-8000-000000000001");
        type(edit(d, "evidenceInventory"), inventory);
        QSignalSpy shown(&d, &EvidenceExportDialog::previewShown);
        click(button(d, "evidencePreviewButton"));
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

    // With FAULTLINE_DOC_SCREENSHOTS=DIR: the dialog after a preview, as docs/evidence-export.md shows it.
    void screenshot()
    {
        const QString out = qEnvironmentVariable("FAULTLINE_DOC_SCREENSHOTS");
        if (out.isEmpty()) QSKIP("FAULTLINE_DOC_SCREENSHOTS is not set");
        QTemporaryDir dir;
        EvidenceExportDialog d;
        d.resize(1100, 950);
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        d.setHealthFiles({fixture("dmesg-incident.log")}, {fixture("nvidia-smi-before-reset.xml")});
        d.nvidiaSmi()->addPaths({fixture("nvidia-smi-after-reset.xml")});
        d.attachments()->addPaths({fixture("fieldiag-result.txt")});
        type(edit(d, "evidenceKey"), dir.filePath("rma.key"));
        click(button(d, "evidenceGenerateKey"));
        type(edit(d, "evidenceSuspect"), "1652822001234");
        type(edit(d, "evidenceCaseId"), "CASE-4711");
        type(edit(d, "evidenceOut"), dir.filePath("case-4711"));
        QSignalSpy shown(&d, &EvidenceExportDialog::previewShown);
        click(button(d, "evidencePreviewButton"));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        QTest::qWait(300);
        QVERIFY(d.grab().save(out + "/screenshot-evidence-export.png"));
    }

    // The preview's fonts are met before its first layout: the report's headings, bold and code
    // fonts are each listed once.
    void reportFontsAreListedOnce()
    {
        QTextDocument doc;
        doc.setMarkdown(
            QStringLiteral("# Case\n\nplain **bold** `code` plain\n\n## Part\n\nplain **bold**\n"));
        const QList<QFont> fonts = faultline::views::documentFonts(doc);
        QSet<QString> keys;
        for (const QFont& f : fonts) keys.insert(f.key());
        QCOMPARE(qsizetype(keys.size()), fonts.size());  // each once
        const QFont base = doc.defaultFont();
        bool bold = false, heading = false, fixed = false;
        for (const QFont& f : fonts) {
            const QFont& r = f;
            bold = bold || (r.bold() && r.pointSizeF() == base.pointSizeF());
            heading = heading || r.pointSizeF() > base.pointSizeF();
            fixed = fixed || r.fixedPitch() || r.families().contains(QStringLiteral("monospace")) ||
                    r.styleHint() == QFont::TypeWriter || r.styleHint() == QFont::Monospace;
        }
        QVERIFY(bold);
        QVERIFY(heading);
        QVERIFY(fixed);
        faultline::views::meetFontOnUi(
            fonts.front().resolve(base));  // loads the engine; must not crash off a widget
    }

    // With "Device history from the ledger" the bundle carries the suspect's history as
    // `evidence --ledger` writes it (case.json ledger_history, the report's Device history); a
    // ledger that does not exist is refused by name and nothing is created.
    void bundleCarriesTheLedgerHistory()
    {
        QTemporaryDir dir;
        const QString ledgerPath = dir.filePath("fleet.sqlite");
        {
            auto ledger = faultline::Ledger::open(ledgerPath.toStdString());
            QVERIFY2(ledger, ledger ? "" : ledger.message().c_str());
            QVERIFY(ledger
                        ->addCampaign({faultline::test::campaignReport("node7", "1652822001234", "GPU-77",
                                                                       "persistent", 40),
                                       "a.h5", std::string("2026-03-12T00:00:00Z")},
                                      {"node7", "a.h5"})
                        .ok());
        }
        EvidenceExportDialog d;
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        d.logs()->addPaths({fixture("dmesg-incident.log")});
        d.nvidiaSmi()->addPaths({fixture("nvidia-smi-before-reset.xml")});
        type(edit(d, "evidenceSuspect"), "1652822001234");
        d.historyInBundle()->setChecked(true);
        type(d.ledger(), ledgerPath);
        const QString out = dir.filePath("case-ledger");
        type(edit(d, "evidenceOut"), out);
        QSignalSpy exported(&d, &EvidenceExportDialog::exported);
        click(button(d, "evidenceExportButton"));
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, 60000);
        QFile caseFile(out + "/case.json");
        QVERIFY(caseFile.open(QIODevice::ReadOnly));
        const auto caseJson = nlohmann::json::parse(caseFile.readAll().toStdString());
        const auto& history = caseJson.at("ledger_history");
        QVERIFY2(history.value("found", false), history.dump().c_str());
        QCOMPARE(history.at("campaigns").size(), size_t(1));
        QVERIFY(d.preview()->toPlainText().contains("Device history"));
        QVERIFY2(d.preview()->toPlainText().contains("node7"), qPrintable(d.preview()->toPlainText()));

        // A ledger that does not exist: refused, named, not created.
        const QString missing = dir.filePath("none.sqlite");
        type(d.ledger(), missing);
        QSignalSpy failed(&d, &EvidenceExportDialog::failed);
        click(button(d, "evidencePreviewButton"));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
        QVERIFY2(d.status()->text().contains("none.sqlite"), qPrintable(d.status()->text()));
        QVERIFY(!QFile::exists(missing));

        // Unchecked: no history in the bundle.
        d.historyInBundle()->setChecked(false);
        QSignalSpy shown(&d, &EvidenceExportDialog::previewShown);
        click(button(d, "evidencePreviewButton"));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        QVERIFY(!d.preview()->toPlainText().contains("Device history"));
    }

    void refusalIsShown()
    {
        EvidenceExportDialog d;
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        QSignalSpy failed(&d, &EvidenceExportDialog::failed);
        click(button(d, "evidencePreviewButton"));  // nothing given
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
        QVERIFY(d.status()->text().contains("nothing to export"));
    }
};

QTEST_MAIN(TestEvidenceExportDialog)
#include "test_evidence_export_dialog.moc"
