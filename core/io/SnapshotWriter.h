#pragma once
// Writes HDF5 snapshots (and, through TraceWriter, traces) in the conventions of
// docs/formats.md: bf16 as the HDF5 custom float plus dtype="bfloat16", fp8 as uint8 plus a dtype
// attribute, bool as h5py's enum. Everything is written to a new temporary PATH.XXXXXX.tmp
// (created with O_EXCL: a link planted beside PATH is never written through) and renamed to
// PATH by close(), so a crash never leaves a half-written file under the real name.
//
// Data passed in is row-major, little-endian elements of the tensor's dtype (the layout
// TensorFile::read delivers). One writer is used from one thread at a time.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../AttrValue.h"
#include "../DType.h"
#include "../Result.h"

namespace faultline {

struct TensorWriteOptions {
    std::string kind;  // weight | grad | activation | optimizer | "" (no attribute)
    std::map<std::string, AttrValue> attributes;  // further dataset attributes
    std::vector<uint64_t> chunkShape;             // HDF5 chunk shape; empty: automatic (see gzipLevel)
    int gzipLevel = 0;  // 0: no compression; 1..9: gzip with the shuffle filter (implies chunking)
};

struct SnapshotWriterOptions {
    // Build the file in memory and write it in one checked write at close(): for small files
    // (a campaign's results) whose every write failure must be a plain error. A disk-backed
    // HDF5 file whose writes fail (a full disk) cannot be closed cleanly by libhdf5. Attributes
    // are limited to 64 KiB (the earliest file format: see create()).
    bool inMemory = false;
    // false: no free-space manager. HDF5's in-memory record of freed file space (object headers
    // that grow attribute by attribute leave some behind) grows with the number of objects
    // written; a file of tens of thousands of groups (a merged fleet campaign) turns it off and
    // leaves those small holes unused. Readable by HDF5 1.10 (the format's upper bound anyway).
    bool reuseFreedSpace = true;
};

class SnapshotWriter {
public:
    // Creates the temporary beside PATH. Errors name PATH; a directory or FIFO at PATH is refused.
    static Result<SnapshotWriter> create(const std::string& path, const SnapshotWriterOptions& options = {});

    SnapshotWriter(SnapshotWriter&&) noexcept;
    SnapshotWriter& operator=(SnapshotWriter&&) noexcept;
    SnapshotWriter(const SnapshotWriter&) = delete;
    SnapshotWriter& operator=(const SnapshotWriter&) = delete;
    // Without a successful close(): removes the temporary and leaves PATH as it was.
    ~SnapshotWriter();

    // The final path (not the .tmp).
    const std::string& path() const;

    // Root attribute, e.g. device, role, step, rank.
    Status setRootAttribute(const std::string& name, const AttrValue& value);
    // Attribute of group `group` ("a/b"), created with its parents when missing.
    Status setGroupAttribute(const std::string& group, const std::string& name, const AttrValue& value);
    Status createGroup(const std::string& group);

    // Writes a whole tensor. `name` may contain '/' (parent groups are created); `data` holds
    // product(shape) elements (may be null when that is 0).
    Status writeTensor(const std::string& name, DType dtype, const std::vector<uint64_t>& shape,
                       const void* data, const TensorWriteOptions& options = {});

    // Streaming, for tensors too big to hold at once: beginTensor creates the dataset (elements
    // not written read back as 0), writeElements / appendElements fill flat row-major ranges in
    // any order, endTensor finishes it. One tensor is open at a time.
    Status beginTensor(const std::string& name, DType dtype, const std::vector<uint64_t>& shape,
                       const TensorWriteOptions& options = {});
    Status writeElements(uint64_t first, uint64_t count, const void* data);
    Status appendElements(const void* data, uint64_t count);  // continues after the last append
    Status endTensor();

    // Flushes, closes and renames the temporary to PATH. After close() the writer accepts nothing more.
    Status close();

private:
    struct Impl;
    explicit SnapshotWriter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace faultline
