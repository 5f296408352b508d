#include "TensorComparer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "ChunkScanner.h"
#include "TilePyramid.h"

namespace faultline {

// Where a side's elements come from: a TensorFile (read into a buffer) or memory (in place).
struct TensorComparer::Source {
    const TensorFile* file = nullptr;
    size_t index = 0;
    const unsigned char* memory = nullptr;
    unsigned elementSize = 1;

    // Elements [first, first + count) as runs (TensorFile::runs): in place where they can be
    // (memory, a mapped contiguous tensor, the rows of a chunked tensor's decoded or mapped
    // chunks), else one run copied into `buffer`.
    Result<TensorRuns> piece(uint64_t first, uint64_t count, std::vector<uint64_t>& buffer) const
    {
        if (file != nullptr && memory == nullptr && file->mappedData(index) == nullptr) {
            Result<TensorRuns> runs = file->runs(index, first, count);
            if (!runs || !runs->runs.empty()) return runs;
        }
        Result<const void*> p = data(first, count, buffer);
        if (!p) return p.error();
        TensorRuns one;
        one.runs.push_back(ElementRun{0, *p, count});
        return one;
    }

    Result<const void*> data(uint64_t first, uint64_t count, std::vector<uint64_t>& buffer) const
    {
        const uint64_t bytes = count * elementSize;
        if (memory != nullptr) {
            const unsigned char* p = memory + first * elementSize;
            if (reinterpret_cast<uintptr_t>(p) % elementSize == 0) return static_cast<const void*>(p);
            buffer.resize(size_t((bytes + 7) / 8));  // misaligned: the typed loops need a copy
            std::memcpy(buffer.data(), p, size_t(bytes));
            return static_cast<const void*>(buffer.data());
        }
        // Stored exactly as read() would hand them out: scan in place, no copy.
        if (const auto* mapped = static_cast<const unsigned char*>(file->mappedData(index))) {
            const unsigned char* p = mapped + first * elementSize;
            if (reinterpret_cast<uintptr_t>(p) % elementSize == 0) return static_cast<const void*>(p);
        }
        buffer.resize(size_t((bytes + 7) / 8));
        Status s = file->read(index, first, count, buffer.data());
        if (!s) return s.error();
        return static_cast<const void*>(buffer.data());
    }

    // After the scan of [first, first + count): mapped pages leave the resident set.
    void release(uint64_t first, uint64_t count) const
    {
        if (file != nullptr) file->releaseMapped(index, first, count);
    }
};

namespace {

// Smallest shift s with ceil(extent / 2^s) <= limit.
unsigned bucketShift(uint64_t extent, uint64_t limit)
{
    unsigned s = 0;
    while (s < 63 && ceilDiv(extent, uint64_t(1) << s) > limit) ++s;
    return s;
}

std::optional<uint64_t> productOf(const std::vector<uint64_t>& shape)
{
    uint64_t n = 1;
    for (uint64_t d : shape) {
        if (d != 0 && n > UINT64_MAX / d) return std::nullopt;
        n *= d;
    }
    return n;
}

struct ChunkSums {
    double abs = 0, abs2 = 0, rel = 0, rel2 = 0;
};

BitFlips toBitFlips(const std::array<uint64_t, 64>& flips, const std::array<uint64_t, 64>& toOne,
                    unsigned width)
{
    BitFlips b;
    b.flips.assign(flips.begin(), flips.begin() + width);
    b.toOne.assign(toOne.begin(), toOne.begin() + width);
    return b;
}

std::optional<Region> toRegion(const BoundingBox& box)
{
    if (box.empty()) return std::nullopt;
    return Region{box.minRow, box.maxRow + 1, box.minCol, box.maxCol + 1};
}

}  // namespace

TensorComparer::TensorComparer(CompareOptions options) : m_options(std::move(options))
{
    m_options.chunkElements = std::clamp<uint64_t>(m_options.chunkElements, 1, uint64_t(1) << 26);
}

Result<Divergence> TensorComparer::compare(const TensorFile& suspect, size_t suspectIndex,
                                           const TensorFile& reference, size_t referenceIndex) const
{
    if (suspectIndex >= suspect.tensors().size())
        return fileError(suspect.path(), "no tensor #" + std::to_string(suspectIndex));
    if (referenceIndex >= reference.tensors().size())
        return fileError(reference.path(), "no tensor #" + std::to_string(referenceIndex));
    const TensorInfo& s = suspect.tensors()[suspectIndex];
    const TensorInfo& r = reference.tensors()[referenceIndex];
    if (s.dtype != r.dtype)
        return Error{s.name + ": dtype " + std::string(dtypeName(s.dtype)) + " (suspect) vs " +
                         std::string(dtypeName(r.dtype)) + " (reference): bitwise comparison is meaningless",
                     ErrorCode::Format};
    if (s.shape != r.shape)
        return Error{s.name + ": shape " + shapeToString(s.shape) + " (suspect) vs " +
                         shapeToString(r.shape) + " (reference)",
                     ErrorCode::Format};
    Source ss{&suspect, suspectIndex, nullptr, dtypeSize(s.dtype)};
    Source rs{&reference, referenceIndex, nullptr, dtypeSize(r.dtype)};
    Result<Divergence> d = run(ss, rs, s.dtype, s.shape, s.name);
    if (d.ok()) {
        d->suspectName = s.name;
        d->referenceName = r.name;
    }
    return d;
}

Result<Divergence> TensorComparer::compare(DType dtype, const std::vector<uint64_t>& shape,
                                           const void* suspect, const void* reference,
                                           const std::string& name) const
{
    Source ss{nullptr, 0, static_cast<const unsigned char*>(suspect), dtypeSize(dtype)};
    Source rs{nullptr, 0, static_cast<const unsigned char*>(reference), dtypeSize(dtype)};
    Result<Divergence> d = run(ss, rs, dtype, shape, name);
    if (d.ok()) d->suspectName = d->referenceName = name;
    return d;
}

// One comparison: its geometry and the state its workers share (all but the atomics under `mutex`).
struct TensorComparer::Scan {
    ScanContext ctx;
    std::string label;
    uint64_t elements = 0;
    uint64_t chunk = 0;   // elements per chunk
    uint64_t chunks = 0;  // chunks in the tensor
    std::mutex mutex;
    std::condition_variable changed;
    std::atomic<uint64_t> nextChunk{0};
    std::atomic<bool> stop{false};
    bool cancelled = false;
    uint64_t chunksDone = 0;
    unsigned workersRunning = 0;
    std::optional<uint64_t> errorChunk;
    Error error;
    ChunkAccumulator total;
    std::vector<ChunkSums> sums;
    TilePyramid pyramid;
    std::vector<uint64_t> rowCounts, colCounts;

    // Under `mutex`: the first error in chunk order wins, whatever the thread order.
    void fail(uint64_t c, const Error& e)
    {
        std::lock_guard lock(mutex);
        if (!errorChunk || c < *errorChunk) {
            errorChunk = c;
            error = e;
        }
        stop = true;
    }

    // Chunk `c`'s accumulator into the totals, tiles, line counts and per-chunk sums; returns the
    // number of chunks done.
    uint64_t merge(uint64_t c, const ChunkAccumulator& acc)
    {
        std::lock_guard lock(mutex);
        total.mergeCounters(acc, ctx);
        if (acc.tilesTouched)
            pyramid.addFinestRows(acc.stripFirstTileRow, acc.stripTileRows, acc.tileMismatches.data(),
                                  acc.tileBeyond.data(), acc.tileAnomalies.data(), acc.tileMaxAbs.data());
        if (acc.linesTouched) {
            if (rowCounts.empty()) {
                rowCounts.assign(size_t(ctx.rowBuckets), 0);
                colCounts.assign(size_t(ctx.colBuckets), 0);
            }
            for (uint64_t i = 0; i < acc.stripRowBuckets && acc.stripFirstRowBucket + i < ctx.rowBuckets; ++i)
                rowCounts[size_t(acc.stripFirstRowBucket + i)] += acc.rowCounts[size_t(i)];
            for (size_t i = 0; i < colCounts.size(); ++i) colCounts[i] += acc.colCounts[i];
        }
        sums[size_t(c)] = ChunkSums{acc.sumAbs, acc.sumAbs2, acc.sumRel, acc.sumRel2};
        return ++chunksDone;
    }
};

namespace {

// The scan's geometry: rows and columns, the finest tiles (the pyramid is made here), the line
// buckets of the spatial profile.
ScanContext scanGeometry(const CompareOptions& options, DType dtype, const std::vector<uint64_t>& shape,
                         uint64_t elements, TilePyramid& pyramid)
{
    ScanContext ctx;
    ctx.dtype = dtype;
    ctx.tolerance = options.tolerance;
    ctx.cols = shape.empty() ? 1 : shape.back();
    ctx.rows = ctx.cols == 0 ? 0 : elements / ctx.cols;
    ctx.topK = options.topK;
    ctx.sampleSize = options.sampleSize;
    ctx.vectorMath = options.vectorMath;
    pyramid = TilePyramid::forMatrix(elements == 0 ? 0 : ctx.rows, ctx.cols, options.tiles);
    if (!pyramid.levels().empty()) {
        const TileLevel& l0 = pyramid.levels().front();
        ctx.tileRows = l0.tileRows;
        ctx.tileCols = l0.tileCols;
        ctx.gridRows = l0.gridRows;
        ctx.gridCols = l0.gridCols;
        ctx.tileColShift = std::has_single_bit(l0.tileCols) ? int(std::countr_zero(l0.tileCols)) : -1;
    }
    ctx.rowBucketShift = bucketShift(ctx.rows, SpatialProfile::kMaxLines);
    ctx.colBucketShift = bucketShift(ctx.cols, SpatialProfile::kMaxLines);
    ctx.rowBuckets = ceilDiv(ctx.rows, uint64_t(1) << ctx.rowBucketShift);
    ctx.colBuckets = ceilDiv(ctx.cols, uint64_t(1) << ctx.colBucketShift);
    return ctx;
}

// Counts, non-finite transitions, error statistics (sums in chunk order: the one summation order,
// whatever the thread count) and bit statistics of a finished scan.
void fillStatistics(Divergence& d, const ChunkAccumulator& t, const std::vector<ChunkSums>& sums)
{
    d.mismatches = t.mismatches;
    d.beyondTolerance = t.beyond;
    d.anomalies = t.anomalies;
    d.finitePairs = d.elements - (t.suspectNonFinite - t.mismatchSuspectNonFinite) - t.nonFiniteMismatches;
    if (t.firstMismatch != ChunkAccumulator::kNone) d.firstMismatch = t.firstMismatch;
    if (t.firstBeyond != ChunkAccumulator::kNone) d.firstBeyond = t.firstBeyond;
    d.nanIntroduced = t.nanIntroduced;
    d.nanRemoved = t.nanRemoved;
    d.infIntroduced = t.infIntroduced;
    d.infRemoved = t.infRemoved;
    d.infSignChanged = t.infSignChanged;
    d.nanPayloadChanged = t.nanPayloadChanged;
    d.nonFiniteMismatches = t.nonFiniteMismatches;

    ChunkSums total;
    for (const ChunkSums& s : sums) {
        total.abs += s.abs;
        total.abs2 += s.abs2;
        total.rel += s.rel;
        total.rel2 += s.rel2;
    }
    d.absError.count = d.finitePairs;
    d.absError.max = t.maxAbs;
    d.absError.histogram = t.absHist;
    if (d.finitePairs > 0) {
        d.absError.mean = total.abs / double(d.finitePairs);
        d.absError.rms = std::sqrt(total.abs2 / double(d.finitePairs));
    }
    d.relInfinite = t.relInfinite;
    d.relError.count = d.finitePairs - t.relInfinite;
    d.relError.max = t.relInfinite > 0 ? std::numeric_limits<double>::infinity() : t.maxRel;
    d.relError.histogram = t.relHist;
    if (d.relError.count > 0) {
        d.relError.mean = total.rel / double(d.relError.count);
        d.relError.rms = std::sqrt(total.rel2 / double(d.relError.count));
    }
    d.ulpHistogram = t.ulpHist;
    d.maxUlp = t.maxUlp;

    const unsigned width = bitLayout(d.dtype).totalBits;
    d.bits = toBitFlips(t.flips, t.toOne, width);
    d.beyondBits = toBitFlips(t.beyondFlips, t.beyondToOne, width);
    d.anomalyBits = toBitFlips(t.anomalyFlips, t.anomalyToOne, width);
    d.anomalyPopcount = t.anomalyPopcount;
    d.anomalySingleBit.assign(t.anomalySingleBit.begin(), t.anomalySingleBit.begin() + width);
    d.anomalySignOnly = t.anomalySignOnly;
    d.anomalyExponent = t.anomalyExponent;
    d.anomalyExponentOnly = t.anomalyExponentOnly;
    d.anomalyNonFinite = t.anomalyNonFinite;
    d.region = toRegion(t.mismatchBox);
    d.beyondRegion = toRegion(t.beyondBox);
}

}  // namespace

bool TensorComparer::cancelRequested() const
{
    return m_cancel != nullptr && m_cancel->load(std::memory_order_relaxed);
}

void TensorComparer::reportProgress(Scan& scan, uint64_t done) const
{
    if (!m_progress) return;
    if (!m_progress(scan.chunks == 0 ? 1.0 : double(done) / double(scan.chunks), scan.label)) {
        std::lock_guard lock(scan.mutex);
        scan.cancelled = true;
        scan.stop = true;
    }
}

void TensorComparer::scanChunks(const Source& suspect, const Source& reference, Scan& scan,
                                bool reportInline) const
{
    ChunkAccumulator acc;
    std::vector<uint64_t> bufS, bufR;
    if (m_pool) {
        bufS = m_pool->take();
        bufR = m_pool->take();
    }
    std::vector<double> bounds;
    while (!scan.stop.load()) {
        if (cancelRequested()) {
            std::lock_guard lock(scan.mutex);
            scan.cancelled = true;
            scan.stop = true;
            break;
        }
        const uint64_t c = scan.nextChunk.fetch_add(1);
        if (c >= scan.chunks) break;
        const uint64_t first = c * scan.chunk;
        const uint64_t count = std::min(scan.chunk, scan.elements - first);
        uint64_t threshold;
        {
            std::lock_guard lock(scan.mutex);
            threshold = scan.total.spreadThreshold;
        }
        acc.begin(first, count, scan.ctx, threshold);
        Result<TensorRuns> ps = suspect.piece(first, count, bufS);
        if (!ps) {
            scan.fail(c, ps.error());
            break;
        }
        Result<TensorRuns> pr = reference.piece(first, count, bufR);
        if (!pr) {
            scan.fail(c, pr.error());
            break;
        }
        const double* boundsPtr = nullptr;
        if (scan.ctx.tolerance.kind == ToleranceKind::Bound) {
            bounds.assign(size_t(count), 0.0);
            Status s = m_bounds(first, count, bounds.data());
            if (!s) {
                scan.fail(c, Error{scan.label + ": bound: " + s.message(), s.error().code});
                break;
            }
            boundsPtr = bounds.data();
        }
        scanChunk(scan.ctx, ps->runs, pr->runs, boundsPtr, acc);
        suspect.release(first, count);
        reference.release(first, count);
        const uint64_t done = scan.merge(c, acc);
        scan.changed.notify_all();
        if (reportInline) reportProgress(scan, done);
    }
    if (m_pool) {
        m_pool->give(std::move(bufS));
        m_pool->give(std::move(bufR));
    }
    {
        std::lock_guard lock(scan.mutex);
        --scan.workersRunning;
    }
    scan.changed.notify_all();
}

void TensorComparer::runWorkers(const Source& suspect, const Source& reference, Scan& scan,
                                unsigned threads) const
{
    if (threads <= 1) {
        scan.workersRunning = 1;
        scanChunks(suspect, reference, scan, true);
        return;
    }
    scan.workersRunning = threads;
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&] { scanChunks(suspect, reference, scan, false); });
    // Progress is reported once per finished chunk, as with one thread, however many chunks
    // finished between two wake-ups (fast scans finish several), including those finished after
    // the last worker left.
    uint64_t reported = 0;
    std::unique_lock lock(scan.mutex);
    for (;;) {
        if (scan.chunksDone != reported && !scan.stop) {
            const uint64_t target = scan.chunksDone;
            lock.unlock();
            for (uint64_t v = reported + 1; v <= target && !scan.stop.load(); ++v) reportProgress(scan, v);
            reported = target;
            lock.lock();
            continue;
        }
        if (scan.workersRunning == 0) break;
        scan.changed.wait_for(lock, std::chrono::milliseconds(50));
        if (!scan.stop && cancelRequested()) {
            scan.cancelled = true;
            scan.stop = true;
        }
    }
    lock.unlock();
    for (std::thread& t : pool) t.join();
}

Result<Divergence> TensorComparer::run(const Source& suspect, const Source& reference, DType dtype,
                                       const std::vector<uint64_t>& shape, const std::string& name) const
{
    const std::string label = name.empty() ? std::string("tensor") : name;
    const std::optional<uint64_t> elements = productOf(shape);
    if (!elements)
        return Error{label + ": shape " + shapeToString(shape) + " has too many elements", ErrorCode::Format};
    if (m_options.tolerance.kind == ToleranceKind::Bound && !m_bounds)
        return Error{
            label + ": tolerance 'bound' needs per-element bounds from the caller, and none were given",
            ErrorCode::Usage};

    Scan scan;
    scan.label = label;
    scan.elements = *elements;
    scan.ctx = scanGeometry(m_options, dtype, shape, *elements, scan.pyramid);
    scan.chunk = m_options.chunkElements;
    scan.chunks = ceilDiv(*elements, scan.chunk);
    scan.sums.resize(size_t(scan.chunks));
    scan.total.spreadThreshold = ChunkAccumulator::kNone;
    unsigned threads =
        m_options.threads != 0 ? m_options.threads : std::max(1u, std::thread::hardware_concurrency());
    threads = unsigned(std::min<uint64_t>(threads, std::max<uint64_t>(scan.chunks, 1)));
    runWorkers(suspect, reference, scan, threads);

    if (scan.errorChunk) return scan.error;
    if (scan.cancelled || scan.chunksDone != scan.chunks) return cancelledError(kCompareCancelled);

    const ChunkAccumulator& t = scan.total;
    Divergence d;
    d.name = name;
    d.dtype = dtype;
    d.shape = shape;
    d.rows = scan.ctx.rows;
    d.cols = scan.ctx.cols;
    d.tolerance = m_options.tolerance.toString();
    d.elements = *elements;
    fillStatistics(d, t, scan.sums);

    scan.pyramid.buildCoarserLevels();
    d.tiles = std::move(scan.pyramid);
    d.top = t.top;
    std::sort(d.top.begin(), d.top.end(), ranksBefore);

    d.spatial.rowBucket = uint64_t(1) << scan.ctx.rowBucketShift;
    d.spatial.colBucket = uint64_t(1) << scan.ctx.colBucketShift;
    d.spatial.rowCounts = std::move(scan.rowCounts);
    d.spatial.colCounts = std::move(scan.colCounts);
    if (t.firstAnomaly != ChunkAccumulator::kNone) {
        d.spatial.firstAnomaly = t.firstAnomaly;
        d.spatial.lastAnomaly = t.lastAnomaly;
    }
    d.spatial.firstIndices = t.firstIndices;
    d.spatial.spreadSample = t.spread;
    std::sort(d.spatial.spreadSample.begin(), d.spatial.spreadSample.end());

    d.signature = classifyDivergence(d);
    return d;
}

}  // namespace faultline
