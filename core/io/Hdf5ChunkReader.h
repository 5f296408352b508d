#pragma once
// Reads a chunked HDF5 tensor chunk by chunk, decoding outside HDF5's lock so that several
// threads decompress at once: each chunk's stored bytes come from H5Dread_chunk (under the lock,
// a plain file read), its filters are undone here (deflate with zlib, shuffle), and the part of it
// a read asks for is copied out. Decoded chunks are kept in a small cache shared by the readers of
// the tensor: a chunk that one thread is decoding is left to it while the others decode the rest,
// so a flat range that cuts a chunk in two (the compare engine's pieces rarely match a file's
// chunks) costs one decode, not two.
//
// Only pipelines it can undo exactly are taken (shuffle, deflate and fletcher32 in any order and
// combination, or none; a chunk whose optional filter was skipped, as HDF5 records, included);
// other filters (scale-offset, n-bit, szip, plugins) go through H5Dread. Deflate is undone with
// libdeflate where it was found at build time, else zlib. Fletcher32 checksums are verified here
// as HDF5 verifies them; a chunk stored unfiltered but for its checksum is still read in place
// from the mapping.
#include <hdf5.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../Result.h"
#include "../TensorFile.h"
#include "FlatRange.h"
#include "Hdf5Handles.h"

namespace faultline::hdf5 {

class ChunkedTensorReader : public std::enable_shared_from_this<ChunkedTensorReader> {
public:
    // A reader for `dataset` (chunked, stored elements of `elementSize` bytes, read as
    // little-endian), or nullptr when its layout or filters are not ones this reader undoes.
    // `where` prefixes errors ("PATH: tensor 'NAME'").
    static std::unique_ptr<ChunkedTensorReader> open(hid_t dataset, const std::vector<uint64_t>& shape,
                                                     unsigned elementSize, hid_t memoryType,
                                                     std::string where);
    ~ChunkedTensorReader();

    // The file that holds the dataset, mapped read-only (its addresses are offsets in it): stored
    // chunks are then taken from the mapping, outside HDF5's lock, and chunks stored as they are
    // read (no filter applied, little-endian) are copied out of it without an intermediate copy.
    // Pages of such chunks leave the resident set when the chunk leaves the cache.
    void setMapping(const unsigned char* map, size_t size)
    {
        m_map = map;
        m_mapSize = size;
    }

    // Elements [first, first + count) in row-major order into dst. Thread-safe.
    Status read(uint64_t first, uint64_t count, void* dst);
    // The same elements in place: the rows of the chunks that hold them, in row-major order
    // (TensorFile::runs). The chunks stay in the cache while the result's `keep` lives; the reader
    // must be owned by a shared_ptr. Thread-safe.
    Result<TensorRuns> runs(uint64_t first, uint64_t count);

private:
    ChunkedTensorReader() = default;
    struct Chunk;
    std::shared_ptr<Chunk> acquire(uint64_t index, const std::vector<uint64_t>& origin, bool* started);
    Status fetch(const std::vector<uint64_t>& origin, Chunk& chunk) const;
    void release(const std::shared_ptr<Chunk>& chunk);
    // The chunks that hold a flat range (its boxes, flatRangeBoxes), decoded (by this thread or by
    // another) and in use until release(); `needed` their linear indices, in the same order.
    Status acquireRange(const std::vector<HyperslabBox>& boxes, std::vector<uint64_t>& needed,
                        std::vector<std::shared_ptr<Chunk>>& chunks);
    // Calls run(offset from first, chunk bytes, elements) for every row of the chunks inside the
    // range that starts at `first`.
    template <class Run>
    void forEachRun(uint64_t first, const std::vector<HyperslabBox>& boxes,
                    const std::vector<uint64_t>& needed, const std::vector<std::shared_ptr<Chunk>>& chunks,
                    Run&& run) const;
    std::vector<uint64_t> originOf(uint64_t linear) const;

    DatasetHandle m_dataset;
    std::vector<uint64_t> m_shape, m_chunk, m_grid;  // per dimension: extent, chunk extent, chunks
    unsigned m_elementSize = 1;
    size_t m_chunkBytes = 0;
    bool m_swap = false;                  // stored big-endian: swap each element after decoding
    std::vector<H5Z_filter_t> m_filters;  // the pipeline, in the order it was applied on writing
    std::vector<unsigned char> m_fill;    // one element: what a chunk never written holds
    std::string m_where;
    const unsigned char* m_map = nullptr;
    size_t m_mapSize = 0;

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::map<uint64_t, std::shared_ptr<Chunk>> m_cache;  // decoded chunks by linear chunk index
    size_t m_cachedBytes = 0, m_cacheLimit = 0;
    uint64_t m_clock = 0;
};

}  // namespace faultline::hdf5
