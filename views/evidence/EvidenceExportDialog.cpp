#include "views/evidence/EvidenceExportDialog.h"

#include <QApplication>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTextDocument>
#include <QThreadPool>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>
#include <optional>

#include "core/evidence/MinisignKey.h"
#include "core/ledger/Ledger.h"
#include "core/ledger/LedgerHistory.h"
#include "core/ledger/LedgerLocation.h"
#include "views/evidence/EvidenceRendering.h"
#include "views/evidence/FileListEditor.h"
#include "views/evidence/ReportFonts.h"
#include "views/fleet/DeviceHistoryView.h"

namespace faultline::views {
namespace {

std::vector<std::string> pathsOf(const FileListEditor* list)
{
    std::vector<std::string> out;
    for (const QString& p : list->paths()) out.push_back(p.toStdString());
    return out;
}

}  // namespace

EvidenceExportDialog::EvidenceExportDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Export Evidence"));
    auto* form = new QFormLayout;
    m_out = fileRow(form, QStringLiteral("evidenceOut"), tr("Bundle folder (new)"), {}, true);
    m_campaign = fileRow(form, QStringLiteral("evidenceCampaign"), tr("Campaign results"),
                         tr("Campaign results (*.h5)"), false);
    m_trace = fileRow(form, QStringLiteral("evidenceTrace"), tr("Trace"), tr("Traces (*.h5 *.hdf5)"), false);
    m_keyButton = new QPushButton(tr("&Generate…"));
    m_keyButton->setObjectName(QStringLiteral("evidenceGenerateKey"));
    m_keyButton->setAutoDefault(false);
    m_keyButton->setToolTip(
        tr("Write a new minisign key pair (as faultline keygen does): the secret key at the path in the "
           "field (asked for when it is empty) and its .pub beside it"));
    m_key = fileRow(form, QStringLiteral("evidenceKey"), tr("Signing key (minisign)"), tr("All files (*)"),
                    false, m_keyButton);
    m_caseId = new QLineEdit;
    m_caseId->setObjectName(QStringLiteral("evidenceCaseId"));
    m_caseId->setPlaceholderText(tr("default: FL-<date>-<serial>"));
    form->addRow(tr("Case id"), m_caseId);
    m_suspect = new QLineEdit;
    m_suspect->setObjectName(QStringLiteral("evidenceSuspect"));
    m_suspect->setPlaceholderText(tr("bus id, UUID or serial; default: the trace's suspect device"));
    m_historyButton = new QPushButton(tr("&History…"));
    m_historyButton->setObjectName(QStringLiteral("evidenceHistory"));
    m_historyButton->setAutoDefault(false);
    m_historyButton->setToolTip(tr("The suspect GPU's history from the ledger (its serial or UUID)"));
    auto* suspectRow = new QHBoxLayout;
    suspectRow->addWidget(m_suspect, 1);
    suspectRow->addWidget(m_historyButton);
    form->addRow(tr("Suspect GPU"), suspectRow);
    // The suspect's history from the ledger, into the bundle.
    m_historyInBundle = new QCheckBox(tr("Device history from the ledger"));
    m_historyInBundle->setObjectName(QStringLiteral("evidenceHistoryInBundle"));
    m_historyInBundle->setToolTip(
        tr("case.json's ledger_history and the report's Device history section, read from the ledger "
           "(as faultline evidence --ledger; the ledger is not written)"));
    m_ledger = new QLineEdit;
    m_ledger->setObjectName(QStringLiteral("evidenceLedger"));
    const auto defaultLedger = defaultLedgerPath();
    m_ledger->setPlaceholderText(defaultLedger ? tr("default: %1").arg(QString::fromStdString(*defaultLedger))
                                               : tr("path or postgresql:// URL"));
    m_historyInBundle->setChecked(defaultLedger && QFileInfo::exists(QString::fromStdString(*defaultLedger)));
    auto* ledgerRow = new QHBoxLayout;
    ledgerRow->addWidget(m_historyInBundle);
    ledgerRow->addWidget(m_ledger, 1);
    form->addRow(tr("Ledger"), ledgerRow);
    // Ties the campaign's cuda:N targets to boards where the campaign recorded no inventory.
    m_inventory = fileRow(form, QStringLiteral("evidenceInventory"),
                          tr("GPU inventory (faultline devices --json)"), tr("JSON (*.json)"), false);

    // The files going into the bundle, as lists.
    m_logs = new FileListEditor(tr("Kernel logs, nvidia-bug-report"),
                                tr("Logs (*.log *.gz *.txt *.json);;All files (*)"));
    m_logs->setObjectName(QStringLiteral("evidenceLogs"));
    m_smi = new FileListEditor(tr("nvidia-smi -q -x (before, after the reset)"),
                               tr("XML (*.xml);;All files (*)"));
    m_smi->setObjectName(QStringLiteral("evidenceNvidiaSmi"));
    m_attach = new FileListEditor(tr("Field diagnostic, DCGM"), tr("All files (*)"));
    m_attach->setObjectName(QStringLiteral("evidenceAttachments"));
    auto* lists = new QHBoxLayout;
    lists->addWidget(m_logs);
    lists->addWidget(m_smi);
    lists->addWidget(m_attach);
    auto* files = new QGroupBox(tr("Files going into the bundle (byte-identical)"));
    files->setLayout(lists);

    m_checklist = new QTreeWidget;
    m_checklist->setObjectName(QStringLiteral("evidenceChecklist"));
    m_checklist->setHeaderLabels({tr("Needed by the vendor"), tr("Present"), tr("Detail")});
    m_checklist->setRootIsDecorated(false);
    m_checklist->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_preview = new QTextBrowser;
    m_preview->setObjectName(QStringLiteral("evidencePreview"));
    m_preview->setOpenLinks(false);
    m_bundleFiles = new QTreeWidget;
    m_bundleFiles->setObjectName(QStringLiteral("evidenceBundleFiles"));
    m_bundleFiles->setHeaderLabels({tr("File in the bundle"), tr("Bytes")});
    m_bundleFiles->setRootIsDecorated(false);
    m_bundleFiles->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_tabs = new QTabWidget;
    m_tabs->addTab(m_preview, tr("Report preview"));
    m_tabs->addTab(m_bundleFiles, tr("Bundle files"));
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(files);
    split->addWidget(m_checklist);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setStretchFactor(2, 3);

    m_status = new QLabel(tr("Preview builds a trial bundle to show what is present and missing."));
    m_status->setObjectName(QStringLiteral("evidenceStatus"));
    m_status->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    m_previewButton = buttons->addButton(tr("&Preview"), QDialogButtonBox::ActionRole);
    m_previewButton->setObjectName(QStringLiteral("evidencePreviewButton"));
    m_exportButton = buttons->addButton(tr("&Export"), QDialogButtonBox::AcceptRole);
    m_exportButton->setObjectName(QStringLiteral("evidenceExportButton"));
    connect(m_previewButton, &QPushButton::clicked, this, &EvidenceExportDialog::runPreview);
    connect(m_exportButton, &QPushButton::clicked, this, &EvidenceExportDialog::runExport);
    connect(m_keyButton, &QPushButton::clicked, this, &EvidenceExportDialog::generateKey);
    connect(m_historyButton, &QPushButton::clicked, this, [this] {
        if (m_suspect->text().trimmed().isEmpty()) {
            m_status->setText(tr("Name the suspect GPU by its serial or UUID to see its history."));
            return;
        }
        openDeviceHistory(this, m_suspect->text().trimmed(), m_ledger->text().trimmed());
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(split, 1);
    layout->addWidget(m_status);
    layout->addWidget(buttons);
    resize(1000, 900);
}

EvidenceExportDialog::~EvidenceExportDialog()
{
    removeTrialDirOnWorker();
}

void EvidenceExportDialog::removeTrialDirOnWorker()
{
    if (m_trialDir.isEmpty()) return;
    const QString dir = std::exchange(m_trialDir, QString());
    // A trial bundle holds copies of the campaign and a reproducer trace: not removed on the GUI thread.
    QThreadPool::globalInstance()->start([dir] { QDir(dir).removeRecursively(); });
}

QLineEdit* EvidenceExportDialog::fileRow(QFormLayout* form, const QString& name, const QString& label,
                                         const QString& filter, bool dir, QPushButton* extra)
{
    auto* edit = new QLineEdit;
    edit->setObjectName(name);
    auto* browse = new QPushButton(tr("Browse…"));
    browse->setAutoDefault(false);
    connect(browse, &QPushButton::clicked, this, [this, edit, filter, dir] {
        const QString p = dir ? QFileDialog::getSaveFileName(this, tr("New bundle folder"))
                              : QFileDialog::getOpenFileName(this, tr("Choose a file"), {}, filter);
        if (!p.isEmpty()) edit->setText(p);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(browse);
    if (extra) row->addWidget(extra);
    form->addRow(label, row);
    return edit;
}

void EvidenceExportDialog::setIncidentFiles(const QString& trace, const QString& campaign)
{
    m_trace->setText(trace);
    m_campaign->setText(campaign);
}

void EvidenceExportDialog::setHealthFiles(const QStringList& logs, const QStringList& nvidiaSmi)
{
    const QString note = tr("loaded in the Health panel");
    m_logs->addPaths(logs, note);
    m_smi->addPaths(nvidiaSmi, note);
}

EvidenceOptions EvidenceExportDialog::options() const
{
    EvidenceOptions o;
    o.outDir = m_out->text().trimmed().toStdString();
    o.campaign = m_campaign->text().trimmed().toStdString();
    o.trace = m_trace->text().trimmed().toStdString();
    o.logs = pathsOf(m_logs);
    o.nvidiaSmi = pathsOf(m_smi);
    o.attachments = pathsOf(m_attach);
    o.signKey = m_key->text().trimmed().toStdString();
    o.caseId = m_caseId->text().trimmed().toStdString();
    o.suspect = m_suspect->text().trimmed().toStdString();
    o.inventory = m_inventory->text().trimmed().toStdString();
    o.faultlineVersion = QCoreApplication::applicationVersion().toStdString();
    return o;
}

void EvidenceExportDialog::generateKey()
{
    QString path = m_key->text().trimmed();
    if (path.isEmpty())
        path =
            QFileDialog::getSaveFileName(this, tr("New signing key (secret half; .pub is written beside it)"),
                                         QDir::home().filePath(QStringLiteral("faultline.key")));
    if (path.isEmpty()) return;
    const auto pub = createMinisignKeyPair(path.toStdString());
    if (!pub) {
        const QString message = QString::fromStdString(pub.message());
        m_status->setText(tr("No key generated: %1").arg(message));
        emit failed(message);
        return;
    }
    m_key->setText(path);
    m_status->setText(
        tr("Generated a key pair: %1 (secret, unencrypted: keep it private) and %1.pub (key id %2). "
           "The bundle is signed with it.")
            .arg(path, QString::fromStdString(pub->keyIdText())));
    emit keyGenerated(path);
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
        removeTrialDirOnWorker();
        QTemporaryDir trial;
        trial.setAutoRemove(false);
        if (!trial.isValid()) {
            m_status->setText(
                tr("Refused: no temporary folder for the trial bundle: %1").arg(trial.errorString()));
            return;
        }
        m_trialDir = trial.path();
        o.outDir = QDir(m_trialDir).filePath(QStringLiteral("preview")).toStdString();
    } else if (o.outDir.empty()) {
        m_status->setText(tr("Choose a new bundle folder first."));
        return;
    }
    attachEvidenceRendering(o);
    // The trial bundle skips report.pdf: the worker's first PDF of a session loads and embeds its
    // fonts holding Qt's font database, and the GUI thread, drawing the dialog meanwhile, waited
    // on it for 180-290 ms under load. The preview shows the report itself; Export draws the PDF.
    if (preview) {
        o.renderPdf = nullptr;
        o.trialWithoutPdf = true;
    }
    const quint64 job = ++m_job;
    m_status->setText(preview ? tr("Building a trial bundle…") : tr("Building the bundle…"));
    m_previewButton->setEnabled(false);
    m_exportButton->setEnabled(false);
    auto* watcher = new QFutureWatcher<Outcome>(this);
    QPointer<EvidenceExportDialog> self(this);
    connect(watcher, &QFutureWatcher<Outcome>::finished, this, [self, watcher, job, preview] {
        const Outcome outcome = watcher->result();
        if (self)
            self->showOutcomeOnUi(job, preview, outcome);
        else
            delete outcome.report;
        watcher->deleteLater();
    });
    const bool withHistory = m_historyInBundle->isChecked();
    const std::string ledgerSpec = m_ledger->text().trimmed().toStdString();
    watcher->setFuture(QtConcurrent::run([o, withHistory, ledgerSpec] {
        Outcome out;
        EvidenceOptions opts = o;
        std::optional<Ledger> ledger;  // read here, before the bundle is built; never written
        if (withHistory) {
            auto l = Ledger::openExisting(ledgerSpec);
            if (!l) {
                out.result = l.error();
                return out;
            }
            ledger.emplace(std::move(*l));
            opts.deviceHistory = [&ledger](const SuspectGpu& s) {
                return ledgerDeviceHistory(ledger->engine(), s.serial, s.uuid);
            };
        }
        out.result = buildEvidenceBundle(opts);
        opts.deviceHistory = nullptr;  // it refers to `ledger`
        if (!out.result) return out;
        const QString dir = QString::fromStdString(out.result->dir);
        QFile md(QDir(dir).filePath(QStringLiteral("report.md")));
        const QString markdown = md.open(QIODevice::ReadOnly) ? QString::fromUtf8(md.readAll()) : QString();
        // The report parsed here, not on the GUI thread (QTextBrowser::setMarkdown there stalled
        // the window 0.75-1.5 s on a 6.5 KB report); handed to the GUI thread to be shown.
        auto* doc = new QTextDocument;
        doc->setMarkdown(markdown);
        doc->setBaseUrl(QUrl::fromLocalFile(dir + QLatin1Char('/')));
        out.fonts = documentFonts(*doc);
        doc->moveToThread(qApp->thread());
        out.report = doc;
        QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            it.next();
            out.files.push_back({QDir(dir).relativeFilePath(it.filePath()), it.fileInfo().size()});
        }
        std::sort(out.files.begin(), out.files.end(),
                  [](const BundleFile& a, const BundleFile& b) { return a.path < b.path; });
        return out;
    }));
}

void EvidenceExportDialog::showOutcomeOnUi(quint64 job, bool preview, const Outcome& outcome)
{
    std::unique_ptr<QTextDocument> report(outcome.report);
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
    m_bundleFiles->clear();
    const QLocale locale;
    for (const BundleFile& f : outcome.files) {
        auto* item = new QTreeWidgetItem(m_bundleFiles, {f.path, locale.toString(f.bytes)});
        item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    }
    QString status;
    if (preview) {
        status =
            tr("Preview: %1 warning(s), %2 files. Export writes the bundle (with report.pdf) and its .tar.")
                .arg(r.warnings.size())
                .arg(outcome.files.size());
        const nlohmann::json replay = r.caseJson.value("replay", nlohmann::json());
        if (replay.is_object() && replay.value("suspect_targets", nlohmann::json::array()).empty())
            status += tr(" No target of the campaign ran on the suspect GPU: its results are context only.");
    } else {
        status = tr("Wrote %1 and %2 (%3 files).")
                     .arg(QString::fromStdString(r.dir), QString::fromStdString(r.tar))
                     .arg(r.files);
    }
    m_status->setText(status);
    // The report's layout in the browser is the costliest step left on the GUI thread: it runs
    // in a turn of its own, after the checklist and the file list are drawn, and after the fonts
    // it uses were met one per turn (a first layout meeting them all at once stalled 110-120 ms
    // under load).
    report->setParent(this);
    if (m_pending) delete m_pending->doc;  // an older outcome not shown yet
    m_pending = std::make_unique<PendingReport>(
        PendingReport{job, preview, report.release(), QString::fromStdString(r.dir), outcome.fonts});
    QTimer::singleShot(0, this, &EvidenceExportDialog::continueReportOnUi);
}

void EvidenceExportDialog::continueReportOnUi()
{
    if (!m_pending) return;
    if (m_pending->job != m_job) {  // superseded meanwhile
        delete m_pending->doc;
        m_pending.reset();
        return;
    }
    if (!m_pending->fonts.isEmpty()) {
        meetFontOnUi(m_pending->fonts.takeFirst());
        QTimer::singleShot(0, this, &EvidenceExportDialog::continueReportOnUi);
        return;
    }
    const std::unique_ptr<PendingReport> shown = std::move(m_pending);
    m_preview->setSearchPaths({shown->dir});
    m_preview->setDocument(shown->doc);
    delete m_report.data();  // the previous outcome's
    m_report = shown->doc;
    if (shown->preview)
        emit previewShown();
    else
        emit exported(shown->dir);
}

}  // namespace faultline::views
