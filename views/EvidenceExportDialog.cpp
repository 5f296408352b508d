#include "EvidenceExportDialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "EvidenceRendering.h"

namespace faultline::views {
namespace {

std::vector<std::string> splitPaths(const QString& text)
{
    std::vector<std::string> out;
    for (const QString& p : text.split(';', Qt::SkipEmptyParts))
        if (!p.trimmed().isEmpty()) out.push_back(p.trimmed().toStdString());
    return out;
}

}  // namespace

EvidenceExportDialog::EvidenceExportDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Export Evidence"));
    auto* form = new QFormLayout;
    m_out = fileRow(form, tr("Bundle folder (new)"), {}, false, true);
    m_campaign = fileRow(form, tr("Campaign results"), tr("Campaign results (*.h5)"), false, false);
    m_trace = fileRow(form, tr("Trace"), tr("Traces (*.h5 *.hdf5)"), false, false);
    m_logs = fileRow(form, tr("Kernel logs, bug report"), tr("Logs (*.log *.gz *.txt *.json);;All files (*)"),
                     true, false);
    m_smi = fileRow(form, tr("nvidia-smi -q -x (before, after)"), tr("XML (*.xml)"), true, false);
    m_attach = fileRow(form, tr("Field diagnostic, DCGM"), tr("All files (*)"), true, false);
    m_key = fileRow(form, tr("Signing key (minisign)"), tr("All files (*)"), false, false);
    m_caseId = new QLineEdit;
    m_caseId->setPlaceholderText(tr("default: FL-<date>-<serial>"));
    form->addRow(tr("Case id"), m_caseId);
    m_suspect = new QLineEdit;
    m_suspect->setPlaceholderText(tr("bus id, UUID or serial; default: the trace's suspect device"));
    form->addRow(tr("Suspect GPU"), m_suspect);
    // Ties the campaign's cuda:N targets to boards where the campaign recorded no inventory.
    m_inventory =
        fileRow(form, tr("GPU inventory (faultline devices --json)"), tr("JSON (*.json)"), false, false);

    m_checklist = new QTreeWidget;
    m_checklist->setHeaderLabels({tr("Needed by the vendor"), tr("Present"), tr("Detail")});
    m_checklist->setRootIsDecorated(false);
    m_checklist->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_preview = new QTextBrowser;
    m_preview->setOpenLinks(false);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_checklist);
    split->addWidget(m_preview);
    split->setStretchFactor(1, 3);

    m_status = new QLabel(tr("Preview builds a trial bundle to show what is present and missing."));
    m_status->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    m_previewButton = buttons->addButton(tr("&Preview"), QDialogButtonBox::ActionRole);
    m_exportButton = buttons->addButton(tr("&Export"), QDialogButtonBox::AcceptRole);
    connect(m_previewButton, &QPushButton::clicked, this, &EvidenceExportDialog::runPreview);
    connect(m_exportButton, &QPushButton::clicked, this, &EvidenceExportDialog::runExport);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(split, 1);
    layout->addWidget(m_status);
    layout->addWidget(buttons);
    resize(900, 800);
}

EvidenceExportDialog::~EvidenceExportDialog() = default;

QLineEdit* EvidenceExportDialog::fileRow(QFormLayout* form, const QString& label, const QString& filter,
                                         bool many, bool dir)
{
    auto* edit = new QLineEdit;
    if (many) edit->setPlaceholderText(tr("files separated by ';'"));
    auto* browse = new QPushButton(many ? tr("Add…") : tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, [this, edit, filter, many, dir] {
        if (dir) {
            const QString p = QFileDialog::getSaveFileName(this, tr("New bundle folder"));
            if (!p.isEmpty()) edit->setText(p);
        } else if (many) {
            const QStringList ps = QFileDialog::getOpenFileNames(this, tr("Add files"), {}, filter);
            QStringList all = edit->text().split(';', Qt::SkipEmptyParts);
            all += ps;
            edit->setText(all.join(';'));
        } else {
            const QString p = QFileDialog::getOpenFileName(this, tr("Choose a file"), {}, filter);
            if (!p.isEmpty()) edit->setText(p);
        }
    });
    auto* row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(browse);
    form->addRow(label, row);
    return edit;
}

void EvidenceExportDialog::setIncidentFiles(const QString& trace, const QString& campaign)
{
    m_trace->setText(trace);
    m_campaign->setText(campaign);
}

EvidenceOptions EvidenceExportDialog::options() const
{
    EvidenceOptions o;
    o.outDir = m_out->text().trimmed().toStdString();
    o.campaign = m_campaign->text().trimmed().toStdString();
    o.trace = m_trace->text().trimmed().toStdString();
    o.logs = splitPaths(m_logs->text());
    o.nvidiaSmi = splitPaths(m_smi->text());
    o.attachments = splitPaths(m_attach->text());
    o.signKey = m_key->text().trimmed().toStdString();
    o.caseId = m_caseId->text().trimmed().toStdString();
    o.suspect = m_suspect->text().trimmed().toStdString();
    o.inventory = m_inventory->text().trimmed().toStdString();
    o.faultlineVersion = QCoreApplication::applicationVersion().toStdString();
    return o;
}

void EvidenceExportDialog::runPreview()
{
    start(true);
}
void EvidenceExportDialog::runExport()
{
    start(false);
}

void EvidenceExportDialog::start(bool preview)
{
    EvidenceOptions o = options();
    if (preview) {
        m_trialDir = std::make_unique<QTemporaryDir>();
        o.outDir = QDir(m_trialDir->path()).filePath("preview").toStdString();
    } else if (o.outDir.empty()) {
        m_status->setText(tr("Choose a new bundle folder first."));
        return;
    }
    attachEvidenceRendering(o);
    const quint64 job = ++m_job;
    m_status->setText(preview ? tr("Building a trial bundle…") : tr("Building the bundle…"));
    m_previewButton->setEnabled(false);
    m_exportButton->setEnabled(false);
    auto* watcher = new QFutureWatcher<Outcome>(this);
    QPointer<EvidenceExportDialog> self(this);
    connect(watcher, &QFutureWatcher<Outcome>::finished, this, [self, watcher, job, preview] {
        if (self) self->showOutcomeOnUi(job, preview, watcher->result());
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run([o] {
        Outcome out;
        out.result = buildEvidenceBundle(o);
        if (out.result) {
            QFile md(QString::fromStdString(out.result->dir + "/report.md"));
            if (md.open(QIODevice::ReadOnly)) out.reportMarkdown = QString::fromUtf8(md.readAll());
        }
        return out;
    }));
}

void EvidenceExportDialog::showOutcomeOnUi(quint64 job, bool preview, const Outcome& outcome)
{
    if (job != m_job) return;  // superseded
    m_previewButton->setEnabled(true);
    m_exportButton->setEnabled(true);
    if (!outcome.result) {
        const QString message = QString::fromStdString(outcome.result.message());
        m_status->setText(tr("Refused: %1").arg(message));
        emit failed(message);
        return;
    }
    const EvidenceResult& r = *outcome.result;
    m_checklist->clear();
    for (const ChecklistItem& i : evidenceChecklist(r.caseJson)) {
        auto* item = new QTreeWidgetItem(
            m_checklist, {QString::fromStdString(i.item), i.present ? tr("yes") : tr("missing"),
                          QString::fromStdString(i.detail)});
        if (!i.present) item->setForeground(1, QColor(i.required ? Qt::red : Qt::darkYellow));
    }
    m_preview->setSearchPaths({QString::fromStdString(r.dir)});
    m_preview->setMarkdown(outcome.reportMarkdown);
    if (preview) {
        QString status =
            tr("Preview: %1 warning(s). Export writes the bundle and its .tar.").arg(r.warnings.size());
        const nlohmann::json replay = r.caseJson.value("replay", nlohmann::json());
        if (replay.is_object() && replay.value("suspect_targets", nlohmann::json::array()).empty())
            status += tr(" No target of the campaign ran on the suspect GPU: its results are context only.");
        m_status->setText(status);
        emit previewShown();
    } else {
        m_status->setText(tr("Wrote %1 and %2 (%3 files).")
                              .arg(QString::fromStdString(r.dir), QString::fromStdString(r.tar))
                              .arg(r.files));
        emit exported(QString::fromStdString(r.dir));
    }
}

}  // namespace faultline::views
