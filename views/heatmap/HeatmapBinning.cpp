#include "views/heatmap/HeatmapBinning.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace faultline::views {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Cells of size `cell` covering [a, b) elements of a dimension of `extent`: [first, end).
std::pair<uint64_t, uint64_t> cellSpan(double a, double b, uint64_t cell, uint64_t extent)
{
    const uint64_t cells = (extent + cell - 1) / cell;
    const double lo = std::clamp(std::floor(a), 0.0, double(extent));
    const double hi = std::clamp(std::ceil(b), 0.0, double(extent));
    uint64_t first = std::min<uint64_t>(uint64_t(lo) / cell, cells);
    uint64_t end = std::min<uint64_t>((uint64_t(hi) + cell - 1) / cell, cells);
    if (end <= first) {  // nothing visible: keep one cell so the view is never empty
        first = std::min<uint64_t>(first, cells ? cells - 1 : 0);
        end = std::min<uint64_t>(first + 1, cells);
    }
    return {first, end};
}

}  // namespace

std::optional<std::pair<uint64_t, uint64_t>> HeatmapGrid::hottestCell() const
{
    std::optional<std::pair<uint64_t, uint64_t>> best;
    double bestValue = -1;
    for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t c = 0; c < cols; ++c) {
            const double v = at(r, c);
            if (std::isnan(v) || v <= bestValue) continue;
            bestValue = v;
            best = std::make_pair(r, c);
        }
    return best;
}

int HeatmapBinning::chooseLevel(const TilePyramid& pyramid, double visibleRows, double visibleCols,
                                int pixelRows, int pixelCols)
{
    const auto& levels = pyramid.levels();
    if (levels.empty()) return 0;
    const double pr = std::max(1, pixelRows), pc = std::max(1, pixelCols);
    for (size_t l = 0; l < levels.size(); ++l) {
        const TileLevel& lv = levels[l];
        // +1: a window that starts mid-cell touches one more cell.
        const double cellsR = std::min(double(lv.gridRows), std::ceil(visibleRows / double(lv.tileRows)) + 1);
        const double cellsC = std::min(double(lv.gridCols), std::ceil(visibleCols / double(lv.tileCols)) + 1);
        if (cellsR <= pr && cellsC <= pc) return int(l);
    }
    return int(levels.size()) - 1;
}

bool HeatmapBinning::elementsFit(double visibleRows, double visibleCols, int pixelRows, int pixelCols)
{
    return std::ceil(visibleRows) + 1 <= double(std::max(1, pixelRows)) &&
           std::ceil(visibleCols) + 1 <= double(std::max(1, pixelCols));
}

double HeatmapBinning::tileValue(const TileLevel& level, size_t tile, HeatmapMetric metric)
{
    if (level.mismatches.empty() || level.mismatches[tile] == 0) return kNaN;
    switch (metric) {
        case HeatmapMetric::MaxAbsError: {
            const double v = level.maxAbsError[tile];
            return v > 0 ? v : kNaN;  // equal-valued mismatches (±0, NaN payloads) have |Δ| = 0
        }
        case HeatmapMetric::Mismatches:
            return double(level.mismatches[tile]);
        case HeatmapMetric::Beyond:
            return level.beyond[tile] ? double(level.beyond[tile]) : kNaN;
    }
    return kNaN;
}

HeatmapGrid HeatmapBinning::tileWindow(const TilePyramid& pyramid, int level, HeatmapMetric metric, double r0,
                                       double r1, double c0, double c1)
{
    HeatmapGrid g;
    const auto& levels = pyramid.levels();
    if (levels.empty()) return g;
    level = std::clamp(level, 0, int(levels.size()) - 1);
    const TileLevel& lv = levels[size_t(level)];
    g.level = level;
    g.cellRows = lv.tileRows;
    g.cellCols = lv.tileCols;
    const auto [rf, re] = cellSpan(r0, r1, lv.tileRows, pyramid.rows());
    const auto [cf, ce] = cellSpan(c0, c1, lv.tileCols, pyramid.cols());
    g.firstRow = rf;
    g.firstCol = cf;
    g.rows = re - rf;
    g.cols = ce - cf;
    g.values.assign(size_t(g.rows * g.cols), kNaN);
    if (lv.mismatches.empty()) return g;
    for (uint64_t r = 0; r < g.rows; ++r)
        for (uint64_t c = 0; c < g.cols; ++c)
            g.values[size_t(r * g.cols + c)] = tileValue(lv, size_t((rf + r) * lv.gridCols + cf + c), metric);
    return g;
}

HeatmapGrid HeatmapBinning::elementWindow(const ElementValues& values, HeatmapMetric metric, double r0,
                                          double r1, double c0, double c1)
{
    HeatmapGrid g;
    g.level = HeatmapGrid::kElementLevel;
    if (values.held() == 0 || values.suspect.size() != values.held()) return g;
    const auto [rf, re] = cellSpan(r0, r1, 1, values.rows);
    const auto [cf, ce] = cellSpan(c0, c1, 1, values.cols);
    g.firstRow = rf;
    g.firstCol = cf;
    g.rows = re - rf;
    g.cols = ce - cf;
    g.values.assign(size_t(g.rows * g.cols), kNaN);
    for (uint64_t r = 0; r < g.rows; ++r)
        for (uint64_t c = 0; c < g.cols; ++c) {
            if (!values.holds(rf + r, cf + c)) continue;  // outside the window read
            const size_t i = values.indexOf(rf + r, cf + c);
            if (!values.differs(i)) continue;
            double v = 1.0;
            if (metric == HeatmapMetric::MaxAbsError) {
                const double s = values.suspect[i], ref = values.reference[i];
                v = std::isfinite(s) && std::isfinite(ref) ? std::fabs(s - ref)
                                                           : std::numeric_limits<double>::infinity();
                if (v == 0) v = kNaN;
            }
            g.values[size_t(r * g.cols + c)] = v;
        }
    return g;
}

std::optional<std::pair<double, double>> HeatmapBinning::positiveRange(const std::vector<double>& values)
{
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (double v : values) {
        if (!(v > 0) || !std::isfinite(v)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (hi <= 0) return std::nullopt;
    return std::make_pair(lo, hi);
}

}  // namespace faultline::views
