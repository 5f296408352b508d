#include "Hdf5ChunkReader.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#ifdef FAULTLINE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>

#include "FlatRange.h"
#include "Fletcher32.h"

namespace faultline::hdf5 {

namespace {

constexpr size_t kMaxChunkBytes = size_t(256) << 20;  // larger chunks go through H5Dread
constexpr size_t kMinCacheBytes = size_t(16) << 20;
constexpr size_t kMaxCacheBytes = size_t(256) << 20;

// The whole pages inside [p, p + bytes) of a mapped file leave the resident set (they stay in
// the page cache): what has been read from the mapping no longer counts as this process's memory.
void releasePages(const unsigned char* p, size_t bytes)
{
    const auto page = uintptr_t(::sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// Inflates a zlib stream (HDF5's deflate filter) of exactly `size` bytes out; false when it is
// corrupt or inflates to another size.
bool inflateExactly(const unsigned char* in, size_t inSize, unsigned char* out, size_t size)
{
#ifdef FAULTLINE_HAVE_LIBDEFLATE
    struct Decompressor {
        libdeflate_decompressor* d = libdeflate_alloc_decompressor();
        ~Decompressor() { libdeflate_free_decompressor(d); }
    };
    thread_local Decompressor decompressor;
    if (decompressor.d == nullptr) return false;
    size_t produced = 0;
    return libdeflate_zlib_decompress(decompressor.d, in, inSize, out, size, &produced) ==
               LIBDEFLATE_SUCCESS &&
           produced == size;
#else
    uLongf length = uLongf(size);
    return uncompress(out, &length, in, uLong(inSize)) == Z_OK && length == size;
#endif
}

void swapElements(unsigned char* p, size_t bytes, unsigned size)
{
    for (size_t i = 0; i + size <= bytes; i += size) std::reverse(p + i, p + i + size);
}

// Buffers that resizing does not zero: every byte of a chunk is written before it is read.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = UninitializedAllocator<U>;
    };
    template <class U>
    void construct(U* p) noexcept
    {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args)
    {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

// Element i assembled from its bytes, byte b at in[b * n + i] (little-endian, as the host).
template <class U>
void unshuffleAs(const unsigned char* in, unsigned char* out, size_t n, size_t from)
{
    for (size_t i = from; i < n; ++i) {
        U v = 0;
        for (unsigned b = 0; b < sizeof(U); ++b) v |= U(in[b * n + i]) << (8 * b);
        std::memcpy(out + i * sizeof(U), &v, sizeof(U));
    }
}

// HDF5's shuffle filter, undone: byte b of element i was stored at b * n + i.
void unshuffle(const unsigned char* in, unsigned char* out, size_t bytes, unsigned size)
{
    static_assert(std::endian::native == std::endian::little, "elements are assembled little-endian");
    const size_t n = bytes / size;
    size_t done = 0;
#if defined(__SSE2__)
    // 16 elements at a time: byte streams interleaved by unpacking (SSE2 is x86-64's baseline).
    if (size == 2) {
        for (; done + 16 <= n; done += 16) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + done));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + n + done));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * done), _mm_unpacklo_epi8(a, b));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * done + 16), _mm_unpackhi_epi8(a, b));
        }
    } else if (size == 4) {
        for (; done + 16 <= n; done += 16) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + done));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + n + done));
            const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * n + done));
            const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 3 * n + done));
            const __m128i abLow = _mm_unpacklo_epi8(a, b), abHigh = _mm_unpackhi_epi8(a, b);
            const __m128i cdLow = _mm_unpacklo_epi8(c, d), cdHigh = _mm_unpackhi_epi8(c, d);
            auto* o = reinterpret_cast<__m128i*>(out + 4 * done);
            _mm_storeu_si128(o, _mm_unpacklo_epi16(abLow, cdLow));
            _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(abLow, cdLow));
            _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(abHigh, cdHigh));
            _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(abHigh, cdHigh));
        }
    }
#endif
    switch (size) {
        case 2:
            unshuffleAs<uint16_t>(in, out, n, done);
            break;
        case 4:
            unshuffleAs<uint32_t>(in, out, n, done);
            break;
        case 8:
            unshuffleAs<uint64_t>(in, out, n, 0);
            break;
        default:
            for (size_t i = 0; i < n; ++i)
                for (unsigned b = 0; b < size; ++b) out[i * size + b] = in[size_t(b) * n + i];
    }
    std::memcpy(out + n * size, in + n * size, bytes - n * size);  // a tail HDF5 leaves as it is
}

}  // namespace

using Bytes = std::vector<unsigned char, UninitializedAllocator<unsigned char>>;

struct ChunkedTensorReader::Chunk {
    Bytes data;
    const unsigned char* view = nullptr;  // the elements: data, or the chunk in the mapped file
    bool mapped = false;
    bool ready = false;
    bool failed = false;
    Error error;
    int users = 0;
    uint64_t lastUse = 0;
};

std::unique_ptr<ChunkedTensorReader> ChunkedTensorReader::open(hid_t dataset,
                                                               const std::vector<uint64_t>& shape,
                                                               unsigned elementSize, hid_t memoryType,
                                                               std::string where)
{
    Hdf5Lock lock;
    if (shape.empty() || elementSize == 0) return nullptr;
    PlistHandle dcpl(H5Dget_create_plist(dataset));
    TypeHandle fileType(H5Dget_type(dataset));
    if (!dcpl || !fileType || H5Pget_layout(dcpl.get()) != H5D_CHUNKED ||
        H5Pget_external_count(dcpl.get()) != 0 || H5Tget_size(fileType.get()) != elementSize) {
        H5Eclear2(H5E_DEFAULT);
        return nullptr;
    }
    const int rank = int(shape.size());
    std::vector<hsize_t> chunk(shape.size(), 0);
    if (H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank) {
        H5Eclear2(H5E_DEFAULT);
        return nullptr;
    }
    auto reader = std::unique_ptr<ChunkedTensorReader>(new ChunkedTensorReader());
    reader->m_shape = shape;
    reader->m_elementSize = elementSize;
    reader->m_where = std::move(where);
    size_t bytes = elementSize;
    uint64_t bandChunks = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (chunk[d] == 0 || bytes > kMaxChunkBytes / chunk[d]) return nullptr;
        bytes *= chunk[d];
        reader->m_chunk.push_back(chunk[d]);
        reader->m_grid.push_back((shape[d] + chunk[d] - 1) / chunk[d]);
        if (d > 0) bandChunks = std::min<uint64_t>(bandChunks * reader->m_grid.back(), uint64_t(1) << 30);
    }
    reader->m_chunkBytes = bytes;
    reader->m_swap = elementSize > 1 && H5Tget_order(fileType.get()) == H5T_ORDER_BE;
    const int filters = H5Pget_nfilters(dcpl.get());
    for (int i = 0; i < filters; ++i) {
        unsigned flags = 0, config = 0;
        size_t count = 8;
        unsigned values[8] = {0};
        const H5Z_filter_t id =
            H5Pget_filter2(dcpl.get(), unsigned(i), &flags, &count, values, 0, nullptr, &config);
        if (id == H5Z_FILTER_SHUFFLE && count >= 1 && values[0] == elementSize)
            reader->m_filters.push_back(id);
        else if (id == H5Z_FILTER_DEFLATE || id == H5Z_FILTER_FLETCHER32)
            reader->m_filters.push_back(id);
        else {
            H5Eclear2(H5E_DEFAULT);
            return nullptr;
        }
    }
    reader->m_fill.assign(elementSize, 0);
    H5D_fill_value_t defined = H5D_FILL_VALUE_UNDEFINED;
    if (H5Pfill_value_defined(dcpl.get(), &defined) >= 0 && defined != H5D_FILL_VALUE_UNDEFINED &&
        H5Pget_fill_value(dcpl.get(), memoryType, reader->m_fill.data()) < 0)
        reader->m_fill.assign(elementSize, 0);
    H5Eclear2(H5E_DEFAULT);
    // A band of chunks (every chunk along the inner dimensions) being read and the next one fit:
    // readers of neighbouring ranges meet in the same band.
    const uint64_t band = bandChunks * bytes;
    reader->m_cacheLimit = size_t(std::clamp<uint64_t>(3 * band, kMinCacheBytes, kMaxCacheBytes));
    if (H5Iinc_ref(dataset) < 0) return nullptr;
    reader->m_dataset = DatasetHandle(dataset);
    return reader;
}

ChunkedTensorReader::~ChunkedTensorReader()
{
    for (const auto& [index, chunk] : m_cache)
        if (chunk->mapped) releasePages(chunk->view, m_chunkBytes);
}

Status ChunkedTensorReader::fetch(const std::vector<uint64_t>& origin, Chunk& chunk) const
{
    std::vector<hsize_t> offset(origin.begin(), origin.end());
    Bytes stored;
    const unsigned char* storedBytes = nullptr;
    size_t storedSize = 0;
    const unsigned char* mappedStored = nullptr;  // the stored bytes in the mapping, when read from there
    size_t mappedSize = 0;
    uint32_t skipped = 0;
    {
        Hdf5Lock lock;
        unsigned mask = 0;
        haddr_t address = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info_by_coord(m_dataset.get(), offset.data(), &mask, &address, &size) < 0)
            return Error{m_where + ": cannot locate a chunk: " + hdf5ErrorText(), ErrorCode::Io};
        if (size == 0 || address == HADDR_UNDEF) {  // never written: the fill value
            chunk.data.resize(m_chunkBytes);
            for (size_t i = 0; i < m_chunkBytes; i += m_elementSize)
                std::memcpy(chunk.data.data() + i, m_fill.data(), m_elementSize);
            chunk.view = chunk.data.data();
            return Status::success();
        }
        const bool deflated =
            std::find(m_filters.begin(), m_filters.end(), H5Z_FILTER_DEFLATE) != m_filters.end();
        const uint64_t plausible =
            (deflated ? compressBound(uLong(m_chunkBytes)) + 4096 : m_chunkBytes) + 4 * m_filters.size();
        if (size > plausible)
            return Error{m_where + ": a chunk of " + std::to_string(size) + " stored bytes for " +
                             std::to_string(m_chunkBytes) + " bytes of elements",
                         ErrorCode::Format};
        skipped = mask;
        if (m_map != nullptr && address <= m_mapSize && size <= m_mapSize - address) {
            storedBytes = m_map + address;  // read outside the lock
            storedSize = size_t(size);
            mappedStored = storedBytes;
            mappedSize = storedSize;
        } else {
            stored.resize(size_t(size));
            if (H5Dread_chunk(m_dataset.get(), H5P_DEFAULT, offset.data(), &skipped, stored.data()) < 0)
                return Error{m_where + ": cannot read a chunk: " + hdf5ErrorText(), ErrorCode::Io};
            storedBytes = stored.data();
            storedSize = stored.size();
        }
    }
    // The filters, undone last to first; a filter HDF5 skipped for this chunk is marked in
    // `skipped`. Checksums at the end of the pipeline are verified and cut off where the bytes lie
    // (in the mapping, no copy).
    auto cutChecksum = [&]() -> Status {
        if (!fletcher32Matches(storedBytes, storedSize))
            return Error{m_where + ": a chunk does not match its fletcher32 checksum (corrupt data)",
                         ErrorCode::Format};
        storedSize -= 4;
        return Status::success();
    };
    size_t undone = m_filters.size();
    for (; undone > 0 && m_filters[undone - 1] == H5Z_FILTER_FLETCHER32; --undone)
        if (!(skipped & (1u << (undone - 1))))
            if (Status st = cutChecksum(); !st) return st;
    bool filtered = false;
    for (size_t i = 0; i < undone; ++i) filtered = filtered || !(skipped & (1u << i));
    if (!filtered && !m_swap && storedBytes != stored.data()) {  // the elements as they lie in the file
        if (storedSize != m_chunkBytes)
            return Error{m_where + ": a chunk holds " + std::to_string(storedSize) + " bytes, not " +
                             std::to_string(m_chunkBytes),
                         ErrorCode::Format};
        chunk.view = storedBytes;
        chunk.mapped = true;
        return Status::success();
    }
    Bytes next;
    for (size_t i = undone; i-- > 0;) {
        if (skipped & (1u << i)) continue;
        if (m_filters[i] == H5Z_FILTER_FLETCHER32) {
            if (Status st = cutChecksum(); !st) return st;
            continue;
        }
        if (m_filters[i] == H5Z_FILTER_DEFLATE) {
            // The elements, and the checksum of each fletcher32 applied before deflate.
            size_t inflated = m_chunkBytes;
            for (size_t j = 0; j < i; ++j)
                if (m_filters[j] == H5Z_FILTER_FLETCHER32 && !(skipped & (1u << j))) inflated += 4;
            next.resize(inflated);
            if (!inflateExactly(storedBytes, storedSize, next.data(), inflated))
                return Error{m_where + ": a chunk does not inflate to " + std::to_string(m_chunkBytes) +
                                 " bytes (corrupt deflate data)",
                             ErrorCode::Format};
        } else {
            next.resize(storedSize);
            unshuffle(storedBytes, next.data(), storedSize, m_elementSize);
        }
        stored.swap(next);
        storedBytes = stored.data();
        storedSize = stored.size();
    }
    if (storedBytes != stored.data())
        stored.assign(storedBytes, storedBytes + storedSize);
    else
        stored.resize(storedSize);                                        // without the checksums cut off
    if (mappedStored != nullptr) releasePages(mappedStored, mappedSize);  // decoded: done with them
    if (stored.size() != m_chunkBytes)
        return Error{m_where + ": a chunk holds " + std::to_string(stored.size()) + " bytes, not " +
                         std::to_string(m_chunkBytes),
                     ErrorCode::Format};
    if (m_swap) swapElements(stored.data(), stored.size(), m_elementSize);
    chunk.data = std::move(stored);
    chunk.view = chunk.data.data();
    return Status::success();
}

std::shared_ptr<ChunkedTensorReader::Chunk> ChunkedTensorReader::acquire(uint64_t index,
                                                                         const std::vector<uint64_t>& origin,
                                                                         bool* started)
{
    std::shared_ptr<Chunk> chunk;
    {
        std::lock_guard lock(m_mutex);
        auto it = m_cache.find(index);
        if (it != m_cache.end()) {
            ++it->second->users;
            it->second->lastUse = ++m_clock;
            *started = false;
            return it->second;
        }
        chunk = std::make_shared<Chunk>();
        chunk->users = 1;
        chunk->lastUse = ++m_clock;
        m_cache.emplace(index, chunk);
    }
    *started = true;
    Chunk fetched;
    Status st = fetch(origin, fetched);
    {
        std::lock_guard lock(m_mutex);
        chunk->ready = true;
        if (st.ok()) {
            chunk->data = std::move(fetched.data);
            chunk->view = fetched.mapped ? fetched.view : chunk->data.data();
            chunk->mapped = fetched.mapped;
            m_cachedBytes += m_chunkBytes;
        } else {
            chunk->failed = true;
            chunk->error = st.error();
            m_cache.erase(index);  // a later read tries again
        }
    }
    m_changed.notify_all();
    return chunk;
}

void ChunkedTensorReader::release(const std::shared_ptr<Chunk>& chunk)
{
    std::lock_guard lock(m_mutex);
    --chunk->users;
    // The least recently used chunks nobody is copying from leave while over the limit.
    while (m_cachedBytes > m_cacheLimit) {
        auto victim = m_cache.end();
        for (auto it = m_cache.begin(); it != m_cache.end(); ++it)
            if (it->second->ready && it->second->users == 0 &&
                (victim == m_cache.end() || it->second->lastUse < victim->second->lastUse))
                victim = it;
        if (victim == m_cache.end()) break;
        m_cachedBytes -= m_chunkBytes;
        if (victim->second->mapped) releasePages(victim->second->view, m_chunkBytes);
        m_cache.erase(victim);
    }
}

std::vector<uint64_t> ChunkedTensorReader::originOf(uint64_t linear) const
{
    const size_t rank = m_shape.size();
    std::vector<uint64_t> origin(rank);
    for (size_t d = rank; d-- > 0;) {
        origin[d] = (linear % m_grid[d]) * m_chunk[d];
        linear /= m_grid[d];
    }
    return origin;
}

Status ChunkedTensorReader::acquireRange(const std::vector<HyperslabBox>& boxes,
                                         std::vector<uint64_t>& needed,
                                         std::vector<std::shared_ptr<Chunk>>& chunks)
{
    const size_t rank = m_shape.size();
    // The chunks the range touches, by linear index in the chunk grid.
    for (const HyperslabBox& box : boxes) {
        std::vector<uint64_t> lo(rank), hi(rank), at(rank);
        for (size_t d = 0; d < rank; ++d) {
            lo[d] = box.start[d] / m_chunk[d];
            hi[d] = (box.start[d] + box.count[d] - 1) / m_chunk[d];
        }
        at = lo;
        for (;;) {
            uint64_t linear = 0;
            for (size_t d = 0; d < rank; ++d) linear = linear * m_grid[d] + at[d];
            needed.push_back(linear);
            size_t d = rank;
            while (d-- > 0 && at[d] == hi[d]) at[d] = lo[d];
            if (d == SIZE_MAX) break;
            ++at[d];
        }
    }
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());

    // Decode what nobody else is decoding, then wait for the rest: threads reading neighbouring
    // ranges share the work instead of repeating it.
    chunks.reserve(needed.size());
    for (uint64_t linear : needed) {
        bool started = false;
        chunks.push_back(acquire(linear, originOf(linear), &started));
    }
    Status status;
    std::unique_lock lock(m_mutex);
    for (const auto& chunk : chunks) {
        m_changed.wait(lock, [&chunk] { return chunk->ready; });
        if (chunk->failed && status.ok()) status = chunk->error;
    }
    return status;
}

template <class Run>
void ChunkedTensorReader::forEachRun(uint64_t first, const std::vector<HyperslabBox>& boxes,
                                     const std::vector<uint64_t>& needed,
                                     const std::vector<std::shared_ptr<Chunk>>& chunks, Run&& run) const
{
    const size_t rank = m_shape.size();
    std::vector<uint64_t> stride(rank, 1), chunkStride(rank, 1);
    for (size_t d = rank - 1; d-- > 0;) {
        stride[d] = stride[d + 1] * m_shape[d + 1];
        chunkStride[d] = chunkStride[d + 1] * m_chunk[d + 1];
    }
    for (size_t c = 0; c < needed.size(); ++c) {
        const std::vector<uint64_t> origin = originOf(needed[c]);
        const unsigned char* data = chunks[c]->view;
        for (const HyperslabBox& box : boxes) {
            std::vector<uint64_t> lo(rank), hi(rank);
            bool empty = false;
            for (size_t d = 0; d < rank; ++d) {
                lo[d] = std::max(box.start[d], origin[d]);
                hi[d] = std::min(box.start[d] + box.count[d], origin[d] + m_chunk[d]);
                empty = empty || lo[d] >= hi[d];
            }
            if (empty) continue;
            const uint64_t runElements = hi[rank - 1] - lo[rank - 1];
            std::vector<uint64_t> at = lo;
            for (;;) {
                uint64_t flat = 0, inChunk = 0;
                for (size_t d = 0; d < rank; ++d) {
                    flat += at[d] * stride[d];
                    inChunk += (at[d] - origin[d]) * chunkStride[d];
                }
                run(flat - first, data + inChunk * m_elementSize, runElements);
                size_t d = rank - 1;
                while (d-- > 0 && at[d] + 1 == hi[d]) at[d] = lo[d];
                if (d == SIZE_MAX) break;
                ++at[d];
            }
        }
    }
}

Status ChunkedTensorReader::read(uint64_t first, uint64_t count, void* dst)
{
    if (count == 0) return Status::success();
    const std::vector<HyperslabBox> boxes = flatRangeBoxes(m_shape, first, count);
    std::vector<uint64_t> needed;
    std::vector<std::shared_ptr<Chunk>> chunks;
    const Status status = acquireRange(boxes, needed, chunks);
    if (status.ok()) {
        auto* out = static_cast<unsigned char*>(dst);
        forEachRun(first, boxes, needed, chunks, [&](uint64_t offset, const unsigned char* from, uint64_t n) {
            std::memcpy(out + offset * m_elementSize, from, size_t(n) * m_elementSize);
        });
    }
    for (const auto& chunk : chunks) release(chunk);
    return status;
}

Result<TensorRuns> ChunkedTensorReader::runs(uint64_t first, uint64_t count)
{
    TensorRuns result;
    if (count == 0) return result;
    const std::vector<HyperslabBox> boxes = flatRangeBoxes(m_shape, first, count);
    std::vector<uint64_t> needed;
    auto chunks = std::make_shared<std::vector<std::shared_ptr<Chunk>>>();
    const Status status = acquireRange(boxes, needed, *chunks);
    // The chunks go back to the cache when the last holder of `keep` lets go.
    std::shared_ptr<ChunkedTensorReader> self = shared_from_this();
    result.keep = std::shared_ptr<const void>(chunks.get(), [self, chunks](const void*) {
        for (const auto& chunk : *chunks) self->release(chunk);
    });
    if (!status.ok()) return status.error();
    bool aligned = true;
    forEachRun(first, boxes, needed, *chunks, [&](uint64_t offset, const unsigned char* from, uint64_t n) {
        aligned = aligned && reinterpret_cast<uintptr_t>(from) % m_elementSize == 0;
        result.runs.push_back(ElementRun{offset, from, n});
    });
    if (!aligned) return TensorRuns{};  // the caller reads a copy instead
    // In element order: the chunks were visited by index, their rows interleave in the range.
    std::sort(result.runs.begin(), result.runs.end(),
              [](const ElementRun& a, const ElementRun& b) { return a.offset < b.offset; });
    return result;
}

}  // namespace faultline::hdf5
