#include "views/heatmap/HeatmapSmColouring.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/replay/FaultModel.h"
#include "core/replay/TargetSpec.h"
#include "views/heatmap/SmAttribution.h"
#include "views/plots/PlotStyle.h"

namespace faultline::views {

QString HeatmapSmColouring::choose(const Incident* incident, int entryId)
{
    m_layout.reset();
    m_source.clear();
    const IncidentEntry* e = incident ? incident->entry(entryId) : nullptr;
    const Divergence* d = e ? e->divergence : nullptr;
    std::optional<ReplaySmMaps::Recorded> replayed;
    QString passedOver;
    if (e && e->source == EntrySource::TraceOp && d) {
        SuspectSmMap own = suspectSmMap(*incident, e->opIndex, d->rows, d->cols, m_gpuUuids);
        replayed = std::move(own.chosen);
        passedOver = own.why;
    }
    QString why;
    if (!e) {
        why = tr("Select an op first.");
    } else if (e->source != EntrySource::TraceOp) {
        why = tr("Checkpoint tensors are not the output of one kernel: there is no tile→SM map for them.");
    } else if (replayed) {
        m_layout = replayed->map;
        m_source = tr("tile→SM map recorded by replaying op %1 on %2: %3×%3-element tiles")
                       .arg(e->opIndex)
                       .arg(replayed->target)
                       .arg(replayed->map.tile);
    } else if (incident->simulatedDefect.isEmpty()) {
        why =
            tr("This trace records no tile→SM map for %1. Replay the op on %1's own GPU (its cuda:N target, "
               "matched to %1's UUID through this machine's inventory) to get one.")
                .arg(incident->suspectLabel);
        if (!passedOver.isEmpty()) why += QLatin1Char(' ') + passedOver;
    } else if (!d) {
        why = tr("Not compared: there are no divergent tiles to colour.");
    } else {
        auto spec = parseTargetSpec(incident->simulatedDefect.toStdString());
        auto model = spec ? createFaultModel(*spec) : Result<std::unique_ptr<FaultModel>>(spec.error());
        if (!model) {
            why = tr("The simulated defect '%1' does not parse: %2")
                      .arg(incident->simulatedDefect, QString::fromStdString(model.message()));
        } else if (const VirtualSmLayout layout = (*model)->smLayout();
                   ((d->rows + layout.tile - 1) / layout.tile) * ((d->cols + layout.tile - 1) / layout.tile) >
                   kMaxSmCells) {
            why = tr("Too many SM tiles to draw.");
        } else {
            m_layout = TileSmMap{layout.tile, d->rows, d->cols, layout.tileMap(d->rows, d->cols)};
            m_source =
                tr("virtual SM layout of %1's simulated defect: %2 SMs, %3×%3-element tiles in row-major "
                   "order, tile t on SM t mod %2 (what the sim target records)")
                    .arg(incident->suspectLabel)
                    .arg(layout.sms)
                    .arg(layout.tile);
            if (!passedOver.isEmpty()) m_source += QStringLiteral(". ") + passedOver;
        }
    }
    return why;
}

void HeatmapSmColouring::setLocalGpus(const QStringList& specs, const QStringList& uuids)
{
    m_gpuUuids.clear();
    for (qsizetype i = 0; i < specs.size() && i < uuids.size(); ++i)
        m_gpuUuids[specs[i].toStdString()] = uuids[i].toStdString();
}

int HeatmapSmColouring::category(int32_t sm) const
{
    const auto it = std::lower_bound(m_categories.begin(), m_categories.end(), sm);
    return it != m_categories.end() && *it == sm ? int(it - m_categories.begin()) : 0;
}

HeatmapGrid HeatmapSmColouring::grid(const Divergence& d, HeatmapMetric metric, QString* summary)
{
    HeatmapGrid g;
    if (!m_layout || !d.tiles.hasCounts() || m_layout->tile == 0) return g;
    const uint64_t t = m_layout->tile;
    const uint64_t gr = (d.rows + t - 1) / t, gc = (d.cols + t - 1) / t;
    if (gr * gc > kMaxSmCells) {
        *summary = tr("Too many SM tiles to draw (%1).").arg(gr * gc);
        return g;
    }
    g.cellRows = g.cellCols = t;
    g.rows = gr;
    g.cols = gc;
    g.values.assign(size_t(gr * gc), std::numeric_limits<double>::quiet_NaN());
    const TileLevel& lv = d.tiles.levels().front();
    const auto& counts = metric == HeatmapMetric::Mismatches ? lv.mismatches : lv.beyond;
    std::map<int32_t, uint64_t> perSm;
    uint64_t total = 0;
    bool approximate = false;
    for (uint64_t i = 0; i < lv.gridRows; ++i)
        for (uint64_t j = 0; j < lv.gridCols; ++j) {
            const uint64_t n = counts[size_t(i * lv.gridCols + j)];
            if (!n) continue;
            const uint64_t r0 = i * lv.tileRows, c0 = j * lv.tileCols;
            const uint64_t r1 = std::min(d.rows, r0 + lv.tileRows), c1 = std::min(d.cols, c0 + lv.tileCols);
            const bool spans = r0 / t != (r1 - 1) / t || c0 / t != (c1 - 1) / t;
            approximate = approximate || spans;
            for (uint64_t a = r0 / t; a <= (r1 - 1) / t; ++a)
                for (uint64_t b = c0 / t; b <= (c1 - 1) / t; ++b)
                    g.values[size_t(a * gc + b)] = m_layout->smOf(a * t, b * t);
            perSm[m_layout->smOf(r0, c0)] += n;
            total += n;
        }
    m_categories.clear();
    for (double v : g.values)
        if (!std::isnan(v)) m_categories.push_back(int32_t(v));
    std::sort(m_categories.begin(), m_categories.end());
    m_categories.erase(std::unique(m_categories.begin(), m_categories.end()), m_categories.end());
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
                   .arg(metric == HeatmapMetric::Mismatches ? tr("Mismatched") : tr("Beyond-tolerance"),
                        parts.isEmpty() ? tr("none") : parts.join(QStringLiteral(", ")),
                        approximate ? tr(" (approximate: pyramid tiles span several SM tiles)") : QString());
    if (m_categories.size() > PlotStyle::kCategoricalPaletteSize)
        *summary +=
            tr(". %1 SMs hold divergent tiles, more than the %2 palette colours: each SM takes its own "
               "hue by the golden-angle rule (hue = index × 0.382 turns), so no two share a colour")
                .arg(m_categories.size())
                .arg(PlotStyle::kCategoricalPaletteSize);
    else
        *summary += tr(". Colours: one per SM, none shared (legend on the scale)");
    return g;
}

}  // namespace faultline::views
