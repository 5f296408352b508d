#include "views/plots/ErrorDistributionView.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <algorithm>

#include "views/plots/PlotStyle.h"

namespace faultline::views {
namespace {

constexpr double kBarBase = 0.7;  // bars start here on the log count axis

QString superscript(int n)
{
    static const QString digits = QStringLiteral("⁰¹²³⁴⁵⁶⁷⁸⁹");
    QString out = n < 0 ? QStringLiteral("⁻") : QString();
    for (QChar c : QString::number(std::abs(n))) out += digits[c.digitValue()];
    return out;
}

void setupLogCounts(QCPAxis* axis)
{
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    axis->setNumberFormat(QStringLiteral("eb"));
    axis->setNumberPrecision(0);
    axis->setLabel(QObject::tr("elements"));
}

// A step between labelled bins so that at most `labels` labels share the axis.
int labelStep(int lo, int hi, int labels)
{
    const int bins = hi - lo + 1;
    return std::max(1, (bins + labels - 1) / labels);
}

std::vector<std::pair<double, double>> barsOf(const QCPBars* bars)
{
    std::vector<std::pair<double, double>> out;
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
        out.push_back({it->key, it->value});
    return out;
}

}  // namespace

ErrorDistributionView::ErrorDistributionView(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("errorDistributionView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Right panel:")));
    m_kindBox = new QComboBox;
    m_kindBox->addItem(tr("Relative error"));
    m_kindBox->addItem(tr("Absolute error"));
    bar->addWidget(m_kindBox);
    bar->addStretch(1);
    layout->addLayout(bar);

    m_plot = new QCustomPlot;
    m_plot->setObjectName(QStringLiteral("errorDistributionPlot"));
    m_plot->setMinimumSize(260, 160);
    m_plot->plotLayout()->clear();
    const QFont titleFont = PlotStyle::titleFont(font());
    m_title = new QCPTextElement(m_plot, tr("Error distribution"), titleFont);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    auto* rects = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, rects);
    m_ulpRect = new QCPAxisRect(m_plot);
    m_decadeRect = new QCPAxisRect(m_plot);
    rects->addElement(0, 0, m_ulpRect);
    rects->addElement(0, 1, m_decadeRect);
    for (QCPAxisRect* r : {m_ulpRect, m_decadeRect}) {
        setupLogCounts(r->axis(QCPAxis::atLeft));
        r->setRangeZoom(Qt::Horizontal);
        r->setRangeDrag(Qt::Horizontal);
    }
    m_ulpRect->axis(QCPAxis::atBottom)->setLabel(tr("ulp distance"));
    m_decadeRect->axis(QCPAxis::atLeft)->setLabel(QString());
    m_ulpBars = new QCPBars(m_ulpRect->axis(QCPAxis::atBottom), m_ulpRect->axis(QCPAxis::atLeft));
    m_decadeBars = new QCPBars(m_decadeRect->axis(QCPAxis::atBottom), m_decadeRect->axis(QCPAxis::atLeft));
    for (QCPBars* b : {m_ulpBars, m_decadeBars}) {
        b->setWidth(0.8);
        b->setBaseValue(kBarBase);
    }
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    layout->addWidget(m_plot, 1);

    connect(m_kindBox, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this](int i) { setAbsolute(i == 1); });
    PlotStyle::apply(m_plot);
    refresh();
}

void ErrorDistributionView::setEntry(std::shared_ptr<const Incident> incident, int entryId)
{
    m_incident = std::move(incident);
    m_entryId = entryId;
    refresh();
}

void ErrorDistributionView::setAbsolute(bool absolute)
{
    m_absolute = absolute;
    if (m_kindBox->currentIndex() != (absolute ? 1 : 0)) {
        const QSignalBlocker block(m_kindBox);
        m_kindBox->setCurrentIndex(absolute ? 1 : 0);
    }
    refresh();
}

std::vector<std::pair<double, double>> ErrorDistributionView::ulpBars() const
{
    return barsOf(m_ulpBars);
}

std::vector<std::pair<double, double>> ErrorDistributionView::decadeBars() const
{
    return barsOf(m_decadeBars);
}

void ErrorDistributionView::refresh()
{
    m_ulpBars->data()->clear();
    m_decadeBars->data()->clear();
    const IncidentEntry* e = m_incident ? m_incident->entry(m_entryId) : nullptr;
    const Divergence* d = e ? e->divergence : nullptr;
    const QColor ulpColor = PlotStyle::neutralBarColor(), decColor = PlotStyle::divergentColor();
    m_ulpBars->setBrush(ulpColor);
    m_ulpBars->setPen(QPen(ulpColor.darker(130)));
    m_decadeBars->setBrush(decColor);
    m_decadeBars->setPen(QPen(decColor.darker(130)));

    double top = 1;
    int ulpLo = -1, ulpHi = -1;
    auto ulpTicker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    if (d) {
        for (size_t k = 0; k < d->ulpHistogram.size(); ++k)
            if (d->ulpHistogram[k]) {
                m_ulpBars->addData(double(k), double(d->ulpHistogram[k]));
                top = std::max(top, double(d->ulpHistogram[k]));
                if (ulpLo < 0) ulpLo = int(k);
                ulpHi = int(k);
            }
    }
    if (ulpLo < 0) {
        ulpLo = 0;
        ulpHi = 8;
    }
    ulpLo = std::max(0, ulpLo - 1);
    ulpHi += 1;
    m_labels = labelsThatFit();
    const int step = labelStep(ulpLo, ulpHi, m_labels);
    for (int k = ulpLo; k <= ulpHi; k += step)
        ulpTicker->addTick(k, k == 0 ? QStringLiteral("0") : QStringLiteral("2%1").arg(superscript(k - 1)));
    m_ulpRect->axis(QCPAxis::atBottom)->setTicker(ulpTicker);
    m_ulpRect->axis(QCPAxis::atBottom)->setRange(ulpLo - 0.7, ulpHi + 0.7);

    const ErrorStats* stats = d ? (m_absolute ? &d->absError : &d->relError) : nullptr;
    int lo = -8, hi = 0;
    bool any = false;
    if (stats) {
        const auto& dec = stats->histogram.decades;
        for (size_t k = 0; k < dec.size(); ++k) {
            if (!dec[k]) continue;
            const int decade = DecadeHistogram::kMinDecade + int(k);
            m_decadeBars->addData(double(decade), double(dec[k]));
            top = std::max(top, double(dec[k]));
            lo = any ? std::min(lo, decade) : decade;
            hi = any ? std::max(hi, decade) : decade;
            any = true;
        }
    }
    if (any) {
        lo -= 1;
        hi += 1;
    }
    auto decTicker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    const int dstep = labelStep(lo, hi, m_labels);
    for (int k = lo; k <= hi; k += dstep) decTicker->addTick(k, QStringLiteral("10%1").arg(superscript(k)));
    QCPAxis* decAxis = m_decadeRect->axis(QCPAxis::atBottom);
    decAxis->setTicker(decTicker);
    decAxis->setRange(lo - 0.7, hi + 0.7);
    QString decLabel = m_absolute ? tr("absolute error |s − r|") : tr("relative error |s − r| / |r|");
    if (d && !m_absolute && d->relInfinite) decLabel += tr(" · %1 with r = 0").arg(d->relInfinite);
    if (stats && stats->histogram.infinite) decLabel += tr(" · %1 infinite").arg(stats->histogram.infinite);
    decAxis->setLabel(decLabel);
    // At least one decade: a log axis over less (an empty view, or bars of a few elements) ticks
    // within the decade, and its integer labels repeat ("2·10⁰, 2·10⁰").
    const double axisTop = std::max(top * 2.5, 10.0);
    for (QCPAxisRect* r : {m_ulpRect, m_decadeRect}) r->axis(QCPAxis::atLeft)->setRange(kBarBase, axisTop);

    if (!e)
        m_title->setText(tr("Error sizes"));
    else if (!d || d->mismatches == 0)
        m_title->setText(tr("Error sizes: %1").arg(d ? tr("no mismatch") : tr("not compared")));
    else
        m_title->setText(tr("Error sizes · max %1 ulp").arg(d->maxUlp));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int ErrorDistributionView::labelsThatFit() const
{
    // Two plots side by side, each with its count axis (~60 px) to the left; a label such as
    // "2²³" or "10⁻¹⁵" with room around it takes ~40 px.
    const int perPlot = width() / 2 - 60;
    return std::clamp(perPlot / 40, 2, 8);
}

void ErrorDistributionView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (labelsThatFit() != m_labels) refresh();
}

void ErrorDistributionView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) {
        PlotStyle::apply(m_plot);
        refresh();
    }
}

}  // namespace faultline::views
