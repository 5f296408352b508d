#include "views/incident/IncidentPage.h"

#include <qcustomplot.h>
#include <QDataStream>
#include <QEvent>
#include <QSplitter>
#include <QVBoxLayout>

#include "views/heatmap/ElementValueLoader.h"
#include "views/heatmap/HeatmapView.h"
#include "views/incident/IncidentBanner.h"
#include "views/plots/BitHistogramView.h"
#include "views/plots/ErrorDistributionView.h"
#include "views/plots/ModelDivergenceView.h"

namespace faultline::views {

IncidentPage::IncidentPage(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("incidentPage"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_banner = new IncidentBanner;
    layout->addWidget(m_banner);

    m_heatmap = new HeatmapView;
    m_bits = new BitHistogramView;
    m_errors = new ErrorDistributionView;
    m_model = new ModelDivergenceView;
    m_side = new QSplitter(Qt::Vertical);
    m_side->setObjectName(QStringLiteral("sideSplitter"));
    m_side->addWidget(m_bits);
    m_side->addWidget(m_errors);
    m_top = new QSplitter(Qt::Horizontal);
    m_top->setObjectName(QStringLiteral("topSplitter"));
    m_top->addWidget(m_heatmap);
    m_top->addWidget(m_side);
    m_top->setStretchFactor(0, 5);
    m_top->setStretchFactor(1, 4);
    m_vertical = new QSplitter(Qt::Vertical);
    m_vertical->setObjectName(QStringLiteral("pageSplitter"));
    m_vertical->addWidget(m_top);
    m_vertical->addWidget(m_model);
    m_vertical->setStretchFactor(0, 2);
    m_vertical->setStretchFactor(1, 1);
    layout->addWidget(m_vertical, 1);
    // Defaults until a saved layout is restored (scaled to the real size when shown).
    m_top->setSizes({560, 440});
    m_side->setSizes({300, 300});
    m_vertical->setSizes({640, 290});

    m_values = new ElementValueLoader(this);
    connect(m_values, &ElementValueLoader::loaded, this,
            [this](quint64, std::shared_ptr<const ElementValues> v) {
                m_heatmap->setElementValues(v);
                emit elementValuesSettled(v->entryId, true);
            });
    connect(m_values, &ElementValueLoader::unavailable, this, [this](quint64, const QString& reason) {
        m_heatmap->setElementValuesUnavailable(reason);
        emit elementValuesSettled(m_entry, false);
    });
    // The heatmap zoomed to single elements where none are held: read that window.
    connect(m_heatmap, &HeatmapView::elementWindowWanted, this, [this](int entryId, ElementWindow window) {
        if (entryId == m_entry && m_incident) m_values->loadOnWorker(m_incident, entryId, window);
    });
    connect(m_model, &ModelDivergenceView::entryClicked, this, &IncidentPage::entryClicked);
    for (QCustomPlot* p : {m_heatmap->plot(), m_bits->plot(), m_errors->plot(), m_model->plot()})
        p->installEventFilter(this);
    m_currentPlot = m_heatmap->plot();
}

void IncidentPage::setIncident(std::shared_ptr<const Incident> incident)
{
    m_values->reset();
    m_incident = std::move(incident);
    m_entry = -1;
    m_banner->setIncident(m_incident);
    m_heatmap->setEntry(m_incident, -1);
    m_bits->setEntry(m_incident, -1);
    m_errors->setEntry(m_incident, -1);
    m_model->setIncident(m_incident);
}

void IncidentPage::showEntry(int entryId)
{
    m_entry = entryId;
    m_heatmap->setEntry(m_incident, entryId);
    m_bits->setEntry(m_incident, entryId);
    m_errors->setEntry(m_incident, entryId);
    m_model->setSelectedEntry(entryId);
    const IncidentEntry* e = m_incident ? m_incident->entry(entryId) : nullptr;
    if (e && e->divergence && e->divergence->mismatches > 0) {
        m_values->loadOnWorker(m_incident, entryId);
    } else {
        m_values->reset();
        if (e) emit elementValuesSettled(entryId, false);
    }
}

void IncidentPage::setCurrentPlot(QCustomPlot* plot)
{
    if (plot) m_currentPlot = plot;
}

bool IncidentPage::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::MouseButtonPress || event->type() == QEvent::FocusIn)
        if (auto* plot = qobject_cast<QCustomPlot*>(watched)) m_currentPlot = plot;
    return QWidget::eventFilter(watched, event);
}

QByteArray IncidentPage::saveLayout() const
{
    QByteArray out;
    QDataStream s(&out, QIODevice::WriteOnly);
    s << quint32(1) << m_vertical->saveState() << m_top->saveState() << m_side->saveState();
    return out;
}

void IncidentPage::restoreLayout(const QByteArray& state)
{
    QDataStream s(state);
    quint32 version = 0;
    QByteArray v, t, side;
    s >> version >> v >> t >> side;
    if (version != 1 || s.status() != QDataStream::Ok) return;
    m_vertical->restoreState(v);
    m_top->restoreState(t);
    m_side->restoreState(side);
}

}  // namespace faultline::views
