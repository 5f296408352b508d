#include "ChunkAccumulator.h"

#include <algorithm>
#include <cmath>

namespace faultline {

bool ranksBefore(const ElementDiff& a, const ElementDiff& b)
{
    if (a.nonFinite != b.nonFinite) return a.nonFinite;
    if (!a.nonFinite) {
        if (a.absError != b.absError) return a.absError > b.absError;
        if (a.ulp != b.ulp) return a.ulp > b.ulp;
    }
    return a.index < b.index;
}

namespace {

// Keeps the `limit` entries with the smallest (hash, index).
void keepSmallestHashes(std::vector<uint64_t>& v, size_t limit)
{
    auto less = [](uint64_t a, uint64_t b) {
        const uint64_t ha = sampleHash(a), hb = sampleHash(b);
        return ha != hb ? ha < hb : a < b;
    };
    if (v.size() > limit) {
        std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(limit), v.end(), less);
        v.resize(limit);
    }
}

template <size_t N>
void addArray(std::array<uint64_t, N>& a, const std::array<uint64_t, N>& b)
{
    for (size_t i = 0; i < N; ++i) a[i] += b[i];
}

}  // namespace

void ChunkAccumulator::begin(uint64_t chunkFirst, uint64_t chunkCount, const ScanContext& ctx,
                             uint64_t spreadLimit)
{
    // Keep the vectors' capacity; reset every value.
    std::vector<ElementDiff> keepTop = std::move(top);
    std::vector<uint64_t> keepFirst = std::move(firstIndices), keepSpread = std::move(spread);
    std::vector<uint64_t> keepTm = std::move(tileMismatches), keepTb = std::move(tileBeyond),
                          keepTa = std::move(tileAnomalies), keepRows = std::move(rowCounts),
                          keepCols = std::move(colCounts);
    std::vector<double> keepTe = std::move(tileMaxAbs);
    *this = ChunkAccumulator{};
    top = std::move(keepTop);
    top.clear();
    firstIndices = std::move(keepFirst);
    firstIndices.clear();
    spread = std::move(keepSpread);
    spread.clear();
    tileMismatches = std::move(keepTm);
    tileBeyond = std::move(keepTb);
    tileAnomalies = std::move(keepTa);
    tileMaxAbs = std::move(keepTe);
    rowCounts = std::move(keepRows);
    colCounts = std::move(keepCols);

    first = chunkFirst;
    count = chunkCount;
    spreadThreshold = spreadLimit;
    if (chunkCount == 0 || ctx.cols == 0) return;
    const uint64_t firstRow = chunkFirst / ctx.cols;
    const uint64_t lastRow = (chunkFirst + chunkCount - 1) / ctx.cols;
    stripFirstTileRow = firstRow / ctx.tileRows;
    stripTileRows = lastRow / ctx.tileRows - stripFirstTileRow + 1;
    stripFirstRowBucket = firstRow >> ctx.rowBucketShift;
    stripRowBuckets = (lastRow >> ctx.rowBucketShift) - stripFirstRowBucket + 1;
}

void ChunkAccumulator::touchTiles(const ScanContext& ctx)
{
    if (tilesTouched) return;
    tilesTouched = true;
    const size_t n = size_t(stripTileRows * ctx.gridCols);
    tileMismatches.assign(n, 0);
    tileBeyond.assign(n, 0);
    tileAnomalies.assign(n, 0);
    tileMaxAbs.assign(n, 0.0);
}

void ChunkAccumulator::touchLines(const ScanContext& ctx)
{
    if (linesTouched) return;
    linesTouched = true;
    rowCounts.assign(size_t(stripRowBuckets), 0);
    colCounts.assign(size_t(ctx.colBuckets), 0);
}

void ChunkAccumulator::offerTop(const ElementDiff& e, size_t k)
{
    if (k == 0) return;
    if (top.size() < k) {
        top.push_back(e);
        if (top.size() == k) {
            worstTop = 0;
            for (size_t i = 1; i < top.size(); ++i)
                if (ranksBefore(top[worstTop], top[i])) worstTop = i;
        }
        return;
    }
    if (!ranksBefore(e, top[worstTop])) return;
    top[worstTop] = e;
    worstTop = 0;
    for (size_t i = 1; i < top.size(); ++i)
        if (ranksBefore(top[worstTop], top[i])) worstTop = i;
}

void ChunkAccumulator::addSpread(uint64_t index, size_t sampleSize)
{
    if (sampleSize == 0 || sampleHash(index) > spreadThreshold) return;
    spread.push_back(index);
    if (spread.size() >= 2 * sampleSize) {
        keepSmallestHashes(spread, sampleSize);
        uint64_t maxHash = 0;
        for (uint64_t i : spread) maxHash = std::max(maxHash, sampleHash(i));
        spreadThreshold = maxHash;  // later candidates must beat the current sample's worst
    }
}

void ChunkAccumulator::mergeCounters(const ChunkAccumulator& c, const ScanContext& ctx)
{
    mismatches += c.mismatches;
    beyond += c.beyond;
    anomalies += c.anomalies;
    suspectNonFinite += c.suspectNonFinite;
    mismatchSuspectNonFinite += c.mismatchSuspectNonFinite;
    nanIntroduced += c.nanIntroduced;
    nanRemoved += c.nanRemoved;
    infIntroduced += c.infIntroduced;
    infRemoved += c.infRemoved;
    infSignChanged += c.infSignChanged;
    nanPayloadChanged += c.nanPayloadChanged;
    nonFiniteMismatches += c.nonFiniteMismatches;
    relInfinite += c.relInfinite;
    firstMismatch = std::min(firstMismatch, c.firstMismatch);
    firstBeyond = std::min(firstBeyond, c.firstBeyond);
    if (c.firstAnomaly != kNone) {
        firstAnomaly = std::min(firstAnomaly, c.firstAnomaly);
        lastAnomaly = std::max(lastAnomaly, c.lastAnomaly);
    }
    maxAbs = std::max(maxAbs, c.maxAbs);
    maxRel = std::max(maxRel, c.maxRel);
    absHist.merge(c.absHist);
    relHist.merge(c.relHist);
    addArray(ulpHist, c.ulpHist);
    maxUlp = std::max(maxUlp, c.maxUlp);
    addArray(flips, c.flips);
    addArray(toOne, c.toOne);
    addArray(beyondFlips, c.beyondFlips);
    addArray(beyondToOne, c.beyondToOne);
    addArray(anomalyFlips, c.anomalyFlips);
    addArray(anomalyToOne, c.anomalyToOne);
    addArray(anomalyPopcount, c.anomalyPopcount);
    addArray(anomalySingleBit, c.anomalySingleBit);
    anomalySignOnly += c.anomalySignOnly;
    anomalyExponent += c.anomalyExponent;
    anomalyExponentOnly += c.anomalyExponentOnly;
    anomalyNonFinite += c.anomalyNonFinite;
    mismatchBox.merge(c.mismatchBox);
    beyondBox.merge(c.beyondBox);

    // Top-K: the best topK of the union under the total order.
    if (!c.top.empty()) {
        top.insert(top.end(), c.top.begin(), c.top.end());
        std::sort(top.begin(), top.end(), ranksBefore);
        if (top.size() > ctx.topK) top.resize(ctx.topK);
    }
    // First indices: the sampleSize smallest of the union.
    if (!c.firstIndices.empty()) {
        std::vector<uint64_t> merged;
        merged.reserve(firstIndices.size() + c.firstIndices.size());
        std::merge(firstIndices.begin(), firstIndices.end(), c.firstIndices.begin(), c.firstIndices.end(),
                   std::back_inserter(merged));
        merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
        if (merged.size() > ctx.sampleSize) merged.resize(ctx.sampleSize);
        firstIndices = std::move(merged);
    }
    // Spread sample: the sampleSize smallest hashes of the union.
    if (!c.spread.empty()) {
        spread.insert(spread.end(), c.spread.begin(), c.spread.end());
        keepSmallestHashes(spread, ctx.sampleSize);
        if (spread.size() == ctx.sampleSize) {
            uint64_t maxHash = 0;
            for (uint64_t i : spread) maxHash = std::max(maxHash, sampleHash(i));
            spreadThreshold = maxHash;
        }
    }
}

}  // namespace faultline
