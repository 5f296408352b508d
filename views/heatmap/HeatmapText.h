#pragma once
// The heatmap's words: the metric's name, the hover text of one element (its tile at the level
// the signature names, its SM, its values) and the lines under the map (counts, signature,
// anomaly regions, SM summary, which element values are held).
#include <QString>
#include <cstdint>

#include "core/compare/AnomalyRegions.h"
#include "core/compare/Divergence.h"
#include "core/replay/TileSmMap.h"
#include "views/heatmap/ElementValues.h"
#include "views/heatmap/HeatmapBinning.h"

namespace faultline::views {

QString heatmapMetricName(HeatmapMetric metric);

// What the hover says about element (row, col) of `d`. `gridLevel`: the pyramid level drawn
// (its tile is named too when coarser than the signature's); `sm` (may be null) and `smSource`:
// the tile->SM map and where it comes from; `values` (may be null): the element values held.
QString describeHeatmapElement(const Divergence& d, uint64_t row, uint64_t col, int gridLevel, bool bySm,
                               const TileSmMap* sm, const QString& smSource, const ElementValues* values);

// The lines under the map. `d` may be null; `regionIndex` -1 for no region stepped to;
// `smLine` and `valuesNote` are added when not empty.
QString heatmapInfoText(const Divergence* d, const AnomalyRegions& regions, int regionIndex,
                        const QString& smLine, const QString& valuesNote);

}  // namespace faultline::views
