#include "views/plots/RateByConditionPlot.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/replay/StoppingRule.h"
#include "views/plots/PlotStyle.h"

namespace faultline::views {

namespace {

constexpr double kLowestFloor = 1e-9;

// A line or label placed at plot x and at a fraction of the axis rect's height in y (0 = top).
void placeAtXAndRatio(QCPItemPosition* p, QCustomPlot* plot, double x, double ratio)
{
    p->setAxes(plot->xAxis, plot->yAxis);
    p->setAxisRect(plot->axisRect());
    p->setTypeX(QCPItemPosition::ptPlotCoords);
    p->setTypeY(QCPItemPosition::ptAxisRectRatio);
    p->setCoords(x, ratio);
}

}  // namespace

RateByConditionPlot::RateByConditionPlot(std::shared_ptr<const RateByCondition> rates, QWidget* parent)
    : QWidget(parent), m_rates(std::move(rates))
{
    setObjectName(QStringLiteral("rateByConditionPlot"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    m_logBox = new QCheckBox(tr("Logarithmic rate axis"));
    m_logBox->setObjectName(QStringLiteral("rateLogAxis"));
    m_logBox->setChecked(m_log);
    bar->addWidget(m_logBox);
    bar->addWidget(
        new QLabel(tr("● fired: rate and its interval    ▽ never fired: the rate the clean runs rule "
                      "out (the true rate is below)")));
    bar->addStretch(1);
    layout->addLayout(bar);
    m_plot = new QCustomPlot;
    m_plot->setObjectName(QStringLiteral("rateByConditionChart"));
    m_plot->setMinimumSize(360, 240);
    layout->addWidget(m_plot, 1);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0,
                                     new QCPTextElement(m_plot,
                                                        tr("Failure rate by condition: %1, %2 runs each")
                                                            .arg(QString::fromStdString(m_rates->op))
                                                            .arg(m_rates->runsPerCondition),
                                                        PlotStyle::titleFont(font())));
    m_plot->legend->setVisible(true);
    PlotStyle::placeLegendInRow(m_plot, 2);
    connect(m_logBox, &QCheckBox::toggled, this, &RateByConditionPlot::setLogScale);
    rebuild();
}

void RateByConditionPlot::setLogScale(bool log)
{
    if (log == m_log) return;
    m_log = log;
    if (m_logBox->isChecked() != log) m_logBox->setChecked(log);
    rebuild();
}

double RateByConditionPlot::floorRate() const
{
    if (!m_log) return 0;
    double lowest = 1;
    for (const ConditionRate& p : m_rates->rates) {
        if (!p.replayable || p.runs == 0) continue;
        for (double v : {p.low, p.rate, p.rateBelow})
            if (v > 0) lowest = std::min(lowest, v);
    }
    return std::clamp(lowest / 4, kLowestFloor, 0.1);
}

std::vector<RateByConditionPlot::Point> RateByConditionPlot::shownPoints() const
{
    return m_points;
}

QStringList RateByConditionPlot::groupLabels() const
{
    return m_groupLabels;
}

void RateByConditionPlot::rebuild()
{
    m_plot->clearPlottables();
    m_plot->clearItems();
    m_points.clear();
    m_groupLabels.clear();
    const RateByCondition& r = *m_rates;
    const double floor = floorRate();
    const size_t targets = std::max<size_t>(r.targets.size(), 1);
    const std::vector<QColor> colours = PlotStyle::categoricalColours(targets);
    const double step = std::min(0.6 / double(targets), 0.2);

    for (size_t t = 0; t < r.targets.size(); ++t) {
        const QString target = QString::fromStdString(r.targets[t]);
        const double offset = (double(t) - double(targets - 1) / 2) * step;
        auto* fired = new QCPGraph(m_plot->xAxis, m_plot->yAxis);
        fired->setName(tr("%1 fired").arg(target));
        fired->setLineStyle(QCPGraph::lsNone);
        fired->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colours[t], colours[t], 8));
        auto* never = new QCPGraph(m_plot->xAxis, m_plot->yAxis);
        never->setName(tr("%1 never fired").arg(target));
        never->setLineStyle(QCPGraph::lsNone);
        never->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, QPen(colours[t], 1.5), Qt::NoBrush, 9));
        QVector<double> fx, fy, fMinus, fPlus, nx, ny, nMinus, nPlus;
        for (const ConditionRate& p : r.rates) {
            if (p.target != r.targets[t] || !p.replayable || p.runs == 0) continue;
            const ExploreConditionInfo& c = r.conditions[p.condition];
            Point point{target, QString::fromStdString(c.label), QString::fromStdString(c.kind),
                        double(p.condition) + offset};
            point.fired = p.fired();
            if (point.fired) {
                point.rate = p.rate;
                point.low = std::max(p.low, floor);
                point.high = p.high;
                fx << point.x;
                fy << point.rate;
                fMinus << point.rate - point.low;
                fPlus << point.high - point.rate;
            } else {
                const double bound = p.rateBelow > 0 ? p.rateBelow : p.high;
                point.rate = point.high = bound;
                point.low = floor;
                nx << point.x;
                ny << bound;
                nMinus << std::max(bound - floor, 0.0);
                nPlus << 0.0;
            }
            m_points.push_back(point);
        }
        fired->setData(fx, fy, true);
        never->setData(nx, ny, true);
        auto* firedBars = new QCPErrorBars(m_plot->xAxis, m_plot->yAxis);
        firedBars->removeFromLegend();
        firedBars->setDataPlottable(fired);
        firedBars->setData(fMinus, fPlus);
        firedBars->setPen(QPen(colours[t], 1.5));
        auto* neverBars = new QCPErrorBars(m_plot->xAxis, m_plot->yAxis);
        neverBars->removeFromLegend();
        neverBars->setDataPlottable(never);
        neverBars->setData(nMinus, nPlus);
        neverBars->setWhiskerWidth(0);
        neverBars->setPen(QPen(colours[t], 1, Qt::DashLine));
        if (fx.isEmpty()) fired->removeFromLegend();
        if (nx.isEmpty()) never->removeFromLegend();
    }

    // Conditions by name along x, grouped by kind between separators.
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (size_t i = 0; i < r.conditions.size(); ++i)
        ticker->addTick(double(i), QString::fromStdString(r.conditions[i].label));
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setTickLabelRotation(60);
    m_plot->xAxis->setSubTicks(false);
    m_plot->xAxis->grid()->setVisible(false);
    m_plot->xAxis->setRange(-0.6, std::max<double>(double(r.conditions.size()) - 0.4, 0.6));
    const QColor text = palette().color(QPalette::WindowText);
    for (const ConditionKindGroup& g : r.groups) {
        m_groupLabels << QString::fromStdString(g.kind);
        if (g.first > 0) {
            auto* line = new QCPItemLine(m_plot);
            placeAtXAndRatio(line->start, m_plot, double(g.first) - 0.5, 0);
            placeAtXAndRatio(line->end, m_plot, double(g.first) - 0.5, 1);
            line->setPen(QPen(text, 1));
        }
        auto* label = new QCPItemText(m_plot);
        placeAtXAndRatio(label->position, m_plot, double(g.first) + double(g.count - 1) / 2, 0.01);
        label->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
        label->setText(QString::fromStdString(g.kind));
        label->setColor(text);
        QFont bold = font();
        bold.setBold(true);
        label->setFont(bold);
    }

    if (m_log) {
        m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        m_plot->yAxis->setNumberFormat(QStringLiteral("eb"));
        m_plot->yAxis->setNumberPrecision(0);
        m_plot->yAxis->setRange(floor, 3);  // room above 100% for the group names
    } else {
        m_plot->yAxis->setScaleType(QCPAxis::stLinear);
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        m_plot->yAxis->setNumberFormat(QStringLiteral("g"));
        m_plot->yAxis->setNumberPrecision(3);
        m_plot->yAxis->setRange(0, 1.12);
    }
    m_plot->yAxis->setLabel(
        tr("failure rate (%1 interval)").arg(QString::fromStdString(confidenceText(r.confidence))));
    PlotStyle::apply(m_plot);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace faultline::views
