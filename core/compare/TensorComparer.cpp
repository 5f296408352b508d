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

namespace faultline {

// Where a side's elements come from: a TensorFile (read into a buffer) or memory (in place).
struct TensorComparer::Source {
    const TensorFile* file = nullptr;
    size_t index = 0;
    const unsigned char* memory = nullptr;
    unsigned elementSize = 1;

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

uint64_t ceilDiv(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0 ? 1 : 0);
}

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

// State shared by the workers of one comparison; everything but the atomics under `mutex`.
struct RunState {
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

    // ---- geometry ----
    ScanContext ctx;
    ctx.dtype = dtype;
    ctx.tolerance = m_options.tolerance;
    ctx.cols = shape.empty() ? 1 : shape.back();
    ctx.rows = ctx.cols == 0 ? 0 : *elements / ctx.cols;
    ctx.topK = m_options.topK;
    ctx.sampleSize = m_options.sampleSize;
    ctx.vectorMath = m_options.vectorMath;
    TilePyramid pyramid = TilePyramid::forMatrix(*elements == 0 ? 0 : ctx.rows, ctx.cols, m_options.tiles);
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

    const uint64_t chunk = m_options.chunkElements;
    const uint64_t chunks = ceilDiv(*elements, chunk);
    unsigned threads =
        m_options.threads != 0 ? m_options.threads : std::max(1u, std::thread::hardware_concurrency());
    threads = unsigned(std::min<uint64_t>(threads, std::max<uint64_t>(chunks, 1)));

    RunState st;
    st.sums.resize(size_t(chunks));
    st.pyramid = std::move(pyramid);
    st.total.spreadThreshold = ChunkAccumulator::kNone;

    auto cancelRequested = [&] { return m_cancel != nullptr && m_cancel->load(std::memory_order_relaxed); };
    auto reportProgress = [&](uint64_t done) {
        if (!m_progress) return;
        if (!m_progress(chunks == 0 ? 1.0 : double(done) / double(chunks), label)) {
            std::lock_guard lock(st.mutex);
            st.cancelled = true;
            st.stop = true;
        }
    };

    auto work = [&](bool reportInline) {
        ChunkAccumulator acc;
        std::vector<uint64_t> bufS, bufR;
        if (m_pool) {
            bufS = m_pool->take();
            bufR = m_pool->take();
        }
        std::vector<double> bounds;
        while (!st.stop.load()) {
            if (cancelRequested()) {
                std::lock_guard lock(st.mutex);
                st.cancelled = true;
                st.stop = true;
                break;
            }
            const uint64_t c = st.nextChunk.fetch_add(1);
            if (c >= chunks) break;
            const uint64_t first = c * chunk;
            const uint64_t count = std::min(chunk, *elements - first);
            uint64_t threshold;
            {
                std::lock_guard lock(st.mutex);
                threshold = st.total.spreadThreshold;
            }
            acc.begin(first, count, ctx, threshold);
            auto fail = [&](const Error& e) {
                std::lock_guard lock(st.mutex);
                if (!st.errorChunk || c < *st.errorChunk) {
                    st.errorChunk = c;
                    st.error = e;
                }
                st.stop = true;
            };
            Result<const void*> ps = suspect.data(first, count, bufS);
            if (!ps) {
                fail(ps.error());
                break;
            }
            Result<const void*> pr = reference.data(first, count, bufR);
            if (!pr) {
                fail(pr.error());
                break;
            }
            const double* boundsPtr = nullptr;
            if (ctx.tolerance.kind == ToleranceKind::Bound) {
                bounds.assign(size_t(count), 0.0);
                Status s = m_bounds(first, count, bounds.data());
                if (!s) {
                    fail(Error{label + ": bound: " + s.message(), s.error().code});
                    break;
                }
                boundsPtr = bounds.data();
            }
            scanChunk(ctx, *ps, *pr, boundsPtr, acc);
            suspect.release(first, count);
            reference.release(first, count);
            uint64_t done;
            {
                std::lock_guard lock(st.mutex);
                st.total.mergeCounters(acc, ctx);
                if (acc.tilesTouched)
                    st.pyramid.addFinestRows(acc.stripFirstTileRow, acc.stripTileRows,
                                             acc.tileMismatches.data(), acc.tileBeyond.data(),
                                             acc.tileAnomalies.data(), acc.tileMaxAbs.data());
                if (acc.linesTouched) {
                    if (st.rowCounts.empty()) {
                        st.rowCounts.assign(size_t(ctx.rowBuckets), 0);
                        st.colCounts.assign(size_t(ctx.colBuckets), 0);
                    }
                    for (uint64_t i = 0;
                         i < acc.stripRowBuckets && acc.stripFirstRowBucket + i < ctx.rowBuckets; ++i)
                        st.rowCounts[size_t(acc.stripFirstRowBucket + i)] += acc.rowCounts[size_t(i)];
                    for (size_t i = 0; i < st.colCounts.size(); ++i) st.colCounts[i] += acc.colCounts[i];
                }
                st.sums[size_t(c)] = ChunkSums{acc.sumAbs, acc.sumAbs2, acc.sumRel, acc.sumRel2};
                done = ++st.chunksDone;
            }
            st.changed.notify_all();
            if (reportInline) reportProgress(done);
        }
        if (m_pool) {
            m_pool->give(std::move(bufS));
            m_pool->give(std::move(bufR));
        }
        {
            std::lock_guard lock(st.mutex);
            --st.workersRunning;
        }
        st.changed.notify_all();
    };

    if (threads <= 1) {
        st.workersRunning = 1;
        work(true);
    } else {
        st.workersRunning = threads;
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, false);
        // Progress is reported once per finished chunk, as with one thread, however many chunks
        // finished between two wake-ups (fast scans finish several), including those finished
        // after the last worker left.
        uint64_t reported = 0;
        std::unique_lock lock(st.mutex);
        for (;;) {
            if (st.chunksDone != reported && !st.stop) {
                const uint64_t target = st.chunksDone;
                lock.unlock();
                for (uint64_t v = reported + 1; v <= target && !st.stop.load(); ++v) reportProgress(v);
                reported = target;
                lock.lock();
                continue;
            }
            if (st.workersRunning == 0) break;
            st.changed.wait_for(lock, std::chrono::milliseconds(50));
            if (!st.stop && cancelRequested()) {
                st.cancelled = true;
                st.stop = true;
            }
        }
        lock.unlock();
        for (std::thread& t : pool) t.join();
    }

    if (st.errorChunk) return st.error;
    if (st.cancelled || st.chunksDone != chunks) return cancelledError(kCompareCancelled);

    // ---- finalize ----
    const ChunkAccumulator& t = st.total;
    Divergence d;
    d.name = name;
    d.dtype = dtype;
    d.shape = shape;
    d.rows = ctx.rows;
    d.cols = ctx.cols;
    d.tolerance = m_options.tolerance.toString();
    d.elements = *elements;
    d.mismatches = t.mismatches;
    d.beyondTolerance = t.beyond;
    d.anomalies = t.anomalies;
    d.finitePairs = *elements - (t.suspectNonFinite - t.mismatchSuspectNonFinite) - t.nonFiniteMismatches;
    if (t.firstMismatch != ChunkAccumulator::kNone) d.firstMismatch = t.firstMismatch;
    if (t.firstBeyond != ChunkAccumulator::kNone) d.firstBeyond = t.firstBeyond;
    d.nanIntroduced = t.nanIntroduced;
    d.nanRemoved = t.nanRemoved;
    d.infIntroduced = t.infIntroduced;
    d.infRemoved = t.infRemoved;
    d.infSignChanged = t.infSignChanged;
    d.nanPayloadChanged = t.nanPayloadChanged;
    d.nonFiniteMismatches = t.nonFiniteMismatches;

    // Sums in chunk order: the one summation order, whatever the thread count.
    ChunkSums total;
    for (const ChunkSums& s : st.sums) {
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

    const unsigned width = bitLayout(dtype).totalBits;
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

    st.pyramid.buildCoarserLevels();
    d.tiles = std::move(st.pyramid);
    d.top = t.top;
    std::sort(d.top.begin(), d.top.end(), ranksBefore);

    d.spatial.rowBucket = uint64_t(1) << ctx.rowBucketShift;
    d.spatial.colBucket = uint64_t(1) << ctx.colBucketShift;
    d.spatial.rowCounts = std::move(st.rowCounts);
    d.spatial.colCounts = std::move(st.colCounts);
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
