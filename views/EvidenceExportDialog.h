#pragma once
// File > Export Evidence…: the inputs of an RMA evidence bundle (core/evidence/EvidenceBundle.h),
// a checklist of what a vendor needs that is present and missing, and a preview of the report,
// both from a trial bundle built in a temporary folder; Export builds the real one. Bundles are
// built on a worker thread; a result for a superseded request is dropped.
#include <QDialog>
#include <QFutureWatcher>
#include <QTemporaryDir>
#include <memory>

#include "core/evidence/EvidenceBundle.h"

class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QTextBrowser;
class QTreeWidget;

namespace faultline::views {

class EvidenceExportDialog : public QDialog {
    Q_OBJECT
public:
    explicit EvidenceExportDialog(QWidget* parent = nullptr);
    ~EvidenceExportDialog() override;

    // Prefills the trace and the campaign results file (either may be empty).
    void setIncidentFiles(const QString& trace, const QString& campaign);
    // The inputs as the form holds them.
    EvidenceOptions options() const;

    QTreeWidget* checklist() const { return m_checklist; }
    QTextBrowser* preview() const { return m_preview; }
    QLabel* status() const { return m_status; }

public slots:
    // A trial bundle in a temporary folder: fills the checklist and the preview.
    void runPreview();
    // The bundle in the output folder.
    void runExport();

signals:
    void previewShown();
    void exported(const QString& dir);
    void failed(const QString& message);

private:
    struct Outcome {
        Result<EvidenceResult> result = Error{"not run"};
        QString reportMarkdown;
    };
    void start(bool preview);
    void showOutcomeOnUi(quint64 job, bool preview, const Outcome& outcome);
    QLineEdit* fileRow(QFormLayout* form, const QString& label, const QString& filter, bool many, bool dir);

    QLineEdit *m_out = nullptr, *m_campaign = nullptr, *m_trace = nullptr, *m_logs = nullptr,
              *m_smi = nullptr, *m_attach = nullptr, *m_key = nullptr, *m_caseId = nullptr,
              *m_suspect = nullptr, *m_inventory = nullptr;
    QTreeWidget* m_checklist = nullptr;
    QTextBrowser* m_preview = nullptr;
    QLabel* m_status = nullptr;
    QPushButton *m_previewButton = nullptr, *m_exportButton = nullptr;
    std::unique_ptr<QTemporaryDir> m_trialDir;
    quint64 m_job = 0;
};

}  // namespace faultline::views
