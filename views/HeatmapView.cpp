#include "HeatmapView.h"

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

#include "PlotStyle.h"
#include "core/compare/CompareJson.h"

namespace faultline::views {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr uint64_t kMaxSmCells = uint64_t(1) << 22;

QString num(double v)
{
    if (std::isnan(v)) return QStringLiteral("NaN");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', 9);
}

QString metricName(HeatmapMetric m)
{
    switch (m) {
        case HeatmapMetric::MaxAbsError:
            return QObject::tr("max |error|");
        case HeatmapMetric::Mismatches:
            return QObject::tr("mismatches");
        case HeatmapMetric::Beyond:
            return QObject::tr("beyond tolerance");
    }
    return {};
}

QString multiIndex(const std::vector<uint64_t>& shape, uint64_t flat)
{
    if (shape.size() <= 2) return {};
    QStringList parts;
    std::vector<uint64_t> idx(shape.size());
    for (size_t k = shape.size(); k-- > 0;) {
        idx[k] = shape[k] ? flat % shape[k] : 0;
        flat = shape[k] ? flat / shape[k] : 0;
    }
    for (uint64_t i : idx) parts << QString::number(i);
    return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
}

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
    auto* fit = new QToolButton;
    fit->setText(tr("Fit"));
    fit->setToolTip(tr("Show the whole tensor (or double-click the map). Wheel zooms, drag pans."));
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
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
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
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { fitAll(); });
    connect(fit, &QToolButton::clicked, this, &HeatmapView::fitAll);
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
    m_errorRangeKnown = false;
    m_valuesNote.clear();
    m_grid = {};
    m_hoverLabel->setText(tr("Hover over the map for element and tile details."));
    updateSmAvailability();
    updateTitle();
    fitAll();
}

void HeatmapView::setElementValues(std::shared_ptr<const ElementValues> values)
{
    if (!values || values->entryId != m_entryId) return;
    m_values = std::move(values);
    m_errorRangeKnown = false;
    m_valuesNote = tr("Element values loaded (%1 vs %2): zoom in to single elements.")
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
    m_bySm = on && m_smLayout.has_value();
    if (m_smBox->isChecked() != m_bySm) {
        const QSignalBlocker block(m_smBox);
        m_smBox->setChecked(m_bySm);
    }
    updateTitle();
    rebinOnUi();
}

void HeatmapView::updateSmAvailability()
{
    m_smLayout.reset();
    m_smSource.clear();
    const IncidentEntry* e = m_incident ? m_incident->entry(m_entryId) : nullptr;
    const Divergence* d = divergence();
    const ReplaySmMaps::Recorded* replayed = nullptr;
    if (e && e->source == EntrySource::TraceOp && m_incident->replaySmMaps) {
        const auto it = m_incident->replaySmMaps->byOp.find(e->opIndex);
        if (it != m_incident->replaySmMaps->byOp.end() && d && it->second.map.rows == d->rows &&
            it->second.map.cols == d->cols)
            replayed = &it->second;
    }
    QString why;
    if (!e) {
        why = tr("Select an op first.");
    } else if (e->source != EntrySource::TraceOp) {
        why = tr("Checkpoint tensors are not the output of one kernel: there is no tile→SM map for them.");
    } else if (replayed) {
        m_smLayout = replayed->map;
        m_smSource = tr("tile→SM map recorded by replaying op %1 on %2: %3×%3-element tiles")
                         .arg(e->opIndex)
                         .arg(replayed->target)
                         .arg(replayed->map.tile);
    } else if (m_incident->simulatedDefect.isEmpty()) {
        why = tr("This trace records no tile→SM map for %1. Replay the op on a target that records them "
                 "(sim:sm, "
                 "CUDA targets) to get one.")
                  .arg(m_incident->suspectLabel);
    } else if (!d) {
        why = tr("Not compared: there are no divergent tiles to colour.");
    } else {
        auto spec = parseTargetSpec(m_incident->simulatedDefect.toStdString());
        auto model = spec ? createFaultModel(*spec) : Result<std::unique_ptr<FaultModel>>(spec.error());
        if (!model) {
            why = tr("The simulated defect '%1' does not parse: %2")
                      .arg(m_incident->simulatedDefect, QString::fromStdString(model.message()));
        } else if (const VirtualSmLayout layout = (*model)->smLayout();
                   ((d->rows + layout.tile - 1) / layout.tile) * ((d->cols + layout.tile - 1) / layout.tile) >
                   kMaxSmCells) {
            why = tr("Too many SM tiles to draw.");
        } else {
            m_smLayout = TileSmMap{layout.tile, d->rows, d->cols, layout.tileMap(d->rows, d->cols)};
            m_smSource =
                tr("virtual SM layout of %1's simulated defect: %2 SMs, %3×%3-element tiles in row-major "
                   "order, tile t on SM t mod %2 (what the sim target records)")
                    .arg(m_incident->suspectLabel)
                    .arg(layout.sms)
                    .arg(layout.tile);
        }
    }
    m_smBox->setEnabled(m_smLayout.has_value());
    m_smBox->setToolTip(
        m_smLayout ? tr("Colour the tiles holding divergent elements by the SM that computed them: %1")
                         .arg(m_smSource)
                   : why);
    if (!m_smLayout && m_bySm) {
        m_bySm = false;
        const QSignalBlocker block(m_smBox);
        m_smBox->setChecked(false);
    }
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
    const QString metric = m_bySm ? tr("divergent tiles by SM") : metricName(m_metric);
    m_title->setText(what.isEmpty() ? tr("Heatmap") : QStringLiteral("%1 — %2").arg(what, metric));
    m_scale->axis()->setLabel(m_bySm ? tr("SM") : metricName(m_metric));
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
    rebinOnUi();
}

void HeatmapView::zoomTo(double r0, double r1, double c0, double c1)
{
    m_settingRange = true;
    m_plot->xAxis->setRange(c0, c1);
    m_plot->yAxis->setRange(r0, r1);
    m_settingRange = false;
    rebinOnUi();
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
    m_infoLabel->setText(infoText());
    if (!m_rebinInReplot) m_plot->replot(QCustomPlot::rpQueuedReplot);
    emit gridChanged();
}

std::optional<std::pair<double, double>> HeatmapView::errorRange() const
{
    // Scans every finest tile (and every element when loaded): once per entry and values, not
    // on every re-bin.
    if (m_errorRangeKnown) return m_errorRange;
    m_errorRangeKnown = true;
    m_errorRange.reset();
    const Divergence* d = divergence();
    if (!d || !d->tiles.hasCounts()) return m_errorRange;
    auto range = HeatmapBinning::positiveRange(d->tiles.levels().front().maxAbsError);
    if (m_values) {
        const HeatmapGrid all = HeatmapBinning::elementWindow(
            *m_values, HeatmapMetric::MaxAbsError, 0, double(m_values->rows), 0, double(m_values->cols));
        if (auto er = HeatmapBinning::positiveRange(all.values))
            range =
                range ? std::make_pair(std::min(range->first, er->first), std::max(range->second, er->second))
                      : er;
    }
    m_errorRange = range;
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

HeatmapGrid HeatmapView::smGrid(QString* summary) const
{
    HeatmapGrid g;
    const Divergence* d = divergence();
    if (!d || !m_smLayout || !d->tiles.hasCounts() || m_smLayout->tile == 0) return g;
    const uint64_t t = m_smLayout->tile;
    const uint64_t gr = (d->rows + t - 1) / t, gc = (d->cols + t - 1) / t;
    if (gr * gc > kMaxSmCells) {
        *summary = tr("Too many SM tiles to draw (%1).").arg(gr * gc);
        return g;
    }
    g.cellRows = g.cellCols = t;
    g.rows = gr;
    g.cols = gc;
    g.values.assign(size_t(gr * gc), kNaN);
    const TileLevel& lv = d->tiles.levels().front();
    const auto& counts = m_metric == HeatmapMetric::Mismatches ? lv.mismatches : lv.beyond;
    std::map<int32_t, uint64_t> perSm;
    uint64_t total = 0;
    bool approximate = false;
    for (uint64_t i = 0; i < lv.gridRows; ++i)
        for (uint64_t j = 0; j < lv.gridCols; ++j) {
            const uint64_t n = counts[size_t(i * lv.gridCols + j)];
            if (!n) continue;
            const uint64_t r0 = i * lv.tileRows, c0 = j * lv.tileCols;
            const uint64_t r1 = std::min(d->rows, r0 + lv.tileRows), c1 = std::min(d->cols, c0 + lv.tileCols);
            const bool spans = r0 / t != (r1 - 1) / t || c0 / t != (c1 - 1) / t;
            approximate = approximate || spans;
            for (uint64_t a = r0 / t; a <= (r1 - 1) / t; ++a)
                for (uint64_t b = c0 / t; b <= (c1 - 1) / t; ++b)
                    g.values[size_t(a * gc + b)] = m_smLayout->smOf(a * t, b * t);
            perSm[m_smLayout->smOf(r0, c0)] += n;
            total += n;
        }
    std::vector<std::pair<uint64_t, int32_t>> ranked;
    for (const auto& [sm, n] : perSm) ranked.push_back({n, sm});
    std::sort(ranked.rbegin(), ranked.rend());
    QStringList parts;
    for (size_t k = 0; k < ranked.size() && k < 4; ++k)
        parts << tr("SM %1: %2 (%3%)")
                     .arg(ranked[k].second)
                     .arg(ranked[k].first)
                     .arg(total ? 100.0 * double(ranked[k].first) / double(total) : 0.0, 0, 'f', 0);
    if (ranked.size() > 4) parts << tr("%1 more SMs").arg(ranked.size() - 4);
    *summary = tr("%1 elements by SM: %2%3")
                   .arg(m_metric == HeatmapMetric::Mismatches ? tr("Mismatched") : tr("Beyond-tolerance"),
                        parts.isEmpty() ? tr("none") : parts.join(QStringLiteral(", ")),
                        approximate ? tr(" (approximate: pyramid tiles span several SM tiles)") : QString());
    return g;
}

void HeatmapView::rebinOnUi()
{
    m_rebinTimer->stop();
    m_binnedPixels = m_plot->axisRect()->size();
    const IncidentEntry* e = m_incident ? m_incident->entry(m_entryId) : nullptr;
    const Divergence* d = divergence();
    if (!e) return showMessage(tr("Select an op or a tensor"));
    if (!d) {
        QString why = e->verdict == QLatin1String("listed") ? tr("Not compared: open a reference file too.")
                                                            : tr("No comparison: %1").arg(e->verdict);
        if (!e->detail.isEmpty() && e->verdict != QLatin1String("listed"))
            why += QStringLiteral("\n") + e->detail;
        return showMessage(why);
    }
    if (!d->tiles.hasCounts())
        return showMessage(d->mismatches == 0 ? tr("Identical: no bit differs") : tr("No tile data"));
    m_message->setVisible(false);
    m_smSummary.clear();

    if (m_bySm && m_smLayout) {
        const HeatmapGrid g = smGrid(&m_smSummary);
        const uint32_t sms = m_smLayout->smCount();
        m_levelLabel->setText(tr("Cells: SM tiles of %1×%1 elements, %2 SMs").arg(m_smLayout->tile).arg(sms));
        showGrid(g, 0, std::max(1.0, double(sms) - 1), false);
        return;
    }
    const QCPRange xr = m_plot->xAxis->range(), yr = m_plot->yAxis->range();
    const int pw = m_binnedPixels.width(), ph = m_binnedPixels.height();
    HeatmapGrid g;
    if (m_values && HeatmapBinning::elementsFit(yr.size(), xr.size(), ph, pw)) {
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
                if (std::isinf(v)) v = hi;  // NaN/Inf mismatches: the hottest colour
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
        m_scale->setGradient(PlotStyle::smGradient());
        m_scale->setDataScaleType(QCPAxis::stLinear);
        auto ticker = QSharedPointer<QCPAxisTickerFixed>(new QCPAxisTickerFixed);
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        m_scale->axis()->setTicker(ticker);
        m_scale->axis()->setNumberFormat(QStringLiteral("g"));
        m_scale->axis()->setNumberPrecision(6);
    }
    m_scale->setDataRange(QCPRange(lo, hi));
    PlotStyle::styleAxis(m_scale->axis());
    m_infoLabel->setText(infoText());
    if (!m_rebinInReplot) m_plot->replot(QCustomPlot::rpQueuedReplot);
    emit gridChanged();
}

QString HeatmapView::infoText() const
{
    const Divergence* d = divergence();
    QStringList lines;
    if (d) {
        lines << tr("%1 of %2 elements beyond %3 · %4 mismatches · %5")
                     .arg(d->beyondTolerance)
                     .arg(d->elements)
                     .arg(d->tolerance == "bound" ? tr("the op's error bound")
                                                  : QString::fromStdString(d->tolerance))
                     .arg(d->mismatches)
                     .arg(QString::fromStdString(maxErrorText(*d)));
        if (d->mismatches)
            lines << QStringLiteral("%1: %2").arg(
                QString::fromUtf8(signatureKindName(d->signature.kind).data()),
                QString::fromStdString(d->signature.detail));
        if (d->beyondRegion)
            lines << tr("Beyond-tolerance region: rows [%1, %2) × cols [%3, %4)")
                         .arg(d->beyondRegion->rowBegin)
                         .arg(d->beyondRegion->rowEnd)
                         .arg(d->beyondRegion->colBegin)
                         .arg(d->beyondRegion->colEnd);
    }
    if (m_bySm && !m_smSummary.isEmpty()) lines << m_smSummary + QStringLiteral(" — ") + m_smSource;
    if (!m_valuesNote.isEmpty()) lines << m_valuesNote;
    return lines.join(QLatin1Char('\n'));
}

QString HeatmapView::describeElement(uint64_t row, uint64_t col) const
{
    const Divergence* d = divergence();
    if (!d || row >= d->rows || col >= d->cols) return {};
    const uint64_t flat = row * d->cols + col;
    QStringList lines;
    QString head = tr("Element row %1, col %2 (flat %3)").arg(row).arg(col).arg(flat);
    const QString nd = multiIndex(d->shape, flat);
    if (!nd.isEmpty()) head += tr(", index %1").arg(nd);
    lines << head;
    auto tileLine = [&](int level) {
        const TileLevel& lv = d->tiles.levels()[size_t(level)];
        const uint64_t tr_ = row / lv.tileRows, tc = col / lv.tileCols;
        const size_t t = size_t(tr_ * lv.gridCols + tc);
        QString s = tr("Level %1 tile (%2, %3), %4×%5 elements: ")
                        .arg(level)
                        .arg(tr_)
                        .arg(tc)
                        .arg(lv.tileRows)
                        .arg(lv.tileCols);
        if (lv.mismatches.empty() || lv.mismatches[t] == 0) return s + tr("no mismatch");
        return s + tr("%1 mismatches, %2 beyond tolerance, %3 anomalies, max |error| %4")
                       .arg(lv.mismatches[t])
                       .arg(lv.beyond[t])
                       .arg(lv.anomalies[t])
                       .arg(num(lv.maxAbsError[t]));
    };
    if (d->tiles.hasCounts()) {
        lines << tileLine(0);
        if (m_grid.level > 0 && !m_bySm) lines << tileLine(m_grid.level);
    }
    if (m_smLayout) lines << tr("SM %1 (%2)").arg(m_smLayout->smOf(row, col)).arg(m_smSource);
    if (m_values && flat < m_values->elements()) {
        const unsigned bits = bitLayout(m_values->dtype).totalBits;
        const uint64_t sb = m_values->suspectBits(flat), rb = m_values->referenceBits(flat);
        lines << QStringLiteral("%1: %2 (%3)")
                     .arg(m_values->suspectLabel, num(m_values->suspect[size_t(flat)]),
                          QString::fromStdString(bitsToHex(sb, bits)));
        lines << QStringLiteral("%1: %2 (%3)")
                     .arg(m_values->referenceLabel, num(m_values->reference[size_t(flat)]),
                          QString::fromStdString(bitsToHex(rb, bits)));
        if (sb != rb) {
            QStringList flipped;
            for (unsigned b = bits; b-- > 0;)
                if ((sb ^ rb) >> b & 1)
                    flipped << QStringLiteral("%1 (%2)").arg(b).arg(
                        QString::fromUtf8(bitFieldName(m_values->dtype, b).data()));
            lines << tr("|error| %1 · differing bits: %2")
                         .arg(num(std::fabs(m_values->suspect[size_t(flat)] -
                                            m_values->reference[size_t(flat)])),
                              flipped.join(QStringLiteral(", ")));
        } else {
            lines << tr("bit-identical");
        }
    }
    return lines.join(QLatin1Char('\n'));
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
