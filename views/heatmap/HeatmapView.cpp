#include "views/heatmap/HeatmapView.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSignalBlocker>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "views/heatmap/ElementValueLoader.h"
#include "views/heatmap/HeatmapNavigator.h"
#include "views/heatmap/HeatmapOutlines.h"
#include "views/heatmap/HeatmapText.h"
#include "views/plots/PlotStyle.h"

namespace faultline::views {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

HeatmapView::HeatmapView(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("heatmapView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Show:")));
    m_metricBox = new QComboBox;
    m_metricBox->setObjectName(QStringLiteral("heatmapMetric"));
    m_metricBox->addItem(tr("Max |error|"), int(HeatmapMetric::MaxAbsError));
    m_metricBox->addItem(tr("Mismatches"), int(HeatmapMetric::Mismatches));
    m_metricBox->addItem(tr("Beyond tolerance"), int(HeatmapMetric::Beyond));
    m_metricBox->setToolTip(
        tr("What each cell shows: the largest |suspect − reference| in it, or how many elements "
           "differ / are beyond tolerance"));
    bar->addWidget(m_metricBox);
    m_smBox = new QCheckBox(tr("Colour by SM"));
    m_smBox->setObjectName(QStringLiteral("heatmapBySm"));
    bar->addWidget(m_smBox);
    bar->addStretch(1);
    m_levelLabel = new QLabel;
    m_levelLabel->setObjectName(QStringLiteral("heatmapLevel"));
    auto* worst = new QToolButton;
    worst->setObjectName(QStringLiteral("heatmapWorst"));
    worst->setText(tr("Worst"));
    worst->setToolTip(tr("Zoom to the worst anomaly region (W on the map)"));
    bar->addWidget(worst);
    auto* previous = new QToolButton;
    previous->setText(tr("◀"));
    previous->setToolTip(tr("Previous anomaly region (P on the map)"));
    bar->addWidget(previous);
    auto* next = new QToolButton;
    next->setText(tr("▶"));
    next->setToolTip(tr("Next anomaly region (N on the map)"));
    bar->addWidget(next);
    auto* fit = new QToolButton;
    fit->setText(tr("Fit"));
    fit->setToolTip(
        tr("Show the whole tensor (0 or double-click the map). Wheel zooms about the cursor, + / - zoom, "
           "arrows and drag pan, Shift+drag zooms into a box."));
    bar->addWidget(fit);
    layout->addLayout(bar);

    m_plot = new QCustomPlot;
    m_plot->setObjectName(QStringLiteral("heatmapPlot"));
    m_plot->setMinimumSize(320, 220);
    m_plot->plotLayout()->insertRow(0);
    const QFont titleFont = PlotStyle::titleFont(font());
    m_title = new QCPTextElement(m_plot, QString(), titleFont);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);
    m_scale = new QCPColorScale(m_plot);
    m_scale->setType(QCPAxis::atRight);
    m_scale->setBarWidth(12);
    m_plot->plotLayout()->addElement(1, 1, m_scale);
    m_map->setColorScale(m_scale);
    auto* group = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_plot->yAxis->setRangeReversed(true);
    m_plot->xAxis->setLabel(tr("column"));
    m_plot->yAxis->setLabel(tr("row"));
    // Drag pans (QCustomPlot); the wheel, keys and box zoom are the navigator's.
    m_plot->setInteractions(QCP::iRangeDrag);
    m_navigator = new HeatmapNavigator(m_plot);
    m_outlines = std::make_unique<HeatmapOutlines>(m_plot);
    m_message = new QCPItemText(m_plot);
    m_message->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_message->position->setCoords(0.5, 0.5);
    m_message->setPositionAlignment(Qt::AlignCenter);
    m_message->setClipToAxisRect(true);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_levelLabel);

    m_hoverLabel = new QLabel(tr("Hover over the map for element and tile details."));
    m_hoverLabel->setObjectName(QStringLiteral("heatmapHover"));
    m_hoverLabel->setWordWrap(true);
    m_hoverLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_hoverLabel);
    m_infoLabel = new QLabel;
    m_infoLabel->setObjectName(QStringLiteral("heatmapInfo"));
    m_infoLabel->setWordWrap(true);
    m_infoLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_infoLabel);

    m_rebinTimer = new QTimer(this);
    m_rebinTimer->setSingleShot(true);
    m_rebinTimer->setInterval(0);
    connect(m_rebinTimer, &QTimer::timeout, this, &HeatmapView::rebinOnUi);
    // A wheel or drag changes the ranges and replots at once; a replot's layout may resize the
    // axis rect. Either way the re-bin runs inside that replot, before it draws, so that one
    // replot draws the new cells (not the old ones, then the new ones in a second replot).
    auto rebinInThisReplot = [this] {
        m_rebinInReplot = true;
        rebinOnUi();
        m_rebinInReplot = false;
    };
    connect(m_plot, &QCustomPlot::beforeReplot, this, [this, rebinInThisReplot] {
        if (m_rebinTimer->isActive()) rebinInThisReplot();
    });
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this] { scheduleRebinOnUi(); });
    connect(m_plot->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this] { scheduleRebinOnUi(); });
    connect(m_plot, &QCustomPlot::mouseMove, this, &HeatmapView::onMouseMoveOnUi);
    // The axis rect's size is known after layout: re-bin when it differs from what was binned for.
    connect(m_plot, &QCustomPlot::afterLayout, this, [this, rebinInThisReplot] {
        if (m_plot->axisRect()->size() != m_binnedPixels) rebinInThisReplot();
    });
    connect(m_navigator, &HeatmapNavigator::rangesMovedInReplot, this, rebinInThisReplot);
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { fitAll(); });
    connect(fit, &QToolButton::clicked, this, &HeatmapView::fitAll);
    connect(worst, &QToolButton::clicked, this, &HeatmapView::zoomToWorst);
    connect(next, &QToolButton::clicked, this, &HeatmapView::nextRegion);
    connect(previous, &QToolButton::clicked, this, &HeatmapView::previousRegion);
    connect(m_navigator, &HeatmapNavigator::fitRequested, this, &HeatmapView::fitAll);
    connect(m_navigator, &HeatmapNavigator::worstRequested, this, &HeatmapView::zoomToWorst);
    connect(m_navigator, &HeatmapNavigator::nextRequested, this, &HeatmapView::nextRegion);
    connect(m_navigator, &HeatmapNavigator::previousRequested, this, &HeatmapView::previousRegion);
    connect(m_metricBox, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this](int i) { setMetric(HeatmapMetric(m_metricBox->itemData(i).toInt())); });
    connect(m_smBox, &QCheckBox::toggled, this, &HeatmapView::setColourBySm);

    PlotStyle::apply(m_plot);
    updateSmAvailability();
    showMessage(tr("Select an op or a tensor"));
}

HeatmapView::~HeatmapView() = default;

const Divergence* HeatmapView::divergence() const
{
    const IncidentEntry* e = m_incident ? m_incident->entry(m_entryId) : nullptr;
    return e ? e->divergence : nullptr;
}

void HeatmapView::setEntry(std::shared_ptr<const Incident> incident, int entryId)
{
    m_incident = std::move(incident);
    m_entryId = m_incident ? entryId : -1;
    m_values.reset();
    m_requestedWindow.reset();
    m_errorRangeKnown = false;
    m_valuesNote.clear();
    m_grid = {};
    const Divergence* d = divergence();
    m_regions = d ? findAnomalyRegions(*d) : AnomalyRegions{};
    m_regionIndex = -1;
    m_navigator->setExtent(d ? double(d->rows) : 0, d ? double(d->cols) : 0);
    m_hoverLabel->setText(tr("Hover over the map for element and tile details."));
    updateSmAvailability();
    updateTitle();
    fitAll();
}

void HeatmapView::setElementValues(std::shared_ptr<const ElementValues> values)
{
    if (!values || values->entryId != m_entryId) return;
    m_values = std::move(values);
    // Values for another window than the one asked for (the page's first read): ask again if needed.
    if (m_requestedWindow && !m_values->window.contains(*m_requestedWindow)) m_requestedWindow.reset();
    m_valuesNote = tr("Element values of rows %1–%2 × cols %3–%4 read (%5 vs %6); zoom in to single elements "
                      "anywhere and they are read there.")
                       .arg(m_values->window.rowBegin)
                       .arg(m_values->window.rowEnd - 1)
                       .arg(m_values->window.colBegin)
                       .arg(m_values->window.colEnd - 1)
                       .arg(m_values->suspectLabel, m_values->referenceLabel);
    rebinOnUi();
}

void HeatmapView::setElementValuesUnavailable(const QString& reason)
{
    m_valuesNote = tr("No element values: %1.").arg(reason);
    m_infoLabel->setText(infoText());
}

void HeatmapView::setMetric(HeatmapMetric metric)
{
    m_metric = metric;
    const int i = m_metricBox->findData(int(metric));
    if (i >= 0 && m_metricBox->currentIndex() != i) {
        const QSignalBlocker block(m_metricBox);
        m_metricBox->setCurrentIndex(i);
    }
    updateTitle();
    rebinOnUi();
}

void HeatmapView::setColourBySm(bool on)
{
    m_bySm = on && m_sm.available();
    if (m_smBox->isChecked() != m_bySm) {
        const QSignalBlocker block(m_smBox);
        m_smBox->setChecked(m_bySm);
    }
    updateTitle();
    rebinOnUi();
}

void HeatmapView::updateSmAvailability()
{
    const QString why = m_sm.choose(m_incident.get(), m_entryId);
    m_smBox->setEnabled(m_sm.available());
    m_smBox->setToolTip(
        m_sm.available() ? tr("Colour the tiles holding divergent elements by the SM that computed them: %1")
                               .arg(m_sm.source())
                         : why);
    if (!m_sm.available() && m_bySm) {
        m_bySm = false;
        const QSignalBlocker block(m_smBox);
        m_smBox->setChecked(false);
    }
}

void HeatmapView::setLocalGpus(const QStringList& specs, const QStringList& uuids)
{
    m_sm.setLocalGpus(specs, uuids);
    refreshSmMap();
}

void HeatmapView::refreshSmMap()
{
    updateSmAvailability();
    updateTitle();
    rebinOnUi();
}

void HeatmapView::updateTitle()
{
    const IncidentEntry* e = m_incident ? m_incident->entry(m_entryId) : nullptr;
    QString what;
    if (e && e->source == EntrySource::TraceOp)
        what = tr("op %1 %2 · %3").arg(e->opIndex).arg(e->opKind, e->name);
    else if (e)
        what = e->name;
    const QString metric = m_bySm ? tr("divergent tiles by SM") : heatmapMetricName(m_metric);
    m_title->setText(what.isEmpty() ? tr("Heatmap") : QStringLiteral("%1 — %2").arg(what, metric));
    m_scale->axis()->setLabel(m_bySm ? tr("SM") : heatmapMetricName(m_metric));
}

void HeatmapView::fitAll()
{
    const Divergence* d = divergence();
    m_settingRange = true;
    if (d && d->rows && d->cols) {
        m_plot->xAxis->setRange(0, double(d->cols));
        m_plot->yAxis->setRange(0, double(d->rows));
    } else {
        m_plot->xAxis->setRange(0, 1);
        m_plot->yAxis->setRange(0, 1);
    }
    m_settingRange = false;
    m_navigator->forgetAnchor();
    m_regionIndex = -1;  // N goes to the worst region again
    rebinOnUi();
}

void HeatmapView::zoomTo(double r0, double r1, double c0, double c1)
{
    m_navigator->forgetAnchor();
    m_settingRange = true;
    m_plot->xAxis->setRange(c0, c1);
    m_plot->yAxis->setRange(r0, r1);
    m_settingRange = false;
    rebinOnUi();
}

void HeatmapView::zoomToRegion(int index)
{
    if (m_regions.regions.empty()) return;
    const int n = int(m_regions.regions.size());
    m_regionIndex = ((index % n) + n) % n;
    const Region& b = m_regions.regions[size_t(m_regionIndex)].box;
    // The region with half its size around it (at least 8 elements), so its edges show.
    const double padR = std::max(8.0, 0.5 * double(b.rowEnd - b.rowBegin));
    const double padC = std::max(8.0, 0.5 * double(b.colEnd - b.colBegin));
    zoomTo(double(b.rowBegin) - padR, double(b.rowEnd) + padR, double(b.colBegin) - padC,
           double(b.colEnd) + padC);
}

void HeatmapView::zoomToWorst()
{
    zoomToRegion(0);
}

void HeatmapView::nextRegion()
{
    zoomToRegion(m_regionIndex + 1);
}

void HeatmapView::previousRegion()
{
    zoomToRegion(m_regionIndex < 0 ? -1 : m_regionIndex - 1);
}

std::vector<QRectF> HeatmapView::shownOutlines() const
{
    return m_outlines->shown();
}

void HeatmapView::updateOutlinesOnUi()
{
    m_outlines->update(m_regions, m_regionIndex,
                       !m_grid.empty() && !m_bySm && m_message && !m_message->visible());
}

void HeatmapView::requestWindowOnUi(const ElementWindow& visible)
{
    if (m_requestedWindow && m_requestedWindow->contains(visible)) return;    // asked already
    if (visible.elements() > ElementValueLoader::kMaxWindowElements) return;  // tiles stay
    const Divergence* d = divergence();
    if (!d) return;
    m_requestedWindow = ElementValueLoader::windowAround(visible, d->rows, d->cols);
    emit elementWindowWanted(m_entryId, *m_requestedWindow);
}

void HeatmapView::scheduleRebinOnUi()
{
    if (!m_settingRange) m_rebinTimer->start();
}

void HeatmapView::showMessage(const QString& message)
{
    m_grid = {};
    m_map->data()->clear();
    m_message->setText(message);
    m_message->setColor(palette().color(QPalette::Text));
    m_message->setVisible(true);
    m_levelLabel->clear();
    updateOutlinesOnUi();
    m_infoLabel->setText(infoText());
    if (!m_rebinInReplot) m_plot->replot(QCustomPlot::rpQueuedReplot);
    emit gridChanged();
}

std::optional<std::pair<double, double>> HeatmapView::errorRange() const
{
    // Scans every finest tile, once per entry, not on every re-bin. Each tile holds the max of
    // its elements, so the range covers every element too (smaller ones take the lowest colour).
    if (m_errorRangeKnown) return m_errorRange;
    m_errorRangeKnown = true;
    m_errorRange.reset();
    const Divergence* d = divergence();
    if (!d || !d->tiles.hasCounts()) return m_errorRange;
    m_errorRange = HeatmapBinning::positiveRange(d->tiles.levels().front().maxAbsError);
    return m_errorRange;
}

double HeatmapView::levelMax(int level) const
{
    const Divergence* d = divergence();
    if (!d || !d->tiles.hasCounts() || level < 0) return 1;
    const TileLevel& lv = d->tiles.levels()[size_t(level)];
    const auto& counts = m_metric == HeatmapMetric::Beyond ? lv.beyond : lv.mismatches;
    uint64_t hi = 1;
    for (uint64_t c : counts) hi = std::max(hi, c);
    return double(hi);
}

void HeatmapView::rebinOnUi()
{
    m_rebinTimer->stop();
    m_binnedPixels = m_plot->axisRect()->size();
    const IncidentEntry* e = m_incident ? m_incident->entry(m_entryId) : nullptr;
    const Divergence* d = divergence();
    if (!e) return showMessage(tr("Select an op or a tensor"));
    if (!d) {
        QString why = e->isListedOnly() ? tr("Not compared: open a reference file too.")
                                        : tr("No comparison: %1").arg(e->verdict);
        if (!e->detail.isEmpty() && !e->isListedOnly()) why += QStringLiteral("\n") + e->detail;
        return showMessage(why);
    }
    if (!d->tiles.hasCounts())
        return showMessage(d->mismatches == 0 ? tr("Identical: no bit differs") : tr("No tile data"));
    m_message->setVisible(false);
    m_smSummary.clear();

    if (m_bySm && m_sm.available()) {
        const HeatmapGrid g = m_sm.grid(*d, m_metric, &m_smSummary);
        const uint32_t sms = m_sm.layout()->smCount();
        m_levelLabel->setText(
            tr("Cells: SM tiles of %1×%1 elements, %2 SMs").arg(m_sm.layout()->tile).arg(sms));
        showGrid(g, 0, 1, false);
        return;
    }
    const QCPRange xr = m_plot->xAxis->range(), yr = m_plot->yAxis->range();
    const int pw = m_binnedPixels.width(), ph = m_binnedPixels.height();
    HeatmapGrid g;
    const bool elementsFit = HeatmapBinning::elementsFit(yr.size(), xr.size(), ph, pw);
    auto clampTo = [](double v, uint64_t hi) { return uint64_t(std::clamp(v, 0.0, double(hi))); };
    const ElementWindow visible{clampTo(std::floor(yr.lower), d->rows), clampTo(std::ceil(yr.upper), d->rows),
                                clampTo(std::floor(xr.lower), d->cols),
                                clampTo(std::ceil(xr.upper), d->cols)};
    if (elementsFit && !(m_values && m_values->window.contains(visible))) requestWindowOnUi(visible);
    if (elementsFit && m_values && m_values->window.contains(visible)) {
        g = HeatmapBinning::elementWindow(*m_values, m_metric, yr.lower, yr.upper, xr.lower, xr.upper);
        m_levelLabel->setText(
            tr("Cells: single elements (zoomed in; wheel zooms, drag pans, double-click fits)"));
    } else {
        const int level = HeatmapBinning::chooseLevel(d->tiles, yr.size(), xr.size(), ph, pw);
        g = HeatmapBinning::tileWindow(d->tiles, level, m_metric, yr.lower, yr.upper, xr.lower, xr.upper);
        const TileLevel& lv = d->tiles.levels()[size_t(level)];
        m_levelLabel->setText(
            tr("Cells: pyramid level %1, tiles of %2×%3 elements (grid %4×%5); zoom in for finer cells")
                .arg(level)
                .arg(lv.tileRows)
                .arg(lv.tileCols)
                .arg(lv.gridRows)
                .arg(lv.gridCols));
    }
    double lo = 1, hi = 1;
    if (m_metric == HeatmapMetric::MaxAbsError) {
        if (auto r = errorRange()) std::tie(lo, hi) = *r;
    } else {
        hi = g.level == HeatmapGrid::kElementLevel ? 1.0 : levelMax(g.level);
    }
    if (hi <= lo) lo = hi / 10;
    showGrid(g, lo, hi, true);
}

void HeatmapView::showGrid(const HeatmapGrid& grid, double lo, double hi, bool logScale)
{
    m_grid = grid;
    if (grid.empty()) {
        m_map->data()->clear();
    } else {
        // QCPColorMap needs two cells per axis to size them: pad with empty cells.
        const int kx = int(std::max<uint64_t>(2, grid.cols)), ky = int(std::max<uint64_t>(2, grid.rows));
        const double cw = double(grid.cellCols), ch = double(grid.cellRows);
        auto* cells = new QCPColorMapData(
            kx, ky, QCPRange((double(grid.firstCol) + 0.5) * cw, (double(grid.firstCol) + kx - 0.5) * cw),
            QCPRange((double(grid.firstRow) + 0.5) * ch, (double(grid.firstRow) + ky - 0.5) * ch));
        cells->fill(kNaN);
        for (uint64_t r = 0; r < grid.rows; ++r)
            for (uint64_t c = 0; c < grid.cols; ++c) {
                double v = grid.at(r, c);
                if (!logScale && !std::isnan(v))
                    v = double(m_sm.category(int32_t(v)));  // SM id -> its colour
                if (std::isinf(v)) v = hi;                  // NaN/Inf mismatches: the hottest colour
                cells->setCell(int(c), int(r), v);
            }
        m_map->setData(cells, false);
    }
    if (logScale) {
        m_scale->setGradient(PlotStyle::errorGradient());
        m_scale->setDataScaleType(QCPAxis::stLogarithmic);
        m_scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        m_scale->axis()->setNumberFormat(QStringLiteral("eb"));
        m_scale->axis()->setNumberPrecision(0);
    } else {
        // One colour per SM that holds divergent tiles, never shared; the scale is its legend.
        const size_t n = m_sm.categories().size();
        m_scale->setGradient(PlotStyle::categoricalGradient(n));
        m_scale->setDataScaleType(QCPAxis::stLinear);
        auto ticker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
        const size_t step = n > kMaxSmLegend ? (n + kMaxSmLegend - 1) / kMaxSmLegend : 1;
        for (size_t i = 0; i < n; i += step)
            ticker->addTick(double(i), tr("SM %1").arg(m_sm.categories()[i]));
        m_scale->axis()->setTicker(ticker);
        lo = 0;
        hi = std::max(1.0, double(n) - 1);
    }
    m_scale->setDataRange(QCPRange(lo, hi));
    PlotStyle::styleAxis(m_scale->axis());
    updateOutlinesOnUi();
    m_infoLabel->setText(infoText());
    if (!m_rebinInReplot) m_plot->replot(QCustomPlot::rpQueuedReplot);
    emit gridChanged();
}

QString HeatmapView::infoText() const
{
    const QString smLine =
        m_bySm && !m_smSummary.isEmpty() ? m_smSummary + QStringLiteral(" — ") + m_sm.source() : QString();
    return heatmapInfoText(divergence(), m_regions, m_regionIndex, smLine, m_valuesNote);
}

QString HeatmapView::describeElement(uint64_t row, uint64_t col) const
{
    const Divergence* d = divergence();
    if (!d) return {};
    return describeHeatmapElement(*d, row, col, m_grid.level, m_bySm,
                                  m_sm.layout() ? &*m_sm.layout() : nullptr, m_sm.source(), m_values.get());
}

void HeatmapView::hoverElement(uint64_t row, uint64_t col)
{
    const QString text = describeElement(row, col);
    if (!text.isEmpty())
        m_hoverLabel->setText(QString(text).replace(QLatin1Char('\n'), QStringLiteral(" · ")));
}

void HeatmapView::onMouseMoveOnUi(QMouseEvent* event)
{
    const Divergence* d = divergence();
    if (!d) return;
    const double c = m_plot->xAxis->pixelToCoord(event->position().x());
    const double r = m_plot->yAxis->pixelToCoord(event->position().y());
    if (r < 0 || c < 0 || r >= double(d->rows) || c >= double(d->cols)) {
        QToolTip::hideText();
        return;
    }
    const QString text = describeElement(uint64_t(r), uint64_t(c));
    hoverElement(uint64_t(r), uint64_t(c));
    QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
}

void HeatmapView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) {
        PlotStyle::apply(m_plot);
        m_title->setTextColor(palette().color(QPalette::Text));
        m_message->setColor(palette().color(QPalette::Text));
        scheduleRebinOnUi();
    }
}

void HeatmapView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    scheduleRebinOnUi();
}

}  // namespace faultline::views
