#pragma once
// The anomaly regions' outlines on the heatmap: the worst regions (and the one stepped to) drawn
// as rectangles at least kMinPixels wide on screen, so a region smaller than a pixel at fit
// still stands out; the current and the worst region drawn thicker.
#include <QRectF>
#include <vector>

#include "core/compare/AnomalyRegions.h"

class QCustomPlot;
class QCPItemRect;

namespace faultline::views {

class HeatmapOutlines {
public:
    static constexpr int kMinPixels = 14;
    static constexpr size_t kMaxOutlines = 24;

    explicit HeatmapOutlines(QCustomPlot* plot) : m_plot(plot) {}

    // Draws the outlines of `regions` for the plot's current ranges (`current`: the region
    // stepped to, -1 for none); `draw` false hides them all. Does not replot.
    void update(const AnomalyRegions& regions, int current, bool draw);
    // The outlines drawn now, in element coordinates.
    std::vector<QRectF> shown() const;

private:
    QCustomPlot* m_plot = nullptr;
    std::vector<QCPItemRect*> m_items;  // owned by the plot
};

}  // namespace faultline::views
