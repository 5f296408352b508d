#include "views/plots/ModelDivergenceView.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "views/incident/DivergenceTreeModel.h"
#include "views/plots/PlotStyle.h"

namespace faultline::views {
namespace {

constexpr double kBarBase = 0.7;
constexpr int kMaxLabels = 48;

QString shortName(const IncidentEntry& e)
{
    const QStringList parts = DivergenceTreeModel::splitPath(e.name);
    if (e.source == EntrySource::TraceOp) return QStringLiteral("%1 %2").arg(e.opIndex).arg(parts.last());
    return parts.size() >= 2 ? parts[parts.size() - 2] + QLatin1Char('.') + parts.last() : parts.last();
}

}  // namespace

ModelDivergenceView::ModelDivergenceView(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("modelDivergenceView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Across:")));
    m_sourceBox = new QComboBox;
    m_sourceBox->setObjectName(QStringLiteral("modelSource"));
    m_sourceBox->addItem(tr("Trace ops (execution order)"), int(EntrySource::TraceOp));
    m_sourceBox->addItem(tr("Checkpoint tensors (name order)"), int(EntrySource::Tensor));
    bar->addWidget(m_sourceBox);
    bar->addStretch(1);
    layout->addLayout(bar);

    m_plot = new QCustomPlot;
    m_plot->setObjectName(QStringLiteral("modelDivergencePlot"));
    m_plot->setMinimumSize(320, 160);
    m_plot->plotLayout()->insertRow(0);
    const QFont titleFont = PlotStyle::titleFont(font());
    m_title = new QCPTextElement(m_plot, tr("Divergence across the model"), titleFont);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setName(tr("beyond tolerance"));
    m_firstBars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_firstBars->setName(tr("first divergent op"));
    for (QCPBars* b : {m_bars, m_firstBars}) {
        b->setWidth(0.75);
        b->setBaseValue(kBarBase);
    }
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_plot->yAxis->setNumberFormat(QStringLiteral("eb"));
    m_plot->yAxis->setNumberPrecision(0);
    m_plot->yAxis->setLabel(tr("beyond tol."));
    m_plot->xAxis->setTickLabelRotation(30);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->legend->setVisible(true);
    PlotStyle::placeLegendInRow(m_plot, 1);

    m_selectionFrame = new QCPItemRect(m_plot);
    m_selectionFrame->setBrush(Qt::NoBrush);
    m_firstLabel = new QCPItemText(m_plot);
    m_firstLabel->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
    m_firstLabel->setPadding(QMargins(2, 2, 2, 4));
    m_message = new QCPItemText(m_plot);
    m_message->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_message->position->setCoords(0.5, 0.5);
    m_message->setPositionAlignment(Qt::AlignCenter);
    layout->addWidget(m_plot, 1);

    connect(m_sourceBox, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this](int i) { setSource(EntrySource(m_sourceBox->itemData(i).toInt())); });
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* ev) {
        const int id = entryAtPixel(ev->position().x());
        if (id >= 0) emit entryClicked(id);
    });
    connect(m_plot, &QCustomPlot::mouseMove, this, &ModelDivergenceView::onMouseMoveOnUi);
    PlotStyle::apply(m_plot);
    refresh();
}

void ModelDivergenceView::setIncident(std::shared_ptr<const Incident> incident)
{
    m_incident = std::move(incident);
    m_selected = -1;
    m_source = m_incident && !m_incident->hasTrace() ? EntrySource::Tensor : EntrySource::TraceOp;
    refresh();
}

void ModelDivergenceView::setSelectedEntry(int entryId)
{
    m_selected = entryId;
    const IncidentEntry* e = m_incident ? m_incident->entry(entryId) : nullptr;
    if (e && e->source != m_source) {
        setSource(e->source);
        return;
    }
    refresh();
}

void ModelDivergenceView::setSource(EntrySource source)
{
    m_source = source;
    refresh();
}

std::vector<double> ModelDivergenceView::shownValues() const
{
    std::vector<double> out(m_order.size(), 0.0);
    for (QCPBars* b : {m_bars, m_firstBars})
        for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it)
            if (it->key >= 0 && size_t(it->key) < out.size()) out[size_t(it->key)] = it->value;
    return out;
}

int ModelDivergenceView::entryAtPixel(double x) const
{
    const long pos = std::lround(m_plot->xAxis->pixelToCoord(x));
    return pos >= 0 && size_t(pos) < m_order.size() ? m_order[size_t(pos)] : -1;
}

void ModelDivergenceView::onMouseMoveOnUi(QMouseEvent* event)
{
    const IncidentEntry* e = m_incident ? m_incident->entry(entryAtPixel(event->position().x())) : nullptr;
    if (!e) return;
    QString text = e->source == EntrySource::TraceOp
                       ? tr("op %1 %2 · %3").arg(e->opIndex).arg(e->opKind, e->name)
                       : e->name;
    text += QStringLiteral("\n") + e->verdict;
    if (const Divergence* d = e->divergence) {
        text += tr("\n%1 of %2 beyond tolerance · %3 mismatches · max %4 ulp")
                    .arg(d->beyondTolerance)
                    .arg(d->elements)
                    .arg(d->mismatches)
                    .arg(d->maxUlp);
        if (d->mismatches)
            text += QStringLiteral("\n") + QString::fromUtf8(signatureKindName(d->signature.kind).data());
    } else if (!e->detail.isEmpty()) {
        text += QStringLiteral("\n") + e->detail;
    }
    QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
}

void ModelDivergenceView::refresh()
{
    m_bars->data()->clear();
    m_firstBars->data()->clear();
    m_order.clear();
    m_highlighted.reset();
    const QColor red = PlotStyle::divergentColor(), first = PlotStyle::firstDivergentColor();
    m_bars->setBrush(red);
    m_bars->setPen(QPen(red.darker(130)));
    m_firstBars->setBrush(first);
    m_firstBars->setPen(QPen(first.darker(140)));
    const bool hasOps = m_incident && m_incident->hasTrace();
    const bool hasTensors = m_incident && !m_incident->entriesOf(EntrySource::Tensor).empty();
    if (auto* model = qobject_cast<QStandardItemModel*>(m_sourceBox->model())) {
        model->item(0)->setEnabled(hasOps);
        model->item(1)->setEnabled(hasTensors);
    }
    {
        const QSignalBlocker block(m_sourceBox);
        m_sourceBox->setCurrentIndex(m_sourceBox->findData(int(m_source)));
    }
    if (m_incident) m_order = m_incident->entriesOf(m_source);

    double top = 1;
    auto ticker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    const size_t labelStep = std::max<size_t>(1, (m_order.size() + kMaxLabels - 1) / kMaxLabels);
    for (size_t pos = 0; pos < m_order.size(); ++pos) {
        const IncidentEntry& e = m_incident->entries[size_t(m_order[pos])];
        const bool isFirst = m_incident->firstDivergentEntry && *m_incident->firstDivergentEntry == e.id;
        if (isFirst) m_highlighted = e.id;
        if (pos % labelStep == 0 || isFirst) ticker->addTick(double(pos), shortName(e));
        if (!e.divergence || e.divergence->beyondTolerance == 0) continue;
        const double v = double(e.divergence->beyondTolerance);
        (isFirst ? m_firstBars : m_bars)->addData(double(pos), v);
        top = std::max(top, v);
    }
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(-0.7, std::max<double>(1.0, double(m_order.size())) - 0.3);
    m_plot->yAxis->setRange(kBarBase, top * 12);
    m_firstBars->removeFromLegend();
    if (!m_firstBars->data()->isEmpty()) m_firstBars->addToLegend();
    if (m_order.empty())
        m_title->setText(tr("Divergence across the model"));
    else if (m_source == EntrySource::TraceOp)
        m_title->setText(tr("Where divergence starts: beyond-tolerance elements per op, in execution order"));
    else
        m_title->setText(tr("Beyond-tolerance elements per checkpoint tensor, by name"));

    m_firstLabel->setVisible(false);
    if (m_highlighted) {
        const auto it = std::find(m_order.begin(), m_order.end(), *m_highlighted);
        const double pos = double(it - m_order.begin());
        const IncidentEntry& e = m_incident->entries[size_t(*m_highlighted)];
        m_firstLabel->position->setCoords(pos, double(e.divergence ? e.divergence->beyondTolerance : 1));
        m_firstLabel->setText(tr("first divergent: op %1 %2").arg(e.opIndex).arg(e.opKind));
        m_firstLabel->setColor(first);
        QFont f = font();
        f.setBold(true);
        m_firstLabel->setFont(f);
        m_firstLabel->setVisible(true);
    }
    const auto sel = std::find(m_order.begin(), m_order.end(), m_selected);
    m_selectionFrame->setVisible(sel != m_order.end());
    if (sel != m_order.end()) {
        const double pos = double(sel - m_order.begin());
        m_selectionFrame->topLeft->setCoords(pos - 0.48, top * 11);
        m_selectionFrame->bottomRight->setCoords(pos + 0.48, kBarBase);
        m_selectionFrame->setPen(QPen(PlotStyle::selectionColor(), 2));
    }
    QString message;
    if (!m_incident)
        message = tr("Open a trace or a pair of snapshots");
    else if (m_order.empty())
        message = tr("Nothing of this kind in the incident");
    else if (m_bars->data()->isEmpty() && m_firstBars->data()->isEmpty())
        message = tr("Nothing beyond tolerance");
    m_message->setText(message);
    m_message->setColor(palette().color(QPalette::Text));
    m_message->setVisible(!message.isEmpty());
    PlotStyle::styleLegend(m_plot->legend);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ModelDivergenceView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) {
        PlotStyle::apply(m_plot);
        refresh();
    }
}

}  // namespace faultline::views
