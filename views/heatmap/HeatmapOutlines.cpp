#include "views/heatmap/HeatmapOutlines.h"

#include <qcustomplot.h>
#include <algorithm>

#include "views/plots/PlotStyle.h"

namespace faultline::views {

std::vector<QRectF> HeatmapOutlines::shown() const
{
    std::vector<QRectF> out;
    for (const QCPItemRect* item : m_items)
        if (item->visible())
            out.emplace_back(QPointF(item->topLeft->coords()), QPointF(item->bottomRight->coords()));
    return out;
}

void HeatmapOutlines::update(const AnomalyRegions& regions, int current, bool draw)
{
    std::vector<int> shown;
    for (size_t k = 0; k < regions.regions.size() && k < kMaxOutlines; ++k) shown.push_back(int(k));
    if (current >= int(kMaxOutlines)) shown.push_back(current);
    while (m_items.size() < shown.size()) {
        auto* item = new QCPItemRect(m_plot);
        item->setClipToAxisRect(true);
        item->setSelectable(false);
        item->setBrush(Qt::NoBrush);
        m_items.push_back(item);
    }
    const QCPRange xr = m_plot->xAxis->range(), yr = m_plot->yAxis->range();
    const double perPxX = xr.size() / std::max(1, m_plot->axisRect()->width());
    const double perPxY = yr.size() / std::max(1, m_plot->axisRect()->height());
    const double minW = kMinPixels * perPxX, minH = kMinPixels * perPxY;
    for (size_t k = 0; k < m_items.size(); ++k) {
        QCPItemRect* item = m_items[k];
        if (!draw || k >= shown.size()) {
            item->setVisible(false);
            continue;
        }
        const int index = shown[k];
        const Region& b = regions.regions[size_t(index)].box;
        double c0 = double(b.colBegin), c1 = double(b.colEnd), r0 = double(b.rowBegin), r1 = double(b.rowEnd);
        if (c1 - c0 < minW) {
            const double mid = 0.5 * (c0 + c1);
            c0 = mid - 0.5 * minW;
            c1 = mid + 0.5 * minW;
        }
        if (r1 - r0 < minH) {
            const double mid = 0.5 * (r0 + r1);
            r0 = mid - 0.5 * minH;
            r1 = mid + 0.5 * minH;
        }
        item->topLeft->setCoords(c0, r0);
        item->bottomRight->setCoords(c1, r1);
        item->setPen(QPen(PlotStyle::regionOutlineColor(), index == current || index == 0 ? 2.5 : 1.5));
        item->setVisible(true);
    }
}

}  // namespace faultline::views
