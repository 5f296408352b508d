#include "views/replay/ReplayPanel.h"

#include <QButtonGroup>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QStandardPaths>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "core/replay/TargetSpec.h"
#include "views/plots/PlotStyle.h"
#include "views/replay/AdaptiveStopsModel.h"
#include "views/replay/CampaignRunner.h"
#include "views/replay/ProgressBarDelegate.h"
#include "views/replay/RepetitionOptions.h"
#include "views/replay/ReplayResultsModel.h"
#include "views/replay/TargetChooser.h"
#include "views/replay/WorkerProgram.h"

namespace faultline::views {
namespace {

QString journalOf(const QString& resultsPath)
{
    return QString::fromStdString(Campaign::journalPath(resultsPath.toStdString()));
}

}  // namespace

ReplayPanel::ReplayPanel(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("replayPanel"));
    m_runner = new CampaignRunner(this);
    m_results = new ReplayResultsModel(this);
    connect(m_runner, &CampaignRunner::runFinished, this, &ReplayPanel::onRunFinishedOnUi);
    connect(m_runner, &CampaignRunner::finished, this, &ReplayPanel::onFinishedOnUi);
    connect(m_runner, &CampaignRunner::failed, this, &ReplayPanel::onFailedOnUi);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    auto* opsBox = new QGroupBox(tr("Ops"));
    auto* opsLayout = new QVBoxLayout(opsBox);
    m_opGroup = new QButtonGroup(this);
    m_allOps = new QRadioButton(tr("All ops"));
    m_divergentOps = new QRadioButton(tr("Divergent ops"));
    m_selectedOp = new QRadioButton(tr("Selected op"));
    m_allOps->setObjectName(QStringLiteral("replayAllOps"));
    m_divergentOps->setObjectName(QStringLiteral("replayDivergentOps"));
    m_selectedOp->setObjectName(QStringLiteral("replaySelectedOp"));
    m_opGroup->addButton(m_allOps, int(OpSelection::All));
    m_opGroup->addButton(m_divergentOps, int(OpSelection::Divergent));
    m_opGroup->addButton(m_selectedOp, int(OpSelection::Selected));
    m_allOps->setChecked(true);
    opsLayout->addWidget(m_allOps);
    opsLayout->addWidget(m_divergentOps);
    opsLayout->addWidget(m_selectedOp);
    layout->addWidget(opsBox);

    m_targets = new TargetChooser;
    layout->addWidget(m_targets);
    connect(m_targets, &TargetChooser::targetRefused, this, &ReplayPanel::showError);
    connect(m_targets, &TargetChooser::targetAdded, this, [this] { m_note->clear(); });

    m_repetitions = new RepetitionOptions;
    layout->addWidget(m_repetitions);
    connect(m_repetitions, &RepetitionOptions::changed, this, &ReplayPanel::updateControls);

    auto* form = new QFormLayout;
    auto* pathRow = new QHBoxLayout;
    m_resultsPath = new QLineEdit;
    m_resultsPath->setObjectName(QStringLiteral("replayResultsPath"));
    m_resultsPath->setPlaceholderText(tr("next to the trace: <trace>-replay-<time>.h5"));
    m_resultsPath->setToolTip(
        tr("The campaign's results file (HDF5, as `faultline replay --out`); its runs are "
           "journaled beside it (.journal.jsonl) as they finish"));
    m_browse = new QPushButton(tr("…"));
    m_browse->setObjectName(QStringLiteral("replayBrowseResults"));
    m_browse->setToolTip(tr("Choose the results file"));
    pathRow->addWidget(m_resultsPath, 1);
    pathRow->addWidget(m_browse);
    form->addRow(tr("Save results to"), pathRow);
    layout->addLayout(form);

    auto* buttons = new QHBoxLayout;
    m_run = new QPushButton(tr("Run replay"));
    m_run->setObjectName(QStringLiteral("replayRun"));
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("replayCancel"));
    m_resume = new QPushButton(tr("Resume"));
    m_resume->setObjectName(QStringLiteral("replayResume"));
    m_resume->setToolTip(
        tr("Continue the campaign journaled beside the results file with the same targets, ops and "
           "repetitions: journaled runs are kept, not run again"));
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_resume);
    layout->addLayout(buttons);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    layout->addWidget(m_progress);
    m_stateLabel = new QLabel;
    m_stateLabel->setObjectName(QStringLiteral("replayState"));
    m_stateLabel->setWordWrap(true);
    layout->addWidget(m_stateLabel);
    m_note = new QLabel;
    m_note->setWordWrap(true);
    layout->addWidget(m_note);

    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("replayResults"));
    m_table->setModel(m_results);
    m_table->setItemDelegateForColumn(ReplayResultsModel::Progress,
                                      new ProgressBarDelegate(ReplayResultsModel::FractionRole, m_table));
    m_table->verticalHeader()->hide();
    // Readable at the dock's default width: the verdict and the numbers always fit their text,
    // long target specs are elided (the row's tooltip has them whole), details take the rest.
    // Runs and failures are in the Failed column; their own columns stay in the model (CSV).
    QHeaderView* header = m_table->horizontalHeader();
    header->setStretchLastSection(false);
    header->setMinimumSectionSize(36);
    for (int c : {ReplayResultsModel::Verdict, ReplayResultsModel::Rate, ReplayResultsModel::Interval})
        header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    // The verdict's reason follows the numbers and takes the rest of the width (its whole text in
    // the tooltip); progress comes last.
    header->moveSection(header->visualIndex(ReplayResultsModel::Details),
                        header->visualIndex(ReplayResultsModel::Interval) + 1);
    header->setSectionResizeMode(ReplayResultsModel::Details, QHeaderView::Stretch);
    m_table->setColumnHidden(ReplayResultsModel::Runs, true);
    m_table->setColumnHidden(ReplayResultsModel::Failures, true);
    m_table->setTextElideMode(Qt::ElideRight);
    m_table->setWordWrap(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setMinimumHeight(110);
    layout->addWidget(m_table, 1);

    // An adaptive campaign's stops, per op and target: shown once one has finished.
    m_stops = new AdaptiveStopsModel(this);
    m_stopsTable = new QTableView;
    m_stopsTable->setObjectName(QStringLiteral("replayStops"));
    m_stopsTable->setModel(m_stops);
    m_stopsTable->verticalHeader()->hide();
    m_stopsTable->horizontalHeader()->setStretchLastSection(true);
    m_stopsTable->setTextElideMode(Qt::ElideRight);
    m_stopsTable->setWordWrap(false);
    m_stopsTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_stopsTable->setMinimumHeight(90);
    m_stopsTable->hide();
    layout->addWidget(m_stopsTable, 2);  // a row per op and target: more rows than targets

    // The running timers of the runs in flight.
    m_clock = new QTimer(this);
    m_clock->setInterval(500);
    connect(m_clock, &QTimer::timeout, m_results, &ReplayResultsModel::tick);

    connect(m_run, &QPushButton::clicked, this, [this] { start(); });
    connect(m_cancel, &QPushButton::clicked, this, &ReplayPanel::cancel);
    connect(m_resume, &QPushButton::clicked, this, [this] { resume(); });
    connect(m_browse, &QPushButton::clicked, this, &ReplayPanel::chooseResultsPath);
    connect(m_resultsPath, &QLineEdit::textEdited, this, [this] {
        m_pathIsDefault = false;
        updateControls();
    });
    setState(tr("Idle"));
    updateControls();
}

ReplayPanel::~ReplayPanel()
{
    m_runner->reset();
}

void ReplayPanel::setIncident(std::shared_ptr<const Incident> incident)
{
    m_runner->reset();
    m_clock->stop();
    m_incident = std::move(incident);
    m_selectedOpIndex.reset();
    m_report.reset();
    m_results->clear();
    m_stops->clear();
    m_stopsTable->hide();
    m_lastError.clear();
    m_lastResultsPath.clear();
    if (m_pathIsDefault) m_resultsPath->clear();
    m_done = m_total = 0;
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_targets->setIncident(m_incident);
    const QString divergent = m_incident ? m_incident->divergentOpSelection() : QString();
    (divergent.isEmpty() ? m_allOps : m_divergentOps)->setChecked(true);
    setState(tr("Idle"));
    updateControls();
}

void ReplayPanel::setSelectedOp(std::optional<size_t> opIndex)
{
    m_selectedOpIndex = opIndex;
    updateControls();
}

void ReplayPanel::setOpSelection(OpSelection selection)
{
    if (QAbstractButton* b = m_opGroup->button(int(selection))) b->setChecked(true);
}

ReplayPanel::OpSelection ReplayPanel::opSelection() const
{
    return OpSelection(m_opGroup->checkedId());
}

QString ReplayPanel::opSelectionText() const
{
    switch (opSelection()) {
        case OpSelection::All:
            return {};
        case OpSelection::Divergent:
            return m_incident ? m_incident->divergentOpSelection() : QString();
        case OpSelection::Selected:
            return m_selectedOpIndex ? QString::number(*m_selectedOpIndex) : QString();
    }
    return {};
}

bool ReplayPanel::setCheckedTargets(const QStringList& specs)
{
    QString error;
    if (m_targets->setCheckedTargets(specs, &error)) return true;
    m_lastError = error;
    m_note->setText(error);
    return false;
}

QStringList ReplayPanel::checkedTargets() const
{
    return m_targets->checkedTargets();
}

QStringList ReplayPanel::availableTargets() const
{
    return m_targets->availableTargets();
}

bool ReplayPanel::setReference(const QString& spec)
{
    return m_targets->setReference(spec);
}

QString ReplayPanel::reference() const
{
    return m_targets->reference();
}

void ReplayPanel::setLocalGpus(const QStringList& specs, const QStringList& labels)
{
    m_targets->setLocalGpus(specs, labels);
}

void ReplayPanel::showError(const QString& message)
{
    m_lastError = message;
    m_note->setText(tr("<span style='color:%1'>%2</span>")
                        .arg(PlotStyle::divergentColor().name(), message.toHtmlEscaped()));
}

void ReplayPanel::setReps(int reps)
{
    m_repetitions->setMode(RepetitionOptions::Mode::FixedReps);
    m_repetitions->setReps(reps);
}

void ReplayPanel::setTimeoutMs(int ms)
{
    m_repetitions->setTimeoutMs(ms);
}

void ReplayPanel::setResultsPath(const QString& path)
{
    m_resultsPath->setText(path);
    m_pathIsDefault = false;
    updateControls();
}

QString ReplayPanel::resultsPath() const
{
    return m_resultsPath->text().trimmed();
}

QString ReplayPanel::defaultResultsPath() const
{
    if (!m_incident || !m_incident->hasTrace()) return {};
    const QFileInfo trace(m_incident->tracePath);
    QString dir = trace.absolutePath();
    if (!QFileInfo(dir).isWritable()) {
        dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
              QStringLiteral("/replays");
        QDir().mkpath(dir);
    }
    const QString stem = trace.completeBaseName() + QStringLiteral("-replay-") +
                         QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    QString path = QDir(dir).filePath(stem + QStringLiteral(".h5"));
    for (int n = 2; QFileInfo::exists(path) || QFileInfo::exists(journalOf(path)); ++n)
        path = QDir(dir).filePath(stem + QStringLiteral("-%1.h5").arg(n));
    return path;
}

void ReplayPanel::chooseResultsPath()
{
    const QString start = resultsPath().isEmpty() ? defaultResultsPath() : resultsPath();
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save replay results to"), start, tr("Campaign results (*.h5)"),
                                     nullptr, QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty()) setResultsPath(path);
}

QString ReplayPanel::resumablePath() const
{
    return resultsPath().isEmpty() ? m_lastResultsPath : resultsPath();
}

bool ReplayPanel::canResume() const
{
    const QString path = resumablePath();
    return !path.isEmpty() && QFileInfo::exists(journalOf(path));
}

bool ReplayPanel::isRunning() const
{
    return m_runner->isRunning();
}

QString ReplayPanel::stateText() const
{
    return m_state;
}

void ReplayPanel::fitColumns()
{
    m_table->resizeColumnsToContents();
    // The target gets what the verdict, the numbers, the reason's share and (while running) the
    // progress leave of the table's width (a long spec is elided, whole in the tooltip), so the
    // four columns that answer "is it the device?" are on screen together, and the reason beside
    // them; once the campaign is over, its progress column gives its room to the reason.
    constexpr int kReasonRoom = 140;
    int numbers = 0;
    for (int c : {ReplayResultsModel::Verdict, ReplayResultsModel::Rate, ReplayResultsModel::Interval})
        numbers += m_table->columnWidth(c);
    m_table->setColumnWidth(ReplayResultsModel::Progress,
                            std::max(m_table->columnWidth(ReplayResultsModel::Progress), 70));
    const int progress = m_table->isColumnHidden(ReplayResultsModel::Progress)
                             ? 0
                             : m_table->columnWidth(ReplayResultsModel::Progress);
    const int room = std::max(80, m_table->viewport()->width() - numbers - progress - kReasonRoom);
    m_table->setColumnWidth(ReplayResultsModel::Target,
                            std::min(m_table->columnWidth(ReplayResultsModel::Target), room));
}

void ReplayPanel::setState(const QString& state)
{
    m_state = state;
    m_stateLabel->setText(state);
    emit stateChanged(state);
}

void ReplayPanel::updateControls()
{
    const bool running = m_runner->isRunning();
    const bool hasTrace = m_incident && m_incident->hasTrace();
    const QString divergent = m_incident ? m_incident->divergentOpSelection() : QString();
    m_divergentOps->setText(divergent.isEmpty() ? tr("Divergent ops (none)")
                                                : tr("Divergent ops (%1)").arg(divergent));
    m_divergentOps->setEnabled(!running && !divergent.isEmpty());
    QString selected = tr("Selected op (none)");
    if (m_selectedOpIndex && m_incident)
        for (const IncidentEntry& e : m_incident->entries)
            if (e.source == EntrySource::TraceOp && e.opIndex == *m_selectedOpIndex)
                selected = tr("Selected op (#%1 %2)").arg(e.opIndex).arg(e.opKind);
    m_selectedOp->setText(selected);
    m_selectedOp->setEnabled(!running && m_selectedOpIndex.has_value());
    m_allOps->setEnabled(!running && hasTrace);
    m_targets->setRunning(running);
    m_repetitions->setRunning(running);
    m_resultsPath->setEnabled(!running);
    m_browse->setEnabled(!running && hasTrace);
    m_run->setEnabled(!running && hasTrace && m_repetitions->errorText().isEmpty());
    m_cancel->setEnabled(running && !m_runner->isCancelling());
    m_resume->setEnabled(!running && hasTrace && canResume());
    if (!hasTrace)
        m_note->setText(tr("Replay needs a trace: open one (with or without a pair of snapshots)."));
    else if (m_note->text().startsWith(tr("Replay needs")))
        m_note->clear();
}

bool ReplayPanel::start()
{
    return startCampaign(false);
}

bool ReplayPanel::resume()
{
    return startCampaign(true);
}

bool ReplayPanel::startCampaign(bool resume)
{
    m_lastError.clear();
    if (m_runner->isRunning()) return false;
    auto refuse = [this](const QString& why) {
        m_lastError = why;
        m_note->setText(why);
        setState(tr("Idle — %1").arg(why));
        emit failed(why);
        return false;
    };
    if (!m_incident || !m_incident->hasTrace()) return refuse(tr("no trace is open"));
    const QStringList targets = checkedTargets();
    if (targets.isEmpty()) return refuse(tr("no target is checked"));
    if (opSelection() != OpSelection::All && opSelectionText().isEmpty())
        return refuse(tr("no op in this selection"));
    CampaignOptions options;
    options.tracePath = m_incident->tracePath.toStdString();
    for (const QString& t : targets) {
        auto spec = parseTargetSpec(t.toStdString());
        if (!spec) return refuse(QString::fromStdString(spec.message()));
        options.targets.push_back(*spec);
    }
    options.ops = opSelectionText().toStdString();
    auto stopping = m_repetitions->stoppingRule();
    if (!stopping) return refuse(QString::fromStdString(stopping.message()));
    options.stopping = *stopping;
    options.reps = uint32_t(m_repetitions->reps());
    options.timeout = m_repetitions->timeout();
    options.workerProgram = workerProgramPath().toStdString();
    options.reference = reference().toStdString();
    std::vector<std::string> warnings;
    auto ops = selectOps(*m_incident->trace, options.ops, warnings);
    if (!ops) return refuse(QString::fromStdString(ops.message()));
    QString path;
    if (resume) {
        path = resumablePath();
        if (path.isEmpty() || !QFileInfo::exists(journalOf(path)))
            return refuse(tr("no journal to resume beside '%1'").arg(path));
    } else if (resultsPath().isEmpty() || m_pathIsDefault) {
        path = defaultResultsPath();
        m_resultsPath->setText(path);
        m_pathIsDefault = true;
    } else {
        path = resultsPath();
        if (QFileInfo::exists(journalOf(path)))
            return refuse(
                tr("'%1' already has the journal of an earlier campaign: Resume continues it, or choose "
                   "another results file")
                    .arg(path));
    }
    options.outPath = path.toStdString();
    options.resume = resume;
    m_lastResultsPath = path;

    m_report.reset();
    m_done = 0;
    // An adaptive campaign plans the runs a clean target needs: a failure or the budget ends sooner.
    const quint64 perOp = m_repetitions->runsPerOpAtMost();
    m_total = quint64(ops->size()) * perOp * targets.size();
    m_results->begin(targets, quint64(ops->size()) * perOp);
    m_stops->clear();
    m_stopsTable->hide();
    m_table->setColumnHidden(ReplayResultsModel::Progress, false);
    fitColumns();
    m_progress->setRange(0, int(std::min<quint64>(m_total, 1u << 30)));
    m_progress->setValue(0);
    m_note->setText(warnings.empty() ? QString() : QString::fromStdString(warnings.front()));
    m_job = m_runner->startOnWorker(std::move(options), *ops);
    m_clock->start();
    const QString plan = tr("%1%2 runs (%3 ops × %4 × %5 targets) into %6")
                             .arg(options.stopping.adaptive() ? tr("at most ") : QString())
                             .arg(m_total)
                             .arg(ops->size())
                             .arg(m_repetitions->summaryText())
                             .arg(targets.size())
                             .arg(QFileInfo(path).fileName());
    setState(resume ? tr("Resuming: %1, journaled runs kept").arg(plan) : tr("Running: 0 of %1").arg(plan));
    updateControls();
    emit started();
    return true;
}

void ReplayPanel::cancel()
{
    if (!m_runner->isRunning()) return;
    m_runner->cancel();
    setState(tr("Cancelling: waiting for the runs in flight (a hang ends at its timeout)…"));
    updateControls();
}

void ReplayPanel::onRunFinishedOnUi(quint64 job, quint64 done, quint64 total, const QString& what)
{
    if (job != m_job) return;
    m_done = done;
    m_total = total;
    // "TARGET op N rep R: OUTCOME"
    const int opAt = what.indexOf(QStringLiteral(" op "));
    const int colon = what.lastIndexOf(QStringLiteral(": "));
    if (opAt > 0 && colon > opAt)
        if (const auto outcome = parseRunOutcome(what.mid(colon + 2).toStdString()))
            m_results->recordRun(what.left(opAt), *outcome);
    m_progress->setValue(int(std::min<quint64>(done, 1u << 30)));
    if (!m_runner->isCancelling())
        setState(tr("Running: %1 of %2 runs — last: %3").arg(done).arg(total).arg(what));
}

void ReplayPanel::onFinishedOnUi(quint64 job, std::shared_ptr<const CampaignReport> report)
{
    if (job != m_job) return;
    m_clock->stop();
    m_report = report;
    m_results->finish(*report);
    m_stops->setReport(*report);
    m_stopsTable->setVisible(report->stopping.adaptive());
    if (report->stopping.adaptive()) m_stopsTable->resizeColumnsToContents();
    recordSmMaps(*report);
    m_table->setColumnHidden(ReplayResultsModel::Progress, true);  // the Failed column has the runs
    fitColumns();
    const quint64 runs = std::max<quint64>(report->runsTotal, report->runs.size());
    if (report->cancelled) {
        setState(tr("Cancelled after %1 of %2 runs: verdicts are partial").arg(runs).arg(m_total));
    } else {
        // Done: an adaptive campaign planned the most runs it could take, and usually took fewer.
        m_progress->setRange(0, int(std::min<quint64>(std::max<quint64>(runs, 1), 1u << 30)));
        m_progress->setValue(m_progress->maximum());
        setState(tr("Finished: %1 runs").arg(runs));
    }
    m_stateLabel->setToolTip(tr("Results: %1").arg(m_lastResultsPath));
    if (!report->warnings.empty()) m_note->setText(QString::fromStdString(report->warnings.front()));
    updateControls();
    emit finished(report->cancelled);
}

void ReplayPanel::recordSmMaps(const CampaignReport& report)
{
    if (!m_incident) return;
    // Every target's map of every op (the first run's: the same for every run of a target); the
    // heatmap uses only the suspect's own GPU's (SmAttribution).
    std::map<size_t, std::map<std::string, const RunRecord*>> seen;
    for (const RunRecord& r : report.runs)
        if (r.smMap.valid()) seen[r.opIndex].emplace(r.target, &r);
    QList<qulonglong> ops;
    for (const auto& [op, byTarget] : seen) {
        auto& kept = m_incident->replaySmMaps->byOp[op];
        for (const auto& [target, run] : byTarget) {
            const QString label = QString::fromStdString(target);
            std::erase_if(kept, [&](const ReplaySmMaps::Recorded& k) { return k.target == label; });
            kept.push_back({label, run->smMap});
        }
        ops << qulonglong(op);
    }
    if (!ops.isEmpty()) emit smMapsRecorded(ops);
}

void ReplayPanel::onFailedOnUi(quint64 job, const QString& message)
{
    if (job != m_job) return;
    m_clock->stop();
    m_lastError = message;
    m_results->fail(message);
    m_note->setText(tr("<span style='color:%1'>%2</span>")
                        .arg(PlotStyle::divergentColor().name(), message.toHtmlEscaped()));
    setState(tr("Failed: %1").arg(message));
    updateControls();
    emit failed(message);
}

}  // namespace faultline::views
