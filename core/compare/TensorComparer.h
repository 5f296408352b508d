#pragma once
// Compares one suspect tensor with one reference tensor in a single streaming pass: bounded
// memory (two chunks per worker thread), all cores, raw bits in typed loops. Results do not
// depend on the thread count (Divergence.h: determinism).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../Result.h"
#include "../TensorFile.h"
#include "ChunkBufferPool.h"
#include "Divergence.h"
#include "Tolerance.h"

namespace faultline {

struct CompareOptions {
    Tolerance tolerance;
    unsigned threads = 0;                        // 0: std::thread::hardware_concurrency()
    uint64_t chunkElements = uint64_t(1) << 20;  // clamped to [1, 2^26]; float sums depend on it
    size_t topK = 16;
    TileOptions tiles;
    size_t sampleSize = SpatialProfile::kSampleSize;  // both anomaly samples
    // float32/bfloat16/float16 error arithmetic through the vector path (MismatchMath.h); false
    // takes the scalar per-element path, the reference the vector path is tested against. The
    // results are the same either way.
    bool vectorMath = true;
};

// Fills bounds[0, count) with the absolute error bound of elements [first, first + count) for
// the `bound` tolerance. Called from worker threads, concurrently, once per chunk: thread-safe.
using BoundProvider = std::function<Status(uint64_t first, uint64_t count, double* bounds)>;

// Progress: the fraction done (0..1) and what is being worked on; return false to cancel.
// Always called on the thread that called compare(), between chunks.
using ProgressCallback = std::function<bool(double fraction, const std::string& what)>;

// The error message of a cancelled comparison.
inline constexpr const char* kCompareCancelled = "comparison cancelled";

class TensorComparer {
public:
    explicit TensorComparer(CompareOptions options = {});

    const CompareOptions& options() const { return m_options; }
    void setBoundProvider(BoundProvider provider) { m_bounds = std::move(provider); }
    // Checked between chunks; when it becomes true, compare() returns kCompareCancelled.
    void setCancelFlag(const std::atomic<bool>* cancel) { m_cancel = cancel; }
    void setProgress(ProgressCallback progress) { m_progress = std::move(progress); }
    // Read buffers shared with the other comparisons of a run (optional).
    void setBufferPool(std::shared_ptr<ChunkBufferPool> pool) { m_pool = std::move(pool); }

    // Compares tensor `suspectIndex` of `suspect` with tensor `referenceIndex` of `reference`.
    // Errors: different dtypes or shapes, a read error (naming the file and tensor), the `bound`
    // tolerance without a BoundProvider, cancellation (kCompareCancelled).
    Result<Divergence> compare(const TensorFile& suspect, size_t suspectIndex, const TensorFile& reference,
                               size_t referenceIndex) const;

    // The same for two in-memory tensors of `dtype` and `shape` (packed little-endian elements),
    // read in place (copied chunk by chunk when not aligned for the element type).
    Result<Divergence> compare(DType dtype, const std::vector<uint64_t>& shape, const void* suspect,
                               const void* reference, const std::string& name = "") const;

private:
    struct Source;
    struct Scan;  // one run's geometry, shared state and results (TensorComparer.cpp)
    Result<Divergence> run(const Source& suspect, const Source& reference, DType dtype,
                           const std::vector<uint64_t>& shape, const std::string& name) const;
    // One worker: scans chunks taken in turn until none is left, an error or a cancel.
    void scanChunks(const Source& suspect, const Source& reference, Scan& scan, bool reportInline) const;
    // The workers on `threads` threads, progress reported from this one; returns when all left.
    void runWorkers(const Source& suspect, const Source& reference, Scan& scan, unsigned threads) const;
    void reportProgress(Scan& scan, uint64_t done) const;
    bool cancelRequested() const;

    CompareOptions m_options;
    BoundProvider m_bounds;
    const std::atomic<bool>* m_cancel = nullptr;
    ProgressCallback m_progress;
    std::shared_ptr<ChunkBufferPool> m_pool;
};

}  // namespace faultline
