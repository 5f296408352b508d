#include "SnapshotWriter.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "AtomicFile.h"
#include "FlatRange.h"
#include "Hdf5Attributes.h"
#include "Hdf5Handles.h"
#include "Hdf5TypeConventions.h"
#include "SafeFiles.h"

namespace faultline {

using namespace hdf5;

namespace {

constexpr uint64_t kAutoChunkBytes = uint64_t(1) << 20;           // target chunk size when we choose
constexpr uint64_t kChunkAboveBytes = uint64_t(64) << 20;         // bigger tensors are chunked anyway
constexpr uint64_t kMaxHdf5ChunkBytes = (uint64_t(1) << 32) - 1;  // HDF5's limit

// "a/b/c" with no empty, "." or ".." parts; a leading '/' is dropped.
Result<std::string> cleanName(const std::string& raw, const char* what)
{
    std::string name = (!raw.empty() && raw.front() == '/') ? raw.substr(1) : raw;
    if (name.empty()) return Error{std::string(what) + " name is empty", ErrorCode::Usage};
    if (name.find('\0') != std::string::npos)
        return Error{std::string(what) + " name contains a NUL byte", ErrorCode::Usage};
    size_t start = 0;
    while (start <= name.size()) {
        const size_t end = std::min(name.find('/', start), name.size());
        const std::string part = name.substr(start, end - start);
        if (part.empty() || part == "." || part == "..")
            return Error{std::string(what) + " name '" + raw + "' has an empty, '.' or '..' part",
                         ErrorCode::Usage};
        start = end + 1;
    }
    return name;
}

// Chunk shape of about kAutoChunkBytes: whole inner dimensions first.
std::vector<hsize_t> automaticChunks(const std::vector<uint64_t>& shape, unsigned elementSize)
{
    std::vector<hsize_t> chunk(shape.size(), 1);
    uint64_t budget = std::max<uint64_t>(1, kAutoChunkBytes / elementSize);
    for (size_t k = shape.size(); k-- > 0;) {
        chunk[k] = std::max<uint64_t>(1, std::min(shape[k], budget));
        budget = std::max<uint64_t>(1, budget / chunk[k]);
    }
    return chunk;
}

}  // namespace

// libhdf5 closes the files still open when the process exits. After a write to a file failed
// (a full disk) that clean-up crashes in libhdf5 1.10 (H5F__close_cb); every writer here closes
// its files itself and reports the failure, so the exit handler is switched off before the
// library is first used.
[[maybe_unused]] const bool kNoHdf5ExitHandler = [] { return H5dont_atexit() >= 0; }();

struct SnapshotWriter::Impl {
    std::string path;
    std::string tmpPath;
    FileHandle file;
    PlistHandle linkCreate;  // creates missing parent groups
    bool closed = false;
    bool inMemory = false;  // SnapshotWriterOptions::inMemory: nothing on disk until close()

    // The tensor being written.
    DatasetHandle dataset;
    TypeHandle type;
    std::string tensorName;
    std::vector<uint64_t> shape;
    uint64_t elements = 0;
    uint64_t appended = 0;

    ~Impl()
    {
        if (closed) return;
        dataset.reset();
        file.reset();
        std::error_code ec;
        if (!inMemory) std::filesystem::remove(tmpPath, ec);
    }

    Error error(const std::string& problem) const { return fileError(path, problem); }
    Status usable() const
    {
        if (closed || !file) return error("the writer is already closed");
        return Status::success();
    }

    Result<GroupHandle> group(const std::string& raw)
    {
        if (raw.empty() || raw == "/") {
            GroupHandle root(H5Gopen2(file.get(), "/", H5P_DEFAULT));
            if (!root) return hdf5Error(path, "cannot open the root group");
            return root;
        }
        Result<std::string> name = cleanName(raw, "group");
        if (!name) return error(name.message());
        size_t end = 0;
        while (end != std::string::npos) {
            end = name->find('/', end + 1);
            const std::string prefix = name->substr(0, end);
            const htri_t exists = H5Lexists(file.get(), prefix.c_str(), H5P_DEFAULT);
            if (exists > 0) continue;
            GroupHandle created(
                H5Gcreate2(file.get(), prefix.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
            if (!created) return hdf5Error(path, "cannot create group '" + prefix + "'");
        }
        GroupHandle g(H5Gopen2(file.get(), name->c_str(), H5P_DEFAULT));
        if (!g) return hdf5Error(path, "'" + *name + "' is not a group");
        return g;
    }
};

SnapshotWriter::SnapshotWriter(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
SnapshotWriter::SnapshotWriter(SnapshotWriter&&) noexcept = default;
SnapshotWriter& SnapshotWriter::operator=(SnapshotWriter&&) noexcept = default;
SnapshotWriter::~SnapshotWriter()
{
    if (m_impl) {
        Hdf5Lock lock;
        m_impl.reset();
    }
}

const std::string& SnapshotWriter::path() const
{
    return m_impl->path;
}

Result<SnapshotWriter> SnapshotWriter::create(const std::string& path, const SnapshotWriterOptions& options)
{
    Hdf5Lock lock;
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->closed = true;  // nothing to clean up until the file exists
    if (!options.inMemory) {
        if (Status st = checkReplaceableOutput(path, "the output"); !st) return st.error();
        // A new temporary beside PATH (O_EXCL: a link planted at a predictable PATH.tmp would
        // make H5Fcreate truncate whatever it points at, the trace being replayed say).
        auto tmp = createTempBeside(path);
        if (!tmp) return tmp.error();
        impl->tmpPath = *tmp;
        impl->closed = false;  // the temporary exists: remove it on failure
    }
    PlistHandle fapl(H5Pcreate(H5P_FILE_ACCESS));
    // v1.8 format or newer (large attributes), nothing newer than 1.10 can read. In memory the
    // earliest format: libhdf5 1.10's image of a file with a v2 superblock has a stale checksum
    // (the file cannot be opened), and the small files written this way need no large attributes.
    const H5F_libver_t low = options.inMemory ? H5F_LIBVER_EARLIEST : H5F_LIBVER_V18;
    if (!fapl || H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG) < 0 ||
        H5Pset_libver_bounds(fapl.get(), low, H5F_LIBVER_V110) < 0 ||
        (options.inMemory && H5Pset_fapl_core(fapl.get(), size_t(1) << 20, /*backing_store=*/0) < 0))
        return hdf5Error(path, "cannot set up HDF5 file access");
    impl->inMemory = options.inMemory;
    PlistHandle fcpl(H5Pcreate(H5P_FILE_CREATE));
    if (!fcpl || (!options.reuseFreedSpace &&
                  H5Pset_file_space_strategy(fcpl.get(), H5F_FSPACE_STRATEGY_NONE, 0, 1) < 0))
        return hdf5Error(path, "cannot set up HDF5 file creation");
    const std::string createPath = options.inMemory ? path + ".tmp" : impl->tmpPath;
    impl->file = FileHandle(H5Fcreate(createPath.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()));
    if (!impl->file) return hdf5Error(path, "cannot create '" + createPath + "'");
    impl->closed = false;
    impl->linkCreate = PlistHandle(H5Pcreate(H5P_LINK_CREATE));
    if (!impl->linkCreate || H5Pset_create_intermediate_group(impl->linkCreate.get(), 1) < 0)
        return hdf5Error(path, "cannot set up HDF5 link creation");
    return SnapshotWriter(std::move(impl));
}

Status SnapshotWriter::setRootAttribute(const std::string& name, const AttrValue& value)
{
    return setGroupAttribute("/", name, value);
}

Status SnapshotWriter::setGroupAttribute(const std::string& group, const std::string& name,
                                         const AttrValue& value)
{
    Hdf5Lock lock;
    if (Status s = m_impl->usable(); !s) return s;
    Result<GroupHandle> g = m_impl->group(group);
    if (!g) return g.error();
    if (Status s = writeAttribute(g->get(), name, value); !s)
        return m_impl->error("group '" + group + "': " + s.message());
    return Status::success();
}

Status SnapshotWriter::createGroup(const std::string& group)
{
    Hdf5Lock lock;
    if (Status s = m_impl->usable(); !s) return s;
    Result<GroupHandle> g = m_impl->group(group);
    return g ? Status::success() : Status(g.error());
}

Status SnapshotWriter::writeTensor(const std::string& name, DType dtype, const std::vector<uint64_t>& shape,
                                   const void* data, const TensorWriteOptions& options)
{
    if (Status s = beginTensor(name, dtype, shape, options); !s) return s;
    if (Status s = writeElements(0, m_impl->elements, data); !s) {
        endTensor();
        return s;
    }
    return endTensor();
}

Status SnapshotWriter::beginTensor(const std::string& rawName, DType dtype,
                                   const std::vector<uint64_t>& shape, const TensorWriteOptions& options)
{
    Hdf5Lock lock;
    Impl& d = *m_impl;
    if (Status s = d.usable(); !s) return s;
    if (d.dataset)
        return d.error("tensor '" + d.tensorName + "' is still being written (call endTensor first)");
    Result<std::string> name = cleanName(rawName, "tensor");
    if (!name) return d.error(name.message());
    const std::string where = "tensor '" + *name + "'";
    const std::optional<uint64_t> elements = checkedElementCount(shape);
    if (!elements || *elements > UINT64_MAX / dtypeSize(dtype))
        return d.error(where + ": shape " + shapeToString(shape) + " is too large");
    if (shape.size() > H5S_MAX_RANK) return d.error(where + ": more than 32 dimensions");
    if (options.gzipLevel < 0 || options.gzipLevel > 9) return d.error(where + ": gzip level must be 0..9");
    for (const auto& [key, value] : options.attributes)
        if (key == "dtype" || key == "kind")
            return d.error(where + ": attribute '" + key + "' is set by the writer");

    TypeHandle type = writtenType(dtype);
    if (!type) return hdf5Error(d.path, where + ": cannot make the HDF5 type");
    const std::vector<hsize_t> dims(shape.begin(), shape.end());
    SpaceHandle space(shape.empty() ? H5Screate(H5S_SCALAR)
                                    : H5Screate_simple(int(dims.size()), dims.data(), nullptr));
    PlistHandle dcpl(H5Pcreate(H5P_DATASET_CREATE));
    if (!space || !dcpl) return hdf5Error(d.path, where + ": cannot set up the dataset");

    // Chunk when asked, when compressing, or when the tensor is big (only written chunks take
    // space). Scalars and empty tensors cannot be chunked.
    const uint64_t bytes = *elements * dtypeSize(dtype);
    const bool chunkable = !shape.empty() && *elements > 0;
    if (chunkable && (!options.chunkShape.empty() || options.gzipLevel > 0 || bytes > kChunkAboveBytes)) {
        std::vector<hsize_t> chunk;
        if (!options.chunkShape.empty()) {
            if (options.chunkShape.size() != shape.size())
                return d.error(where + ": chunk shape " + shapeToString(options.chunkShape) +
                               " does not match shape " + shapeToString(shape));
            uint64_t chunkBytes = dtypeSize(dtype);
            for (size_t k = 0; k < shape.size(); ++k) {
                if (options.chunkShape[k] == 0 || options.chunkShape[k] > shape[k])
                    return d.error(where + ": chunk shape " + shapeToString(options.chunkShape) +
                                   " does not fit shape " + shapeToString(shape));
                chunkBytes *= options.chunkShape[k];  // cannot overflow: each factor <= shape[k]
            }
            if (chunkBytes > kMaxHdf5ChunkBytes)
                return d.error(where + ": chunks must be smaller than 4 GiB");
            chunk.assign(options.chunkShape.begin(), options.chunkShape.end());
        } else {
            chunk = automaticChunks(shape, dtypeSize(dtype));
        }
        if (H5Pset_chunk(dcpl.get(), int(chunk.size()), chunk.data()) < 0)
            return hdf5Error(d.path, where + ": cannot set the chunk shape");
        if (options.gzipLevel > 0 &&
            (H5Pset_shuffle(dcpl.get()) < 0 || H5Pset_deflate(dcpl.get(), unsigned(options.gzipLevel)) < 0))
            return hdf5Error(d.path, where + ": cannot set up compression");
    }

    DatasetHandle ds(H5Dcreate2(d.file.get(), name->c_str(), type.get(), space.get(), d.linkCreate.get(),
                                dcpl.get(), H5P_DEFAULT));
    if (!ds) return hdf5Error(d.path, where + ": cannot create");
    if (writesDtypeAttribute(dtype))
        if (Status s = writeAttribute(ds.get(), "dtype", std::string(dtypeName(dtype))); !s)
            return d.error(where + ": " + s.message());
    if (!options.kind.empty())
        if (Status s = writeAttribute(ds.get(), "kind", options.kind); !s)
            return d.error(where + ": " + s.message());
    for (const auto& [key, value] : options.attributes)
        if (Status s = writeAttribute(ds.get(), key, value); !s) return d.error(where + ": " + s.message());

    d.dataset = std::move(ds);
    d.type = std::move(type);
    d.tensorName = *name;
    d.shape = shape;
    d.elements = *elements;
    d.appended = 0;
    return Status::success();
}

Status SnapshotWriter::writeElements(uint64_t first, uint64_t count, const void* data)
{
    Hdf5Lock lock;
    Impl& d = *m_impl;
    if (Status s = d.usable(); !s) return s;
    if (!d.dataset) return d.error("no tensor is being written (call beginTensor first)");
    const std::string where = "tensor '" + d.tensorName + "'";
    if (first > d.elements || count > d.elements - first)
        return d.error(where + ": elements [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                       std::to_string(count) + ") are outside its " + std::to_string(d.elements) +
                       " elements");
    if (count == 0) return Status::success();
    if (!data) return d.error(where + ": no data");
    if (d.shape.empty()) {
        if (H5Dwrite(d.dataset.get(), d.type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
            return hdf5Error(d.path, where + ": cannot write");
        return Status::success();
    }
    SpaceHandle fileSpace(H5Dget_space(d.dataset.get()));
    const hsize_t memCount = count;
    SpaceHandle memSpace(H5Screate_simple(1, &memCount, nullptr));
    if (!fileSpace || !memSpace || !selectBoxes(fileSpace.get(), flatRangeBoxes(d.shape, first, count)))
        return hdf5Error(d.path, where + ": cannot select elements");
    if (H5Dwrite(d.dataset.get(), d.type.get(), memSpace.get(), fileSpace.get(), H5P_DEFAULT, data) < 0)
        return hdf5Error(d.path, where + ": cannot write");
    return Status::success();
}

Status SnapshotWriter::appendElements(const void* data, uint64_t count)
{
    if (Status s = writeElements(m_impl->appended, count, data); !s) return s;
    m_impl->appended += count;
    return Status::success();
}

Status SnapshotWriter::endTensor()
{
    Hdf5Lock lock;
    Impl& d = *m_impl;
    if (!d.dataset) return d.error("no tensor is being written");
    const hid_t id = d.dataset.release();
    d.type.reset();
    if (H5Dclose(id) < 0) return hdf5Error(d.path, "tensor '" + d.tensorName + "': cannot finish");
    return Status::success();
}

Status SnapshotWriter::close()
{
    Hdf5Lock lock;
    Impl& d = *m_impl;
    if (Status s = d.usable(); !s) return s;
    if (d.dataset)
        if (Status s = endTensor(); !s) return s;
    if (d.inMemory) {
        // The whole file as bytes, written (and every write checked) by replaceFileAtomically.
        if (H5Fflush(d.file.get(), H5F_SCOPE_GLOBAL) < 0) return hdf5Error(d.path, "cannot finish the file");
        const ssize_t size = H5Fget_file_image(d.file.get(), nullptr, 0);
        if (size < 0) return hdf5Error(d.path, "cannot finish the file");
        std::vector<char> image(static_cast<size_t>(size));
        if (H5Fget_file_image(d.file.get(), image.data(), image.size()) != size)
            return hdf5Error(d.path, "cannot finish the file");
        d.file.reset();
        d.closed = true;
        return replaceFileAtomically(d.path, {{image.data(), image.size()}});
    }
    const hid_t id = d.file.release();
    if (H5Fclose(id) < 0) return hdf5Error(d.path, "cannot finish writing '" + d.tmpPath + "'");
    std::error_code ec;
    std::filesystem::rename(d.tmpPath, d.path, ec);
    if (ec) return d.error("cannot rename '" + d.tmpPath + "' into place: " + ec.message());
    d.closed = true;
    return Status::success();
}

}  // namespace faultline
