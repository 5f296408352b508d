#include "views/incident/IncidentBanner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/plots/PlotStyle.h"

namespace faultline::views {

IncidentBanner::IncidentBanner(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("incidentBanner"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 2);
    layout->setSpacing(4);
    m_story = new QLabel(
        tr("Open a trace, a suspect and a reference snapshot, or both (Ctrl+O or drop files here). "
           "Try <code>faultline demo</code> for a worked incident."));
    m_story->setObjectName(QStringLiteral("incidentStory"));
    m_story->setWordWrap(true);
    m_story->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_story);

    m_progressRow = new QWidget;
    auto* pl = new QHBoxLayout(m_progressRow);
    pl->setContentsMargins(0, 0, 0, 0);
    m_progressText = new QLabel;
    m_progressText->setObjectName(QStringLiteral("incidentProgressText"));
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(260);
    auto* cancel = new QToolButton;
    cancel->setObjectName(QStringLiteral("incidentCancel"));
    cancel->setText(tr("Cancel"));
    pl->addWidget(m_progressText, 1);
    pl->addWidget(m_progress);
    pl->addWidget(cancel);
    layout->addWidget(m_progressRow);
    m_progressRow->hide();

    m_errorRow = new QWidget;
    auto* el = new QHBoxLayout(m_errorRow);
    el->setContentsMargins(0, 0, 0, 0);
    m_error = new QLabel;
    m_error->setObjectName(QStringLiteral("incidentError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* dismiss = new QToolButton;
    dismiss->setText(tr("Dismiss"));
    el->addWidget(m_error, 1);
    el->addWidget(dismiss);
    layout->addWidget(m_errorRow);
    m_errorRow->hide();

    connect(cancel, &QToolButton::clicked, this, &IncidentBanner::cancelRequested);
    connect(dismiss, &QToolButton::clicked, this, &IncidentBanner::clearError);
}

QString IncidentBanner::story(const Incident& inc)
{
    QStringList lines;
    if (inc.bisect) {
        int divergent = 0;
        for (const BisectOp& b : inc.bisect->ops)
            if (b.verdict == BisectVerdict::Divergent) ++divergent;
        const IncidentEntry* first = inc.firstDivergentEntry ? inc.entry(*inc.firstDivergentEntry) : nullptr;
        if (first && first->divergence) {
            const Divergence& d = *first->divergence;
            const QString against =
                first->peerLabel.isEmpty()
                    ? tr("beyond the golden model's error bound")
                    : tr("differing from peer %1's bits").arg(first->peerLabel.toHtmlEscaped());
            lines << tr("<b>Corruption enters at op %1 %2</b> (%3) on %4: %5 of %6 elements %10, max %7 "
                        "ulp. %8 of %9 ops divergent.")
                         .arg(first->opIndex)
                         .arg(first->opKind, first->name.toHtmlEscaped(), inc.suspectLabel.toHtmlEscaped())
                         .arg(d.beyondTolerance)
                         .arg(d.elements)
                         .arg(d.maxUlp)
                         .arg(divergent)
                         .arg(inc.bisect->ops.size())
                         .arg(against);
            lines << tr("Signature: <b>%1</b> — %2")
                         .arg(QString::fromUtf8(signatureKindName(d.signature.kind).data()),
                              QString::fromStdString(d.signature.detail).toHtmlEscaped());
        } else if (first) {
            lines << tr("<b>Corruption enters at op %1 %2</b> (%3): %4")
                         .arg(first->opIndex)
                         .arg(first->opKind, first->name.toHtmlEscaped(), first->detail.toHtmlEscaped());
        } else if (inc.bisect->checkedOps == 0) {
            lines << tr("<b>No op could be checked</b> against the golden model (%1 ops): no verdict.")
                         .arg(inc.bisect->ops.size());
        } else if (!inc.bisect->peer.empty()) {
            const auto byPeer = inc.bisect->judgedBy.find(BisectJudge::Peer);
            lines << tr("<b>No op left its judgement</b>: %1's recorded outputs agree with peer %2 bit for "
                        "bit (%3 ops) and with the golden model (%4 of %5 ops checked).")
                         .arg(inc.suspectLabel.toHtmlEscaped(),
                              QString::fromStdString(inc.bisect->peer).toHtmlEscaped())
                         .arg(byPeer == inc.bisect->judgedBy.end() ? 0 : byPeer->second)
                         .arg(inc.bisect->checkedOps)
                         .arg(inc.bisect->ops.size());
        } else {
            lines << tr("<b>No op left its error bound</b>: %1's recorded outputs agree with the golden "
                        "model (%2 of %3 ops checked).")
                         .arg(inc.suspectLabel.toHtmlEscaped())
                         .arg(inc.bisect->checkedOps)
                         .arg(inc.bisect->ops.size());
        }
    }
    if (inc.compare) {
        int beyond = 0;
        for (const Divergence& d : inc.compare->tensors)
            if (d.beyondTolerance) ++beyond;
        QString line = tr("<b>Checkpoints:</b> %1 of %2 tensors differ beyond %3")
                           .arg(beyond)
                           .arg(inc.compare->tensors.size())
                           .arg(QString::fromStdString(inc.compare->tolerance.toString()));
        if (beyond) {
            const Divergence& worst = inc.compare->tensors.front();
            line += tr("; worst: %1 (%2 elements, %3)")
                        .arg(QString::fromStdString(worst.name).toHtmlEscaped())
                        .arg(worst.beyondTolerance)
                        .arg(QString::fromUtf8(signatureKindName(worst.signature.kind).data()));
        }
        if (!inc.compare->unpaired.empty() || !inc.compare->errors.empty())
            line += tr(" · %1 unpaired, %2 not comparable")
                        .arg(inc.compare->unpaired.size())
                        .arg(inc.compare->errors.size());
        lines << line;
    }
    if (inc.singleFile)
        lines << tr("<b>%1 tensors listed.</b> Open a reference snapshot with it to compare (suspect first).")
                     .arg(inc.singleFile->tensors().size());
    if (!inc.warnings.isEmpty())
        lines << tr("<i>%n warning(s); first: %1</i>", nullptr, int(inc.warnings.size()))
                     .arg(inc.warnings.front().toHtmlEscaped());
    return lines.join(QStringLiteral("<br>"));
}

void IncidentBanner::setIncident(std::shared_ptr<const Incident> incident)
{
    m_story->setText(incident ? story(*incident) : QString());
}

void IncidentBanner::showProgress(double fraction, const QString& what)
{
    // QProgressBar repaints synchronously on every visible change, and progress reports queue up
    // while the GUI thread waits for a core: painting each of them in one event-loop turn froze
    // the window for tens of milliseconds. Only the latest report is painted, once per turn.
    m_pendingFraction = fraction;
    m_pendingText = what;
    if (m_progressRow->isHidden()) {
        applyProgressOnUi();
        m_progressRow->show();
        return;
    }
    if (m_progressPending) return;
    m_progressPending = true;
    QTimer::singleShot(0, this, &IncidentBanner::applyProgressOnUi);
}

void IncidentBanner::applyProgressOnUi()
{
    m_progressPending = false;
    m_progress->setValue(int(m_pendingFraction * 1000));
    m_progressText->setText(m_pendingText);
}

void IncidentBanner::hideProgress()
{
    m_progressRow->hide();
}

void IncidentBanner::showError(const QString& message, const QString& title)
{
    m_error->setText(
        QStringLiteral("<span style='color:%1'><b>%2</b> %3</span>")
            .arg(PlotStyle::divergentColor().name(), title.toHtmlEscaped(), message.toHtmlEscaped()));
    m_errorRow->show();
}

void IncidentBanner::clearError()
{
    m_error->clear();
    m_errorRow->hide();
}

QString IncidentBanner::storyText() const
{
    return m_story->text();
}

QString IncidentBanner::errorText() const
{
    return m_error->text();
}

bool IncidentBanner::progressVisible() const
{
    return !m_progressRow->isHidden();
}

}  // namespace faultline::views
