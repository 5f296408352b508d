#pragma once
// File > Export Evidence…: the inputs of an RMA evidence bundle (core/evidence/EvidenceBundle.h)
// around the checklist of what a vendor needs: the lists of files going into the bundle (kernel
// logs and bug reports, nvidia-smi snapshots, attachments; the ones already loaded in the Health
// panel carried over), the signing key (or a new one generated here, as `faultline keygen`
// makes it), and, from a trial bundle built in a temporary folder, the checklist of what is
// present and missing, a preview of the report and the bundle's files. Export builds the real
// one. Bundles are built (and trial folders removed) on a worker thread; a result for a
// superseded request is dropped.
#include <QDialog>
#include <QFont>
#include <QFutureWatcher>
#include <QList>
#include <QPointer>
#include <memory>

#include "core/evidence/EvidenceBundle.h"

class QFormLayout;
class QLabel;
class QCheckBox;
class QLineEdit;
class QPushButton;
class QTabWidget;
class QTextBrowser;
class QTextDocument;
class QTreeWidget;

namespace faultline::views {

class FileListEditor;

class EvidenceExportDialog : public QDialog {
    Q_OBJECT
public:
    explicit EvidenceExportDialog(QWidget* parent = nullptr);
    ~EvidenceExportDialog() override;

    // Prefills the trace and the campaign results file (either may be empty).
    void setIncidentFiles(const QString& trace, const QString& campaign);
    // Carries over the kernel logs and nvidia-smi XML files loaded in the Health panel.
    void setHealthFiles(const QStringList& logs, const QStringList& nvidiaSmi);
    // The inputs as the form holds them.
    EvidenceOptions options() const;

    FileListEditor* logs() const { return m_logs; }
    FileListEditor* nvidiaSmi() const { return m_smi; }
    FileListEditor* attachments() const { return m_attach; }
    QTreeWidget* checklist() const { return m_checklist; }
    QTextBrowser* preview() const { return m_preview; }
    // The files of the last bundle built (trial or real), relative to its folder, with sizes.
    QTreeWidget* bundleFiles() const { return m_bundleFiles; }
    QLabel* status() const { return m_status; }
    // Opens the suspect GPU's history from the ledger (DeviceHistoryView).
    QPushButton* historyButton() const { return m_historyButton; }
    // Whether the bundle carries the suspect's history from the ledger (case.json ledger_history
    // and the report's "Device history", as `evidence --ledger`); checked when the default ledger
    // exists. The ledger is read, never written, on the worker thread that builds the bundle.
    QCheckBox* historyInBundle() const { return m_historyInBundle; }
    // As --ledger takes it; empty: the default ledger.
    QLineEdit* ledger() const { return m_ledger; }

public slots:
    // A trial bundle in a temporary folder: fills the checklist, the preview and the file list.
    void runPreview();
    // The bundle in the output folder.
    void runExport();
    // A new minisign key pair at the signing key's path (asked for when the field is empty);
    // the key field then names it. Refuses an existing file, says so in the status line.
    void generateKey();

signals:
    void previewShown();
    void exported(const QString& dir);
    void failed(const QString& message);
    void keyGenerated(const QString& path);

private:
    struct BundleFile {
        QString path;  // relative to the bundle's folder
        qint64 bytes = 0;
    };
    struct Outcome {
        Result<EvidenceResult> result = Error{"not run"};
        QTextDocument* report = nullptr;  // report.md parsed; owned by the receiver
        QList<QFont> fonts;               // the report's fonts (ReportFonts.h)
        std::vector<BundleFile> files;
    };
    // The report on its way into the preview: its fonts are met one per turn first.
    struct PendingReport {
        quint64 job = 0;
        bool preview = false;
        QTextDocument* doc = nullptr;  // owned here until shown
        QString dir;
        QList<QFont> fonts;
    };
    void start(bool preview);
    void showOutcomeOnUi(quint64 job, bool preview, const Outcome& outcome);
    void removeTrialDirOnWorker();
    // One step of showing m_pending: meets one of its fonts, or, once all are met, shows it.
    void continueReportOnUi();
    QLineEdit* fileRow(QFormLayout* form, const QString& name, const QString& label, const QString& filter,
                       bool dir, QPushButton* extra = nullptr);

    QLineEdit *m_out = nullptr, *m_campaign = nullptr, *m_trace = nullptr, *m_key = nullptr,
              *m_caseId = nullptr, *m_suspect = nullptr, *m_inventory = nullptr;
    FileListEditor *m_logs = nullptr, *m_smi = nullptr, *m_attach = nullptr;
    QTreeWidget* m_checklist = nullptr;
    QTabWidget* m_tabs = nullptr;
    QTextBrowser* m_preview = nullptr;
    QTreeWidget* m_bundleFiles = nullptr;
    QLabel* m_status = nullptr;
    QPushButton *m_previewButton = nullptr, *m_exportButton = nullptr, *m_keyButton = nullptr,
                *m_historyButton = nullptr;
    QCheckBox* m_historyInBundle = nullptr;
    QLineEdit* m_ledger = nullptr;
    QPointer<QTextDocument> m_report;  // shown in m_preview
    QString m_trialDir;                // the last trial bundle's temporary folder ("" = none)
    std::unique_ptr<PendingReport> m_pending;
    quint64 m_job = 0;
};

}  // namespace faultline::views
