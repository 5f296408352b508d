#include "views/plots/BitHistogramView.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSignalBlocker>
#include <QToolTip>
#include <QVBoxLayout>
#include <cmath>

#include "views/plots/PlotStyle.h"

namespace faultline::views {
namespace {

const char* const kFields[] = {"sign", "exponent", "mantissa", "value"};

const BitFlips* flipsOf(const Divergence& d, BitHistogramView::Set set)
{
    switch (set) {
        case BitHistogramView::Set::Mismatches:
            return &d.bits;
        case BitHistogramView::Set::Beyond:
            return &d.beyondBits;
        case BitHistogramView::Set::Anomalies:
            return &d.anomalyBits;
    }
    return &d.bits;
}

}  // namespace

BitHistogramView::BitHistogramView(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("bitHistogramView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Bits of:")));
    m_setBox = new QComboBox;
    m_setBox->setObjectName(QStringLiteral("bitSet"));
    m_setBox->addItem(tr("All mismatches"), int(Set::Mismatches));
    m_setBox->addItem(tr("Beyond tolerance"), int(Set::Beyond));
    m_setBox->addItem(tr("Anomalies (not rounding)"), int(Set::Anomalies));
    bar->addWidget(m_setBox);
    bar->addStretch(1);
    layout->addLayout(bar);

    m_plot = new QCustomPlot;
    m_plot->setObjectName(QStringLiteral("bitHistogramPlot"));
    m_plot->setMinimumSize(260, 160);
    m_plot->plotLayout()->insertRow(0);
    const QFont titleFont = PlotStyle::titleFont(font());
    m_title = new QCPTextElement(m_plot, tr("Bit flips"), titleFont);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    for (const char* field : kFields) {
        auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(QString::fromLatin1(field));
        bars->setWidth(0.8);
        m_bars.push_back(bars);
    }
    m_plot->xAxis->setRangeReversed(true);  // sign | exponent | mantissa, as the bits are written
    m_plot->yAxis->setLabel(tr("elements"));
    m_plot->legend->setVisible(true);
    PlotStyle::placeLegendInRow(m_plot, 1);
    m_message = new QCPItemText(m_plot);
    m_message->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_message->position->setCoords(0.5, 0.5);
    m_message->setPositionAlignment(Qt::AlignCenter);
    layout->addWidget(m_plot, 1);

    connect(m_setBox, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this](int i) { setSet(Set(m_setBox->itemData(i).toInt())); });
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* ev) {
        const IncidentEntry* e = m_incident ? m_incident->entry(m_entryId) : nullptr;
        if (!e || !e->divergence) return;
        const BitFlips& f = *flipsOf(*e->divergence, m_set);
        const long bit = std::lround(m_plot->xAxis->pixelToCoord(ev->position().x()));
        if (bit < 0 || size_t(bit) >= f.flips.size()) return;
        const unsigned b = unsigned(bit);
        QToolTip::showText(ev->globalPosition().toPoint(),
                           tr("bit %1 (%2): %3 elements differ; 0→1: %4, 1→0: %5")
                               .arg(b)
                               .arg(QString::fromUtf8(bitFieldName(e->divergence->dtype, b).data()))
                               .arg(f.flips[b])
                               .arg(f.toOne[b])
                               .arg(f.toZero(b)),
                           m_plot);
    });
    PlotStyle::apply(m_plot);
    refresh();
}

void BitHistogramView::setEntry(std::shared_ptr<const Incident> incident, int entryId)
{
    m_incident = std::move(incident);
    m_entryId = entryId;
    refresh();
}

void BitHistogramView::setSet(Set set)
{
    m_set = set;
    const int i = m_setBox->findData(int(set));
    if (i >= 0 && m_setBox->currentIndex() != i) {
        const QSignalBlocker block(m_setBox);
        m_setBox->setCurrentIndex(i);
    }
    refresh();
}

std::vector<double> BitHistogramView::shownCounts() const
{
    size_t bits = 0;
    for (QCPBars* b : m_bars)
        for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it)
            bits = std::max(bits, size_t(it->key) + 1);
    std::vector<double> out(bits, 0.0);
    for (QCPBars* b : m_bars)
        for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it)
            out[size_t(it->key)] += it->value;
    return out;
}

void BitHistogramView::refresh()
{
    for (QCPBars* b : m_bars) {
        b->data()->clear();
        const QColor c = PlotStyle::fieldColor(b->name());
        b->setBrush(c);
        b->setPen(QPen(c.darker(130)));
        b->removeFromLegend();
    }
    const IncidentEntry* e = m_incident ? m_incident->entry(m_entryId) : nullptr;
    const Divergence* d = e ? e->divergence : nullptr;
    QString message;
    if (!e)
        message = tr("Select an op or a tensor");
    else if (!d)
        message = tr("Not compared");
    else if (d->mismatches == 0)
        message = tr("No bit differs");
    const BitFlips* f = d ? flipsOf(*d, m_set) : nullptr;
    uint64_t total = 0;
    if (f)
        for (uint64_t n : f->flips) total += n;
    if (message.isEmpty() && total == 0) message = tr("None in this set");
    m_message->setText(message);
    m_message->setColor(palette().color(QPalette::Text));
    m_message->setVisible(!message.isEmpty());

    const unsigned nbits = d ? bitLayout(d->dtype).totalBits : 32;
    if (f && total > 0) {
        double top = 1;
        for (unsigned b = 0; b < nbits && b < f->flips.size(); ++b) {
            const QString field = QString::fromUtf8(bitFieldName(d->dtype, b).data());
            for (QCPBars* bars : m_bars)
                if (bars->name() == field) bars->addData(double(b), double(f->flips[b]));
            top = std::max(top, double(f->flips[b]));
        }
        for (QCPBars* bars : m_bars)
            if (!bars->data()->isEmpty()) bars->addToLegend();
        m_plot->yAxis->setRange(0, top * 1.1);
    } else {
        m_plot->yAxis->setRange(0, 1);
    }
    m_plot->xAxis->setRange(-0.7, double(nbits) - 0.3);
    auto ticker = QSharedPointer<QCPAxisTickerFixed>(new QCPAxisTickerFixed);
    ticker->setTickStep(nbits <= 16 ? 1.0 : nbits <= 32 ? 4.0 : 8.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssNone);
    m_plot->xAxis->setTicker(ticker);
    const uint64_t setSize = !d                         ? 0
                             : m_set == Set::Mismatches ? d->mismatches
                             : m_set == Set::Beyond     ? d->beyondTolerance
                                                        : d->anomalies;
    const char* setName = m_set == Set::Mismatches ? "mismatches"
                          : m_set == Set::Beyond   ? "beyond tolerance"
                                                   : "anomalies";
    m_title->setText(d ? tr("Bit flips · %1 %2").arg(setSize).arg(tr(setName)) : tr("Bit flips"));
    m_plot->xAxis->setLabel(
        d ? tr("bit of %1 (0 = least significant)").arg(QString::fromUtf8(dtypeName(d->dtype).data()))
          : tr("bit (0 = least significant)"));
    PlotStyle::styleLegend(m_plot->legend);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void BitHistogramView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) {
        PlotStyle::apply(m_plot);
        refresh();
    }
}

}  // namespace faultline::views
