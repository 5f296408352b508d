#include "AnomalyRegions.h"

#include <algorithm>
#include <cmath>

namespace faultline {

AnomalyRegions findAnomalyRegions(const Divergence& d, size_t maxRegions)
{
    AnomalyRegions out;
    if (!d.tiles.hasCounts()) return out;
    const TileLevel& lv = d.tiles.levels().front();
    const std::vector<uint64_t>* counts = &lv.mismatches;
    out.counted = "mismatches";
    if (d.anomalies > 0) {
        counts = &lv.anomalies;
        out.counted = "anomalies";
    } else if (d.beyondTolerance > 0) {
        counts = &lv.beyond;
        out.counted = "beyond tolerance";
    }
    const uint64_t gr = lv.gridRows, gc = lv.gridCols;
    std::vector<uint8_t> seen(size_t(gr * gc), 0);
    std::vector<uint64_t> stack;
    std::vector<AnomalyRegion> all;
    for (uint64_t start = 0; start < gr * gc; ++start) {
        if (seen[size_t(start)] || (*counts)[size_t(start)] == 0) continue;
        AnomalyRegion region;
        uint64_t r0 = gr, r1 = 0, c0 = gc, c1 = 0;
        seen[size_t(start)] = 1;
        stack.assign(1, start);
        while (!stack.empty()) {
            const uint64_t t = stack.back();
            stack.pop_back();
            const uint64_t tr = t / gc, tc = t % gc;
            r0 = std::min(r0, tr);
            r1 = std::max(r1, tr + 1);
            c0 = std::min(c0, tc);
            c1 = std::max(c1, tc + 1);
            region.count += (*counts)[size_t(t)];
            region.maxAbsError = std::max(region.maxAbsError, lv.maxAbsError[size_t(t)]);
            ++region.tiles;
            for (int dr = -1; dr <= 1; ++dr)
                for (int dc = -1; dc <= 1; ++dc) {
                    if ((dr < 0 && tr == 0) || (dc < 0 && tc == 0)) continue;
                    const uint64_t nr = tr + uint64_t(int64_t(dr)), nc = tc + uint64_t(int64_t(dc));
                    if (nr >= gr || nc >= gc) continue;
                    const uint64_t n = nr * gc + nc;
                    if (seen[size_t(n)] || (*counts)[size_t(n)] == 0) continue;
                    seen[size_t(n)] = 1;
                    stack.push_back(n);
                }
        }
        region.box.rowBegin = r0 * lv.tileRows;
        region.box.rowEnd = std::min(d.rows, r1 * lv.tileRows);
        region.box.colBegin = c0 * lv.tileCols;
        region.box.colEnd = std::min(d.cols, c1 * lv.tileCols);
        all.push_back(region);
    }
    out.found = all.size();
    auto worse = [](const AnomalyRegion& a, const AnomalyRegion& b) {
        if (a.maxAbsError != b.maxAbsError) return a.maxAbsError > b.maxAbsError;
        if (a.count != b.count) return a.count > b.count;
        if (a.box.rowBegin != b.box.rowBegin) return a.box.rowBegin < b.box.rowBegin;
        return a.box.colBegin < b.box.colBegin;
    };
    const size_t keep = std::min(maxRegions, all.size());
    std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(keep), all.end(), worse);
    all.resize(keep);
    out.regions = std::move(all);
    return out;
}

}  // namespace faultline
