#pragma once
// What the heatmap draws, decided without widgets: which tile-pyramid level fits the visible
// part of the tensor into the widget's pixels (never more cells than pixels), and the window of
// cells of that level covering it. Below the finest pyramid level, element values (when loaded)
// give one cell per element.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/compare/TilePyramid.h"
#include "views/heatmap/ElementValues.h"

namespace faultline::views {

enum class HeatmapMetric { MaxAbsError, Mismatches, Beyond };

// A window of cells: element rows [firstRow * cellRows, ...), cols likewise.
struct HeatmapGrid {
    static constexpr int kElementLevel = -1;
    int level = 0;                        // pyramid level, or kElementLevel
    uint64_t cellRows = 1, cellCols = 1;  // elements per cell (edge cells may be clipped)
    uint64_t firstRow = 0, firstCol = 0;  // cell coordinates of values[0]
    uint64_t rows = 0, cols = 0;          // cells held
    std::vector<double> values;           // rows x cols, row-major; NaN = nothing there

    bool empty() const { return values.empty(); }
    double at(uint64_t r, uint64_t c) const { return values[size_t(r * cols + c)]; }
    // The largest value (+inf counts as largest) and its cell, relative to the window.
    std::optional<std::pair<uint64_t, uint64_t>> hottestCell() const;
};

class HeatmapBinning {
public:
    // The finest level whose cells covering visibleRows x visibleCols elements are no more than
    // pixelRows x pixelCols. The coarsest level when even that does not fit.
    static int chooseLevel(const TilePyramid& pyramid, double visibleRows, double visibleCols, int pixelRows,
                           int pixelCols);
    // Whether one cell per element fits.
    static bool elementsFit(double visibleRows, double visibleCols, int pixelRows, int pixelCols);

    // The cells of `level` that intersect element rows [r0, r1) and cols [c0, c1) (clamped to
    // the matrix). Cells without a mismatch are NaN.
    static HeatmapGrid tileWindow(const TilePyramid& pyramid, int level, HeatmapMetric metric, double r0,
                                  double r1, double c0, double c1);
    // One cell per element: |s - r| (MaxAbsError; +inf where a NaN/Inf differs) or 1 (counts)
    // where the bits differ, NaN where they are equal or outside the window `values` holds.
    static HeatmapGrid elementWindow(const ElementValues& values, HeatmapMetric metric, double r0, double r1,
                                     double c0, double c1);

    // Smallest positive and largest finite value (for a log colour scale); nullopt when none.
    static std::optional<std::pair<double, double>> positiveRange(const std::vector<double>& values);
    // The value a tile of `level` holds for `metric`.
    static double tileValue(const TileLevel& level, size_t tile, HeatmapMetric metric);
};

}  // namespace faultline::views
