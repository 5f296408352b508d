#include "views/replay/TargetChooser.h"

#include <QComboBox>
#include <QCryptographicHash>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>
#include <algorithm>

#include "core/replay/FaultModel.h"
#include "core/replay/TargetSpec.h"

namespace faultline::views {
namespace {

constexpr int kSpecRole = Qt::UserRole;
constexpr int kGpuNoteRole = Qt::UserRole + 1;

}  // namespace

QString TargetChooser::normalise(const QString& spec, QString* error)
{
    auto parsed = parseTargetSpec(spec.trimmed().toStdString());
    if (!parsed) {
        if (error) *error = QString::fromStdString(parsed.message());
        return {};
    }
    if (parsed->kind == "sim") {  // unknown models and bad parameters now, not in the worker
        auto model = createFaultModel(*parsed);
        if (!model) {
            if (error) *error = QString::fromStdString(model.message());
            return {};
        }
    }
    return QString::fromStdString(parsed->text);
}

QString TargetChooser::modelDescription(const QString& spec)
{
    auto parsed = parseTargetSpec(spec.toStdString());
    if (!parsed || parsed->kind != "sim") return {};
    auto model = createFaultModel(*parsed);
    return model ? QString::fromStdString((*model)->describe()) : QString();
}

TargetChooser::TargetChooser(QWidget* parent) : QGroupBox(tr("Targets"), parent)
{
    auto* layout = new QVBoxLayout(this);
    m_targets = new QListWidget;
    m_targets->setObjectName(QStringLiteral("replayTargets"));
    m_targets->setMinimumHeight(120);
    layout->addWidget(m_targets);
    auto* addRow = new QHBoxLayout;
    m_customTarget = new QLineEdit;
    m_customTarget->setPlaceholderText(tr("sim:stuck-bit:bit=20,lane=3"));
    m_customTarget->setToolTip(tr("Add a target: cpu, sim:<model>[:k=v,…], cuda:<index>"));
    m_add = new QPushButton(tr("Add"));
    addRow->addWidget(m_customTarget, 1);
    addRow->addWidget(m_add);
    layout->addLayout(addRow);
    auto* referenceRow = new QHBoxLayout;
    m_reference = new QComboBox;
    m_reference->setObjectName(QStringLiteral("replayReference"));
    m_reference->setToolTip(
        tr("A target known to be healthy. Targets that are its peers (same GPU model, SM count "
           "and libraries) must reproduce its bits exactly, even where a production library "
           "is not the golden model. By default the peers' majority decides."));
    referenceRow->addWidget(new QLabel(tr("Reference")));
    referenceRow->addWidget(m_reference, 1);
    layout->addLayout(referenceRow);
    connect(m_targets, &QListWidget::itemChanged, this, [this] { refreshReferenceChoices(); });
    connect(m_add, &QPushButton::clicked, this, &TargetChooser::addCustomTarget);
    connect(m_customTarget, &QLineEdit::returnPressed, this, &TargetChooser::addCustomTarget);
    rebuild();
}

void TargetChooser::setIncident(std::shared_ptr<const Incident> incident)
{
    m_incident = std::move(incident);
    rebuild();
}

void TargetChooser::setRunning(bool running)
{
    m_targets->setEnabled(!running);
    m_customTarget->setEnabled(!running);
    m_add->setEnabled(!running);
    m_reference->setEnabled(!running);
}

void TargetChooser::addTargetItem(const QString& spec, const QString& label, const QString& tip, bool checked)
{
    for (int i = 0; i < m_targets->count(); ++i)
        if (m_targets->item(i)->data(kSpecRole).toString() == spec) {
            m_targets->item(i)->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
            return;
        }
    auto* item = new QListWidgetItem(label.isEmpty() ? spec : label, m_targets);
    item->setData(kSpecRole, spec);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
    item->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
    item->setToolTip(tip.isEmpty() ? spec : tip);
}

void TargetChooser::rebuild()
{
    m_targets->clear();
    addTargetItem(QStringLiteral("cpu"), tr("cpu — golden model"), tr("The bit-exact CPU golden model"),
                  true);
    if (m_incident && !m_incident->simulatedDefect.isEmpty()) {
        const QString spec = normalise(m_incident->simulatedDefect);
        if (!spec.isEmpty())
            addTargetItem(spec, tr("%1's simulated defect: %2").arg(m_incident->suspectLabel, spec),
                          modelDescription(spec), true);
    }
    for (const std::string& name : faultModelNames()) {
        const QString spec = normalise(QStringLiteral("sim:") + QString::fromStdString(name));
        if (!spec.isEmpty()) addTargetItem(spec, QString(), modelDescription(spec), false);
    }
    // The targets added by hand for this incident before, checked as they were added.
    if (const QString key = customTargetsKey(); !key.isEmpty())
        for (const QString& kept : QSettings().value(key).toStringList()) {
            const QString spec = normalise(kept);
            if (!spec.isEmpty()) addTargetItem(spec, QString(), modelDescription(spec), true);
        }
    showLocalGpus();
    refreshReferenceChoices();
}

// The reference choices: the peers' majority, or one of the checked targets; a choice whose
// target is no longer checked falls back to the majority.
void TargetChooser::refreshReferenceChoices()
{
    const QString current = m_reference->currentData().toString();
    const QStringList checked = checkedTargets();
    const QSignalBlocker block(m_reference);
    m_reference->clear();
    m_reference->addItem(tr("Peers' majority"), QString());
    for (const QString& t : checked) m_reference->addItem(t, t);
    m_reference->setCurrentIndex(std::max(0, m_reference->findData(current)));
}

bool TargetChooser::setReference(const QString& spec)
{
    const QString normalised = spec.isEmpty() ? QString() : normalise(spec);
    if (!spec.isEmpty() && normalised.isEmpty()) return false;
    const int index = m_reference->findData(normalised);
    if (index < 0) return false;
    m_reference->setCurrentIndex(index);
    return true;
}

QString TargetChooser::reference() const
{
    return m_reference->currentData().toString();
}

void TargetChooser::setLocalGpus(const QStringList& specs, const QStringList& labels)
{
    m_gpuSpecs = specs;
    m_gpuLabels = labels;
    showLocalGpus();
}

// The GPU lines at the end of the target list: one unchecked target per local GPU (a GPU already
// listed keeps its check), or a note when there is none.
void TargetChooser::showLocalGpus()
{
    for (int i = m_targets->count() - 1; i >= 0; --i) {
        QListWidgetItem* item = m_targets->item(i);
        const bool gpu = item->data(kSpecRole).toString().startsWith(QStringLiteral("cuda:"));
        const bool note = item->data(kGpuNoteRole).toBool();
        if (note || (gpu && !m_gpuSpecs.contains(item->data(kSpecRole).toString()) &&
                     item->checkState() == Qt::Unchecked))
            delete m_targets->takeItem(i);
    }
    for (qsizetype g = 0; g < m_gpuSpecs.size(); ++g) {
        bool listed = false;
        for (int i = 0; i < m_targets->count() && !listed; ++i)
            listed = m_targets->item(i)->data(kSpecRole).toString() == m_gpuSpecs[g];
        if (!listed)
            addTargetItem(m_gpuSpecs[g], m_gpuLabels.value(g),
                          tr("Replay on this machine's GPU %1").arg(m_gpuSpecs[g]), false);
    }
    if (m_gpuSpecs.isEmpty()) {
        auto* cuda = new QListWidgetItem(tr("CUDA devices: none found (see the Devices tab)"), m_targets);
        cuda->setFlags(Qt::NoItemFlags);
        cuda->setData(kGpuNoteRole, true);
        cuda->setToolTip(
            tr("This machine's GPUs are listed in the Devices tab, with the reason when there are none; "
               "cuda:<index> can still be added below"));
    }
}

void TargetChooser::addCustomTarget()
{
    QString error;
    const QString spec = normalise(m_customTarget->text(), &error);
    if (spec.isEmpty()) {
        emit targetRefused(error);
        return;
    }
    addTargetItem(spec, QString(), modelDescription(spec), true);
    m_customTarget->clear();
    // Kept for this incident: reopening it offers the target again.
    if (const QString key = customTargetsKey(); !key.isEmpty()) {
        QSettings settings;
        QStringList kept = settings.value(key).toStringList();
        if (!kept.contains(spec)) settings.setValue(key, kept << spec);
    }
    emit targetAdded(spec);
}

QString TargetChooser::customTargetsKey() const
{
    if (!m_incident || m_incident->paths.isEmpty()) return {};
    // The trace names the incident (its path, made absolute); without one, its files do.
    const QString id = m_incident->tracePath.isEmpty() ? m_incident->paths.join(QLatin1Char('\n'))
                                                       : QFileInfo(m_incident->tracePath).absoluteFilePath();
    return QStringLiteral("replayCustomTargets/") +
           QString::fromLatin1(QCryptographicHash::hash(id.toUtf8(), QCryptographicHash::Sha1).toHex());
}

bool TargetChooser::setCheckedTargets(const QStringList& specs, QString* error)
{
    QStringList normalised;
    for (const QString& s : specs) {
        const QString n = normalise(s, error);
        if (n.isEmpty()) return false;
        normalised << n;
    }
    for (int i = 0; i < m_targets->count(); ++i) {
        QListWidgetItem* item = m_targets->item(i);
        if (item->flags() & Qt::ItemIsUserCheckable) item->setCheckState(Qt::Unchecked);
    }
    for (const QString& n : normalised) addTargetItem(n, QString(), modelDescription(n), true);
    return true;
}

QStringList TargetChooser::checkedTargets() const
{
    QStringList out;
    for (int i = 0; i < m_targets->count(); ++i) {
        const QListWidgetItem* item = m_targets->item(i);
        if ((item->flags() & Qt::ItemIsUserCheckable) && item->checkState() == Qt::Checked)
            out << item->data(kSpecRole).toString();
    }
    return out;
}

QStringList TargetChooser::availableTargets() const
{
    QStringList out;
    for (int i = 0; i < m_targets->count(); ++i)
        if (m_targets->item(i)->flags() & Qt::ItemIsUserCheckable)
            out << m_targets->item(i)->data(kSpecRole).toString();
    return out;
}

}  // namespace faultline::views
