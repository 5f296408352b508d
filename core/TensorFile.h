#pragma once
// An open tensor file (HDF5 snapshot, HDF5 trace or safetensors) whose tensors can be read in
// bounded chunks. The one interface the analysis, replay and views read data through.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "RecordInfo.h"
#include "Result.h"
#include "TensorInfo.h"

namespace faultline {

enum class FileFormat { Snapshot, Trace, Safetensors };
// "snapshot" | "trace" | "safetensors" (public: `inspect --json` "format").
const char* fileFormatName(FileFormat f);

struct OpenOptions {
    // Follow external links, external raw storage and virtual datasets that point outside the
    // file. Off by default: files come from broken machines and strangers.
    bool allowExternal = false;
};

// A run of consecutive elements in place: elements [offset, offset + count) of a range (offsets
// relative to the range's first element), at `data`, laid out as read() would hand them out.
struct ElementRun {
    uint64_t offset = 0;
    const void* data = nullptr;
    uint64_t count = 0;
};

// A range of a tensor as runs in place, in element order and covering it; the memory stays
// valid while `keep` (or a copy of it) lives.
struct TensorRuns {
    std::vector<ElementRun> runs;
    std::shared_ptr<const void> keep;
};

class TensorFile {
public:
    virtual ~TensorFile() = default;

    // The path the file was opened from, as given.
    virtual const std::string& path() const = 0;
    virtual FileFormat format() const = 0;
    // Every tensor in the file, in a stable order (HDF5: depth-first by name; safetensors: by
    // data offset).
    virtual const std::vector<TensorInfo>& tensors() const = 0;
    // File-level attributes as text (HDF5 root attributes such as device, role, step, rank;
    // safetensors __metadata__).
    virtual const std::map<std::string, std::string>& attributes() const = 0;
    // Problems that did not stop the file from opening (skipped datasets, unknown attributes),
    // each once, with a count where repeated.
    virtual const std::vector<std::string>& warnings() const = 0;

    // Copies elements [first, first + count) of tensor `index`, in row-major order, as
    // little-endian values of its logical dtype, into dst (count * dtypeSize bytes). Never reads
    // more than asked; safe to call from several threads. Errors name the file and the tensor.
    virtual Status read(size_t index, uint64_t first, uint64_t count, void* dst) const = 0;

    // The tensor's elements in place, when the file stores them exactly as read() would hand
    // them out (contiguous, uncompressed, little-endian) and they could be mapped read-only: the
    // compare engine scans them without copying. nullptr otherwise (then use read()). Valid while
    // the file object lives; the bytes are those on disk (a file truncated by another process
    // while mapped makes the access fault, so this is only used on files being analysed).
    virtual const void* mappedData(size_t index) const
    {
        (void)index;
        return nullptr;
    }
    // Elements [first, first + count) of tensor `index` in place, as runs (for chunked HDF5: the
    // rows of its decoded or mapped chunks), when the file can hand them out without copying them
    // and every run is aligned for its element type: the compare engine then scans them where
    // they are. An empty `runs` (and success) when it cannot; then use read(). Thread-safe.
    virtual Result<TensorRuns> runs(size_t index, uint64_t first, uint64_t count) const
    {
        (void)index;
        (void)first;
        (void)count;
        return TensorRuns{};
    }
    // Done with elements [first, first + count) of a mapped tensor: their pages leave this
    // process's resident set (they stay in the page cache), so scanning a file in place does not
    // grow the memory use. No effect when nothing is mapped.
    virtual void releaseMapped(size_t index, uint64_t first, uint64_t count) const
    {
        (void)index;
        (void)first;
        (void)count;
    }

    // Every dataset that is not a tensor (HDF5 tables, strings, enums, references, null
    // dataspaces, links that lead nowhere, ...), in the order tensors() uses; each either with
    // fields to compare or saying why it cannot be compared. Empty for formats that hold only
    // tensors.
    virtual const std::vector<RecordInfo>& records() const
    {
        static const std::vector<RecordInfo> none;
        return none;
    }
    // Elements [first, first + count) of record `index`, one column per field (RecordInfo.h).
    // Bounded by what is asked; safe to call from several threads. Errors name the file and the
    // dataset.
    virtual Status readRecords(size_t index, uint64_t first, uint64_t count, RecordBlock* out) const
    {
        (void)first;
        (void)count;
        (void)out;
        return fileError(path(), "no record dataset number " + std::to_string(index));
    }

    // Index of the tensor called `name` (leading '/' ignored).
    std::optional<size_t> find(const std::string& name) const;
};

// Whether `path` names a regular file to read; the error says why not (no such file, a
// directory, a FIFO or device, a symlink loop, no permission on the way), with code Io.
Status checkRegularFile(const std::string& path);

// Opens any supported file, choosing the reader by content (HDF5 signature, safetensors header),
// not by extension. Errors name the file and the problem.
Result<std::unique_ptr<TensorFile>> openTensorFile(const std::string& path, const OpenOptions& options = {});

}  // namespace faultline
