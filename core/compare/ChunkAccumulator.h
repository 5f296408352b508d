#pragma once
// Internal to the compare engine: what one chunk of a comparison accumulates, and how chunk
// results merge. Everything merged here is an integer count, a maximum, or a bounded selection
// under a total order, so the merge order (thread scheduling) cannot change the result.
// Floating-point sums stay per chunk (sumAbs...) and are added in chunk order by the caller.
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "../DType.h"
#include "Divergence.h"
#include "Tolerance.h"

namespace faultline {

// Fixed facts of one tensor comparison, shared read-only by all chunk scans.
struct ScanContext {
    DType dtype = DType::Float32;
    Tolerance tolerance;
    uint64_t rows = 0, cols = 0;
    uint64_t tileRows = 1, tileCols = 1, gridRows = 0, gridCols = 0;
    int tileColShift = -1;  // log2(tileCols) when a power of two, else -1
    unsigned rowBucketShift = 0, colBucketShift = 0;
    uint64_t rowBuckets = 0, colBuckets = 0;
    size_t topK = 16;
    size_t sampleSize = SpatialProfile::kSampleSize;
    bool vectorMath = true;  // CompareOptions::vectorMath
};

// The ranking of ElementDiff::top: NaN/Inf first (earliest index first among them), then larger
// |error|, then larger ulp distance, then smaller index. A strict total order.
bool ranksBefore(const ElementDiff& a, const ElementDiff& b);

// The hash that picks SpatialProfile::spreadSample (splitmix64 finalizer).
inline uint64_t sampleHash(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

struct BoundingBox {
    uint64_t minRow = std::numeric_limits<uint64_t>::max(), maxRow = 0;
    uint64_t minCol = std::numeric_limits<uint64_t>::max(), maxCol = 0;
    void add(uint64_t row, uint64_t col)
    {
        minRow = row < minRow ? row : minRow;
        maxRow = row > maxRow ? row : maxRow;
        minCol = col < minCol ? col : minCol;
        maxCol = col > maxCol ? col : maxCol;
    }
    void merge(const BoundingBox& o)
    {
        if (o.empty()) return;
        add(o.minRow, o.minCol);
        add(o.maxRow, o.maxCol);
    }
    bool empty() const { return minRow > maxRow; }
};

struct ChunkAccumulator {
    static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();

    uint64_t first = 0, count = 0;  // the chunk: flat elements [first, first + count)

    uint64_t mismatches = 0, beyond = 0, anomalies = 0;
    uint64_t suspectNonFinite = 0;          // every suspect NaN/Inf, equal or not
    uint64_t mismatchSuspectNonFinite = 0;  // ... among mismatches
    uint64_t nanIntroduced = 0, nanRemoved = 0, infIntroduced = 0, infRemoved = 0;
    uint64_t infSignChanged = 0, nanPayloadChanged = 0, nonFiniteMismatches = 0;
    uint64_t relInfinite = 0;
    uint64_t firstMismatch = kNone, firstBeyond = kNone, firstAnomaly = kNone, lastAnomaly = 0;

    double maxAbs = 0.0, maxRel = 0.0;
    // Per-chunk sums over mismatched finite pairs in flat order (not merged here).
    double sumAbs = 0.0, sumAbs2 = 0.0, sumRel = 0.0, sumRel2 = 0.0;
    DecadeHistogram absHist, relHist;
    std::array<uint64_t, 65> ulpHist{};
    uint64_t maxUlp = 0;

    std::array<uint64_t, 64> flips{}, toOne{};
    std::array<uint64_t, 64> beyondFlips{}, beyondToOne{};
    std::array<uint64_t, 64> anomalyFlips{}, anomalyToOne{};
    std::array<uint64_t, 65> anomalyPopcount{};
    std::array<uint64_t, 64> anomalySingleBit{};  // single-bit-like anomalies by bit position
    uint64_t anomalySignOnly = 0, anomalyExponent = 0, anomalyExponentOnly = 0, anomalyNonFinite = 0;

    BoundingBox mismatchBox, beyondBox;

    std::vector<ElementDiff> top;  // unordered, at most topK
    size_t worstTop = 0;           // index in `top` of the entry ranked last (when full)

    std::vector<uint64_t> firstIndices;  // ascending, at most sampleSize
    std::vector<uint64_t> spread;        // candidates with sampleHash <= spreadThreshold
    uint64_t spreadThreshold = kNone;

    // Level-0 tile rows [stripFirstTileRow, + stripTileRows) x gridCols touched by this chunk.
    uint64_t stripFirstTileRow = 0, stripTileRows = 0;
    bool tilesTouched = false;
    std::vector<uint64_t> tileMismatches, tileBeyond, tileAnomalies;
    std::vector<double> tileMaxAbs;
    // Anomalies per row bucket [stripFirstRowBucket, + stripRowBuckets) and per column bucket.
    uint64_t stripFirstRowBucket = 0, stripRowBuckets = 0;
    bool linesTouched = false;
    std::vector<uint64_t> rowCounts, colCounts;

    // Clears everything and sets the chunk; strips are sized but zeroed only when touched.
    void begin(uint64_t chunkFirst, uint64_t chunkCount, const ScanContext& ctx, uint64_t spreadLimit);
    void touchTiles(const ScanContext& ctx);
    void touchLines(const ScanContext& ctx);
    void offerTop(const ElementDiff& e, size_t k);
    void addSpread(uint64_t index, size_t sampleSize);
    // Adds the counters, maxima, histograms, boxes and bounded selections of `c` (not the sums,
    // not the strips).
    void mergeCounters(const ChunkAccumulator& c, const ScanContext& ctx);
};

}  // namespace faultline
