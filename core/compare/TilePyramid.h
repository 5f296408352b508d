#pragma once
// Where the mismatches are, at several zoom levels, in bounded memory: the tensor seen as a 2-D
// matrix (last dimension = columns, all others flattened into rows), cut into tiles.
//
// Level 0 is the finest: tiles of tileRows x tileCols elements (16 x 16 unless the options say
// otherwise; each side doubles until the grid has at most maxTilesPerSide tiles along it, so a
// huge tensor never needs more than maxTilesPerSide^2 tiles). Each next level pools 2 x 2 tiles
// (counts summed, max |error| maxed) until one tile is left. Tiles are aligned to the matrix
// origin; tiles on the last row/column of the grid may be clipped by the matrix edge.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace faultline {

// ceil(a / b) for b > 0.
inline uint64_t ceilDiv(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0 ? 1 : 0);
}

struct TileOptions {
    uint32_t baseTileRows = 16;
    uint32_t baseTileCols = 16;
    uint32_t maxTilesPerSide = 1024;  // per side of level 0; 1024^2 tiles ~ 32 MiB at most
};

struct TileLevel {
    uint64_t tileRows = 0, tileCols = 0;  // elements per tile (nominal; edge tiles are clipped)
    uint64_t gridRows = 0, gridCols = 0;  // tiles
    // Per tile, row-major over the grid. Empty when the comparison found no mismatch at all.
    std::vector<uint64_t> mismatches;  // bit patterns differ
    std::vector<uint64_t> beyond;      // beyond tolerance
    std::vector<uint64_t> anomalies;   // beyond tolerance and not rounding-sized (Divergence.h)
    std::vector<double> maxAbsError;   // finite |s - r|; +inf where a NaN/inf mismatch lies

    uint64_t tileCount() const { return gridRows * gridCols; }
};

class TilePyramid {
public:
    TilePyramid() = default;
    // The geometry for a rows x cols matrix: level sizes fixed, counts not allocated yet.
    static TilePyramid forMatrix(uint64_t rows, uint64_t cols, const TileOptions& options);

    uint64_t rows() const { return m_rows; }
    uint64_t cols() const { return m_cols; }
    const std::vector<TileLevel>& levels() const { return m_levels; }
    // True when counts are held (the comparison found mismatches).
    bool hasCounts() const { return !m_levels.empty() && !m_levels.front().mismatches.empty(); }
    // Frees the per-tile counts of every level, keeping the geometry (hasCounts() is false
    // afterwards): for runs that store or drop the tiles as each tensor finishes.
    void releaseCounts();
    // Elements of the matrix inside tile (tileRow, tileCol) of `level` (clipped at the edges).
    uint64_t tileElements(size_t level, uint64_t tileRow, uint64_t tileCol) const;

    // --- building (used by TensorComparer) ---
    // Allocates zeroed level-0 counts.
    void allocateFinest();
    // Adds per-tile counts for level-0 tile rows [firstTileRow, firstTileRow + tileRowCount),
    // each array holding tileRowCount * gridCols entries.
    void addFinestRows(uint64_t firstTileRow, uint64_t tileRowCount, const uint64_t* mismatches,
                       const uint64_t* beyond, const uint64_t* anomalies, const double* maxAbsError);
    // Fills levels 1.. by 2 x 2 pooling of level 0.
    void buildCoarserLevels();

    // --- reading a stored pyramid (CompareResultsFile) ---
    // The counts of `level`, as stored; false (nothing changed) when a vector's size is not the
    // level's tileCount().
    bool setStoredCounts(size_t level, std::vector<uint64_t> mismatches, std::vector<uint64_t> beyond,
                         std::vector<uint64_t> anomalies, std::vector<double> maxAbsError);

private:
    uint64_t m_rows = 0, m_cols = 0;
    std::vector<TileLevel> m_levels;
};

}  // namespace faultline
