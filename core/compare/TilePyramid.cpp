#include "TilePyramid.h"

#include <algorithm>

namespace faultline {

namespace {

// Smallest power-of-two multiple of `base` that cuts `extent` into at most `maxTiles` tiles.
uint64_t tileSide(uint64_t extent, uint64_t base, uint64_t maxTiles)
{
    uint64_t side = std::max<uint64_t>(base, 1);
    maxTiles = std::max<uint64_t>(maxTiles, 1);
    while (ceilDiv(extent, side) > maxTiles && side < (uint64_t(1) << 62)) side *= 2;
    return side;
}

}  // namespace

TilePyramid TilePyramid::forMatrix(uint64_t rows, uint64_t cols, const TileOptions& options)
{
    TilePyramid p;
    p.m_rows = rows;
    p.m_cols = cols;
    if (rows == 0 || cols == 0) return p;
    TileLevel level;
    level.tileRows = tileSide(rows, options.baseTileRows, options.maxTilesPerSide);
    level.tileCols = tileSide(cols, options.baseTileCols, options.maxTilesPerSide);
    level.gridRows = ceilDiv(rows, level.tileRows);
    level.gridCols = ceilDiv(cols, level.tileCols);
    p.m_levels.push_back(level);
    while (level.gridRows > 1 || level.gridCols > 1) {
        level.tileRows *= 2;
        level.tileCols *= 2;
        level.gridRows = ceilDiv(level.gridRows, 2);
        level.gridCols = ceilDiv(level.gridCols, 2);
        p.m_levels.push_back(level);
    }
    return p;
}

uint64_t TilePyramid::tileElements(size_t level, uint64_t tileRow, uint64_t tileCol) const
{
    if (level >= m_levels.size()) return 0;
    const TileLevel& l = m_levels[level];
    if (tileRow >= l.gridRows || tileCol >= l.gridCols) return 0;
    const uint64_t r0 = tileRow * l.tileRows, c0 = tileCol * l.tileCols;
    const uint64_t r1 = std::min(m_rows, r0 + l.tileRows), c1 = std::min(m_cols, c0 + l.tileCols);
    return (r1 - r0) * (c1 - c0);
}

void TilePyramid::releaseCounts()
{
    // Assigning a fresh vector (not `= {}`, which keeps the capacity) returns the memory.
    for (TileLevel& l : m_levels) {
        l.mismatches = std::vector<uint64_t>();
        l.beyond = std::vector<uint64_t>();
        l.anomalies = std::vector<uint64_t>();
        l.maxAbsError = std::vector<double>();
    }
}

void TilePyramid::allocateFinest()
{
    if (m_levels.empty() || hasCounts()) return;
    TileLevel& l = m_levels.front();
    const size_t n = size_t(l.tileCount());
    l.mismatches.assign(n, 0);
    l.beyond.assign(n, 0);
    l.anomalies.assign(n, 0);
    l.maxAbsError.assign(n, 0.0);
}

void TilePyramid::addFinestRows(uint64_t firstTileRow, uint64_t tileRowCount, const uint64_t* mismatches,
                                const uint64_t* beyond, const uint64_t* anomalies, const double* maxAbsError)
{
    if (m_levels.empty()) return;
    allocateFinest();
    TileLevel& l = m_levels.front();
    if (firstTileRow >= l.gridRows) return;
    tileRowCount = std::min(tileRowCount, l.gridRows - firstTileRow);
    const size_t offset = size_t(firstTileRow * l.gridCols);
    const size_t n = size_t(tileRowCount * l.gridCols);
    for (size_t i = 0; i < n; ++i) {
        l.mismatches[offset + i] += mismatches[i];
        l.beyond[offset + i] += beyond[i];
        l.anomalies[offset + i] += anomalies[i];
        l.maxAbsError[offset + i] = std::max(l.maxAbsError[offset + i], maxAbsError[i]);
    }
}

void TilePyramid::buildCoarserLevels()
{
    if (!hasCounts()) return;
    for (size_t k = 1; k < m_levels.size(); ++k) {
        const TileLevel& fine = m_levels[k - 1];
        TileLevel& coarse = m_levels[k];
        const size_t n = size_t(coarse.tileCount());
        coarse.mismatches.assign(n, 0);
        coarse.beyond.assign(n, 0);
        coarse.anomalies.assign(n, 0);
        coarse.maxAbsError.assign(n, 0.0);
        for (uint64_t fr = 0; fr < fine.gridRows; ++fr) {
            for (uint64_t fc = 0; fc < fine.gridCols; ++fc) {
                const size_t src = size_t(fr * fine.gridCols + fc);
                const size_t dst = size_t((fr / 2) * coarse.gridCols + fc / 2);
                coarse.mismatches[dst] += fine.mismatches[src];
                coarse.beyond[dst] += fine.beyond[src];
                coarse.anomalies[dst] += fine.anomalies[src];
                coarse.maxAbsError[dst] = std::max(coarse.maxAbsError[dst], fine.maxAbsError[src]);
            }
        }
    }
}

bool TilePyramid::setStoredCounts(size_t level, std::vector<uint64_t> mismatches,
                                  std::vector<uint64_t> beyond, std::vector<uint64_t> anomalies,
                                  std::vector<double> maxAbsError)
{
    if (level >= m_levels.size()) return false;
    TileLevel& l = m_levels[level];
    const uint64_t n = l.tileCount();
    if (mismatches.size() != n || beyond.size() != n || anomalies.size() != n || maxAbsError.size() != n)
        return false;
    l.mismatches = std::move(mismatches);
    l.beyond = std::move(beyond);
    l.anomalies = std::move(anomalies);
    l.maxAbsError = std::move(maxAbsError);
    return true;
}

}  // namespace faultline
