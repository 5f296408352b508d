#include "Hdf5File.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "../AttrValue.h"
#include "FlatRange.h"
#include "Hdf5Attributes.h"
#include "Hdf5ChunkReader.h"
#include "Hdf5Handles.h"
#include "Hdf5Records.h"
#include "Hdf5TypeConventions.h"
#include "WarningTally.h"

namespace faultline {

using namespace hdf5;

bool isHdf5File(const std::string& path)
{
    static constexpr std::array<char, 8> kSignature = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 8) return false;
    // The superblock sits at 0 or after a user block of 512, 1024, 2048, ... bytes.
    for (std::streamoff offset = 0; offset + 8 <= size; offset = offset == 0 ? 512 : offset * 2) {
        std::array<char, 8> bytes{};
        in.seekg(offset);
        if (!in.read(bytes.data(), bytes.size())) return false;
        if (bytes == kSignature) return true;
    }
    return false;
}

namespace {

constexpr int kMaxGroupDepth = 64;
constexpr size_t kMaxLinkValueBytes = size_t(1) << 20;

class Hdf5TensorFile final : public TensorFile {
public:
    const std::string& path() const override { return m_path; }
    FileFormat format() const override { return m_format; }
    const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
    const std::map<std::string, std::string>& attributes() const override { return m_attributes; }
    const std::vector<std::string>& warnings() const override { return m_warnings; }
    Status read(size_t index, uint64_t first, uint64_t count, void* dst) const override;
    const std::vector<RecordInfo>& records() const override { return m_records; }
    Status readRecords(size_t index, uint64_t first, uint64_t count, RecordBlock* out) const override;
    const void* mappedData(size_t index) const override;
    Result<TensorRuns> runs(size_t index, uint64_t first, uint64_t count) const override;
    void releaseMapped(size_t index, uint64_t first, uint64_t count) const override;
    ~Hdf5TensorFile() override;

    static constexpr uint64_t kNotRaw = UINT64_MAX;
    std::string m_path;
    std::vector<uint64_t> m_rawOffsets;  // per tensor: byte offset of elements stored as read() gives them
    std::vector<size_t> m_rawHolders;    // per tensor: the m_holders entry whose file holds them
    std::vector<bool>
        m_chunksMappable;  // per tensor: chunked, its chunks' addresses are offsets in that file
    FileFormat m_format = FileFormat::Snapshot;
    std::vector<TensorInfo> m_tensors;
    std::vector<TypeHandle> m_memoryTypes;  // per tensor
    std::vector<RecordInfo> m_records;
    std::vector<RecordLayout> m_recordLayouts;  // per record; no fields when it cannot be compared
    std::map<std::string, std::string> m_attributes;
    std::vector<std::string> m_warnings;
    FileHandle m_file;
    PlistHandle m_datasetAccess;

    // A file holding tensor data that is scanned in place: this file, or one an external link
    // leads into (a dataset's address is an offset in the file that holds it, not in this one).
    // Mapped read-only on the first mappedData() call for one of its tensors.
    struct Holder {
        int fd = -1;  // our own duplicate of HDF5's descriptor for the file
        dev_t device = 0;
        ino_t inode = 0;
        std::once_flag mapOnce;
        const unsigned char* map = nullptr;  // nullptr when mapping failed
        size_t mapSize = 0;
    };
    std::vector<std::unique_ptr<Holder>> m_holders;

    std::vector<bool> m_chunked;  // per tensor: chunked storage, read through a ChunkedTensorReader if it can

private:
    // The chunk reader of a chunked tensor (nullptr when its filters are not ones it undoes);
    // the most recent stays open, so that its decoded chunks serve the next reads (and memory
    // holds one tensor's cache per file).
    std::shared_ptr<ChunkedTensorReader> chunkReader(size_t index) const;
    // The file of holder `index` mapped read-only (once), nullptr when it cannot be.
    const unsigned char* mapHolder(size_t index, size_t* size) const;
    mutable std::mutex m_readersMutex;
    mutable std::vector<std::pair<size_t, std::shared_ptr<ChunkedTensorReader>>> m_readers;

    // The most recently read dataset stays open: sequential chunked reads of one tensor (the
    // common pattern) then skip re-opening it. Guarded by the HDF5 lock.
    mutable size_t m_openIndex = SIZE_MAX;
    mutable DatasetHandle m_openDataset;
    mutable SpaceHandle m_openSpace;
};

Hdf5TensorFile::~Hdf5TensorFile()
{
    for (const auto& holder : m_holders) {
        if (holder->map != nullptr) ::munmap(const_cast<unsigned char*>(holder->map), holder->mapSize);
        if (holder->fd >= 0) ::close(holder->fd);
    }
}

const unsigned char* Hdf5TensorFile::mapHolder(size_t index, size_t* size) const
{
    Holder& holder = *m_holders[index];
    std::call_once(holder.mapOnce, [&holder] {
        struct stat st {};
        if (::fstat(holder.fd, &st) != 0 || st.st_size <= 0) return;
        void* p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, holder.fd, 0);
        if (p == MAP_FAILED) return;
        ::madvise(p, size_t(st.st_size), MADV_SEQUENTIAL);
        holder.map = static_cast<const unsigned char*>(p);
        holder.mapSize = size_t(st.st_size);
    });
    *size = holder.mapSize;
    return holder.map;
}

const void* Hdf5TensorFile::mappedData(size_t index) const
{
    if (index >= m_tensors.size() || m_rawOffsets[index] == kNotRaw) return nullptr;
    size_t mapSize = 0;
    const unsigned char* map = mapHolder(m_rawHolders[index], &mapSize);
    const uint64_t bytes = m_tensors[index].elementCount() * dtypeSize(m_tensors[index].dtype);
    const uint64_t offset = m_rawOffsets[index];
    if (map == nullptr || offset > mapSize || bytes > mapSize - offset) return nullptr;
    return map + offset;
}

void Hdf5TensorFile::releaseMapped(size_t index, uint64_t first, uint64_t count) const
{
    if (index >= m_tensors.size() || m_rawOffsets[index] == kNotRaw) return;
    const Holder& holder = *m_holders[m_rawHolders[index]];
    if (holder.map == nullptr) return;
    const uint64_t size = dtypeSize(m_tensors[index].dtype);
    const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
    // Only the pages wholly inside the range: a neighbouring chunk may still be reading the rest.
    const uint64_t begin = (m_rawOffsets[index] + first * size + page - 1) / page * page;
    const uint64_t end = (m_rawOffsets[index] + (first + count) * size) / page * page;
    if (end > begin && end <= holder.mapSize)
        ::madvise(const_cast<unsigned char*>(holder.map) + begin, size_t(end - begin), MADV_DONTNEED);
}

Result<TensorRuns> Hdf5TensorFile::runs(size_t index, uint64_t first, uint64_t count) const
{
    if (index >= m_tensors.size() || !m_chunked[index] || m_tensors[index].shape.empty()) return TensorRuns{};
    const uint64_t total = m_tensors[index].elementCount();
    if (first > total || count > total - first) return TensorRuns{};  // read() names the problem
    if (std::shared_ptr<ChunkedTensorReader> reader = chunkReader(index)) return reader->runs(first, count);
    return TensorRuns{};
}

Status Hdf5TensorFile::read(size_t index, uint64_t first, uint64_t count, void* dst) const
{
    if (index >= m_tensors.size())
        return fileError(m_path, "no tensor number " + std::to_string(index) + " (the file has " +
                                     std::to_string(m_tensors.size()) + ")");
    const TensorInfo& info = m_tensors[index];
    const uint64_t total = info.elementCount();
    if (first > total || count > total - first)
        return fileError(m_path, "tensor '" + info.name + "': elements [" + std::to_string(first) + ", " +
                                     std::to_string(first) + " + " + std::to_string(count) +
                                     ") are outside its " + std::to_string(total) + " elements");
    if (count == 0) return Status::success();
    if (!dst) return fileError(m_path, "tensor '" + info.name + "': no destination buffer");

    if (m_chunked[index])
        if (std::shared_ptr<ChunkedTensorReader> reader = chunkReader(index)) {
            return reader->read(first, count, dst);
        }

    Hdf5Lock lock;
    const std::string where = "tensor '" + info.name + "'";
    if (m_openIndex != index) {
        m_openIndex = SIZE_MAX;
        m_openSpace.reset();
        m_openDataset =
            DatasetHandle(H5Dopen2(m_file.get(), ("/" + info.name).c_str(), m_datasetAccess.get()));
        if (!m_openDataset) return hdf5Error(m_path, where + ": cannot open");
        m_openSpace = SpaceHandle(H5Dget_space(m_openDataset.get()));
        if (!m_openSpace) return hdf5Error(m_path, where + ": cannot read its shape");
        m_openIndex = index;
    }
    const hid_t ds = m_openDataset.get();
    if (info.shape.empty()) {
        if (H5Dread(ds, m_memoryTypes[index].get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, dst) < 0)
            return hdf5Error(m_path, where + ": cannot read");
        return Status::success();
    }
    // One read per box of the range, into a memory space of the box's own shape: HDF5 then
    // copies whole runs (a 1-D memory space against an N-d selection takes its slow,
    // element-iterating path, 20 times slower on chunked storage).
    const hid_t fileSpace = m_openSpace.get();
    auto* out = static_cast<unsigned char*>(dst);
    const size_t elementSize = dtypeSize(info.dtype);
    for (const HyperslabBox& box : flatRangeBoxes(info.shape, first, count)) {
        const std::vector<hsize_t> extent(box.count.begin(), box.count.end());
        SpaceHandle memSpace(H5Screate_simple(int(extent.size()), extent.data(), nullptr));
        if (!memSpace || !selectBoxes(fileSpace, {box}))
            return hdf5Error(m_path, where + ": cannot select elements");
        if (H5Dread(ds, m_memoryTypes[index].get(), memSpace.get(), fileSpace, H5P_DEFAULT, out) < 0)
            return hdf5Error(m_path, where + ": cannot read elements " + std::to_string(first) + ".." +
                                         std::to_string(first + count - 1));
        uint64_t n = 1;
        for (uint64_t c : box.count) n *= c;
        out += n * elementSize;
    }
    return Status::success();
}

std::shared_ptr<ChunkedTensorReader> Hdf5TensorFile::chunkReader(size_t index) const
{
    std::lock_guard guard(m_readersMutex);
    for (auto& [i, reader] : m_readers)
        if (i == index) return reader;
    const TensorInfo& info = m_tensors[index];
    std::shared_ptr<ChunkedTensorReader> reader;
    {
        Hdf5Lock lock;
        DatasetHandle ds(H5Dopen2(m_file.get(), ("/" + info.name).c_str(), m_datasetAccess.get()));
        H5Eclear2(H5E_DEFAULT);
        if (ds)
            reader = ChunkedTensorReader::open(ds.get(), info.shape, dtypeSize(info.dtype),
                                               m_memoryTypes[index].get(),
                                               m_path + ": tensor '" + info.name + "'");
    }
    if (reader && m_chunksMappable[index]) {
        size_t mapSize = 0;
        if (const unsigned char* map = mapHolder(m_rawHolders[index], &mapSize))
            reader->setMapping(map, mapSize);
    }
    m_readers.clear();
    m_readers.emplace_back(index, reader);
    return reader;
}

Status Hdf5TensorFile::readRecords(size_t index, uint64_t first, uint64_t count, RecordBlock* out) const
{
    if (index >= m_records.size())
        return fileError(m_path, "no record dataset number " + std::to_string(index) + " (the file has " +
                                     std::to_string(m_records.size()) + ")");
    const RecordInfo& info = m_records[index];
    const std::string where = "dataset '" + info.name + "'";
    if (!info.notComparable.empty()) return fileError(m_path, where + ": " + info.notComparable);
    const uint64_t total = info.elementCount();
    if (first > total || count > total - first)
        return fileError(m_path, where + ": elements [" + std::to_string(first) + ", " +
                                     std::to_string(first) + " + " + std::to_string(count) +
                                     ") are outside its " + std::to_string(total) + " elements");
    if (!out) return fileError(m_path, where + ": no destination");
    Hdf5Lock lock;
    DatasetHandle ds(H5Dopen2(m_file.get(), ("/" + info.name).c_str(), m_datasetAccess.get()));
    if (!ds) return hdf5Error(m_path, where + ": cannot open");
    Status st = readRecordElements(ds.get(), m_recordLayouts[index], info.shape, first, count, out);
    if (!st) return fileError(m_path, where + ": " + st.message());
    return Status::success();
}

struct LinkEntry {
    std::string name;
    H5L_type_t type;
    size_t valueSize;
};

herr_t collectLink(hid_t, const char* name, const H5L_info_t* info, void* data)
{
    static_cast<std::vector<LinkEntry>*>(data)->push_back(
        LinkEntry{name, info->type, info->type == H5L_TYPE_HARD ? 0 : info->u.val_size});
    return 0;
}

// Walks the file depth-first by name and fills an Hdf5TensorFile.
class Scanner {
public:
    Scanner(Hdf5TensorFile& out, const OpenOptions& options, hid_t linkAccess)
        : m_out(out), m_options(options), m_linkAccess(linkAccess)
    {
    }

    Status scanGroup(hid_t group, const std::string& prefix, int depth);
    void markVisited(hid_t group)
    {
        ObjectInfo info;
        if (objectInfo(group, &info)) m_visitedGroups.insert(info.identity);
    }
    void readRootAttributes(hid_t root);
    void finish();

private:
    Status scanLink(hid_t group, const LinkEntry& link, const std::string& prefix, int depth);
    Status scanDataset(hid_t group, const std::string& linkName, const std::string& fullName);
    Result<std::string> linkValue(hid_t group, const LinkEntry& link, const std::string& fullName);
    std::optional<size_t> holderOf(hid_t dataset);
    void addRecord(const std::string& name, const std::vector<uint64_t>& shape, bool nullSpace,
                   hid_t fileType);
    void addUnreadable(const std::string& name, const std::string& type, const std::string& why);
    const std::string& path() const { return m_out.m_path; }

    Hdf5TensorFile& m_out;
    const OpenOptions& m_options;
    hid_t m_linkAccess;
    std::set<std::string> m_visitedGroups;  // ObjectInfo::identity
    WarningTally m_skipped;                 // datasets that are not tensors, by reason
    WarningTally m_attributes;              // attributes that could not be read, by reason
    WarningTally m_other;                   // other notes, by text
};

Result<std::string> Scanner::linkValue(hid_t group, const LinkEntry& link, const std::string& fullName)
{
    if (link.valueSize == 0 || link.valueSize > kMaxLinkValueBytes)
        return fileError(path(), "link '" + fullName + "' has an implausible value size");
    std::string value(link.valueSize, '\0');
    if (H5Lget_val(group, link.name.c_str(), value.data(), value.size(), H5P_DEFAULT) < 0)
        return hdf5Error(path(), "link '" + fullName + "': cannot read its target");
    return value;
}

// The m_holders entry of the file that holds `dataset`'s data, added on first sight; nullopt when
// its addresses are not offsets in a file we can map (a user block, a driver other than sec2).
std::optional<size_t> Scanner::holderOf(hid_t dataset)
{
    FileHandle file(H5Iget_file_id(dataset));
    if (!file) return std::nullopt;
    PlistHandle fcpl(H5Fget_create_plist(file.get()));
    hsize_t userBlock = 1;
    if (!fcpl || H5Pget_userblock(fcpl.get(), &userBlock) < 0 || userBlock != 0) return std::nullopt;
    PlistHandle fapl(H5Fget_access_plist(file.get()));
    void* handle = nullptr;
    if (!fapl || H5Pget_driver(fapl.get()) != H5FD_SEC2 ||
        H5Fget_vfd_handle(file.get(), fapl.get(), &handle) < 0 || handle == nullptr)
        return std::nullopt;
    const int fd = *static_cast<const int*>(handle);
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::nullopt;
    for (size_t i = 0; i < m_out.m_holders.size(); ++i)
        if (m_out.m_holders[i]->device == st.st_dev && m_out.m_holders[i]->inode == st.st_ino) return i;
    auto holder = std::make_unique<Hdf5TensorFile::Holder>();
    holder->fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (holder->fd < 0) return std::nullopt;
    holder->device = st.st_dev;
    holder->inode = st.st_ino;
    m_out.m_holders.push_back(std::move(holder));
    return m_out.m_holders.size() - 1;
}

// A dataset that is not a tensor: compared value by value when its type allows (Hdf5Records.h).
void Scanner::addRecord(const std::string& name, const std::vector<uint64_t>& shape, bool nullSpace,
                        hid_t fileType)
{
    RecordInfo info;
    info.name = name;
    info.shape = shape;
    info.nullSpace = nullSpace;
    Result<RecordLayout> layout = recordLayout(fileType);
    if (layout) {
        info.type = layout->type;
        info.fields = layout->fields;
    } else {
        info.type = layout.message();
        info.notComparable = layout.message();
    }
    m_out.m_records.push_back(std::move(info));
    m_out.m_recordLayouts.push_back(layout ? std::move(layout).value() : RecordLayout{});
}

// Something under a dataset's name that cannot be compared (a link that leads nowhere).
void Scanner::addUnreadable(const std::string& name, const std::string& type, const std::string& why)
{
    RecordInfo info;
    info.name = name;
    info.type = type;
    info.notComparable = why;
    m_out.m_records.push_back(std::move(info));
    m_out.m_recordLayouts.emplace_back();
}

Status Scanner::scanGroup(hid_t group, const std::string& prefix, int depth)
{
    if (depth > kMaxGroupDepth)
        return fileError(path(), "group '" + prefix + "' is nested deeper than " +
                                     std::to_string(kMaxGroupDepth) + " levels");
    std::vector<LinkEntry> links;
    hsize_t index = 0;
    if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &index, collectLink, &links) < 0)
        return hdf5Error(path(), "cannot list group '/" + prefix + "'");
    for (const LinkEntry& link : links)
        if (Status s = scanLink(group, link, prefix, depth); !s) return s;
    return Status::success();
}

Status Scanner::scanLink(hid_t group, const LinkEntry& link, const std::string& prefix, int depth)
{
    const std::string fullName = prefix + link.name;
    switch (link.type) {
        case H5L_TYPE_HARD:
            break;
        case H5L_TYPE_SOFT: {
            Result<std::string> target = linkValue(group, link, fullName);
            if (!target) return target.error();
            const std::string to(target->c_str());
            const htri_t exists = H5Oexists_by_name(group, link.name.c_str(), m_linkAccess);
            H5Eclear2(H5E_DEFAULT);
            if (exists <= 0) {
                // Listed, never read: compare reports it (h5diff --follow-symlinks: a link that
                // dangles in both files is no difference).
                m_other.add("soft links that lead nowhere are listed as datasets that cannot be read",
                            fullName);
                addUnreadable(fullName, "soft link to '" + to + "'",
                              "dangling soft link: '" + to + "' does not exist in the file");
                return Status::success();
            }
            m_other.add("soft links are not followed (their targets are listed under their own names)",
                        fullName);
            return Status::success();
        }
        case H5L_TYPE_EXTERNAL: {
            if (!m_options.allowExternal) {
                Result<std::string> value = linkValue(group, link, fullName);
                if (!value) return value.error();
                const char* file = nullptr;
                const char* object = nullptr;
                if (H5Lunpack_elink_val(value->data(), value->size(), nullptr, &file, &object) < 0)
                    return hdf5Error(path(), "external link '" + fullName + "' is malformed");
                return fileError(path(), "external link '" + fullName + "' points into another file ('" +
                                             std::string(file ? file : "?") + "', object '" +
                                             std::string(object ? object : "?") +
                                             "'); refusing it (allow external files to follow it)");
            }
            break;  // allowed: opened like a hard link, HDF5 follows it
        }
        default:
            return fileError(path(), "link '" + fullName + "' has a user-defined link type (" +
                                         std::to_string(int(link.type)) + ") this reader does not follow");
    }

    ObjectInfo info;
    if (!objectInfoByName(group, link.name.c_str(), m_linkAccess, &info)) {
        if (link.type != H5L_TYPE_EXTERNAL)
            return hdf5Error(path(), "object '" + fullName + "': cannot inspect");
        // An allowed external link whose file or object cannot be opened: listed, never read.
        const std::string why = hdf5ErrorText();
        std::string target = "?";
        if (Result<std::string> value = linkValue(group, link, fullName); value) {
            const char* file = nullptr;
            const char* object = nullptr;
            if (H5Lunpack_elink_val(value->data(), value->size(), nullptr, &file, &object) >= 0)
                target = std::string(file ? file : "?") + ":" + (object ? object : "?");
        }
        H5Eclear2(H5E_DEFAULT);
        m_other.add("external links that lead nowhere are listed as datasets that cannot be read", fullName);
        addUnreadable(fullName, "external link to '" + target + "'", "dangling external link: " + why);
        return Status::success();
    }
    switch (info.type) {
        case H5O_TYPE_GROUP: {
            if (!m_visitedGroups.insert(info.identity).second) {
                m_other.add("groups reachable under several names are listed once", fullName);
                return Status::success();
            }
            GroupHandle child(H5Gopen2(group, link.name.c_str(), H5P_DEFAULT));
            if (!child) return hdf5Error(path(), "group '" + fullName + "': cannot open");
            return scanGroup(child.get(), fullName + "/", depth + 1);
        }
        case H5O_TYPE_DATASET:
            return scanDataset(group, link.name, fullName);
        case H5O_TYPE_NAMED_DATATYPE:
            return Status::success();  // a stored type definition, not data
        default:
            m_skipped.add("objects of unknown kind", fullName);
            return Status::success();
    }
}

Status Scanner::scanDataset(hid_t group, const std::string& linkName, const std::string& fullName)
{
    const std::string where = "dataset '" + fullName + "'";
    DatasetHandle ds(H5Dopen2(group, linkName.c_str(), m_out.m_datasetAccess.get()));
    if (!ds) return hdf5Error(path(), where + ": cannot open");

    PlistHandle dcpl(H5Dget_create_plist(ds.get()));
    if (!dcpl) return hdf5Error(path(), where + ": cannot read its storage properties");
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if (layout == H5D_VIRTUAL && !m_options.allowExternal)
        return fileError(path(),
                         where +
                             " is a virtual dataset (its data may come from other files); refusing it "
                             "(allow external files to read it)");
    const int externalCount = H5Pget_external_count(dcpl.get());
    if (externalCount < 0) return hdf5Error(path(), where + ": cannot read its storage properties");
    if (externalCount > 0 && !m_options.allowExternal)
        return fileError(path(), where + " keeps its data in " + std::to_string(externalCount) +
                                     " external file(s); refusing it (allow external files to read it)");
    const int filters = H5Pget_nfilters(dcpl.get());
    for (int i = 0; i < filters; ++i) {
        unsigned flags = 0;
        size_t nelmts = 0;
        char name[64] = {0};
        unsigned config = 0;
        const H5Z_filter_t filter =
            H5Pget_filter2(dcpl.get(), unsigned(i), &flags, &nelmts, nullptr, sizeof name, name, &config);
        if (filter >= 0 && H5Zfilter_avail(filter) <= 0)
            m_other.add("uses HDF5 filter " + std::to_string(filter) +
                            (name[0] ? " (" + std::string(name) + ")" : "") +
                            " that this HDF5 build lacks; reading it will fail",
                        fullName);
    }
    H5Eclear2(H5E_DEFAULT);

    TensorInfo tensor;
    tensor.name = fullName;
    bool nullSpace = false;
    SpaceHandle space(H5Dget_space(ds.get()));
    if (!space) return hdf5Error(path(), where + ": cannot read its shape");
    switch (H5Sget_simple_extent_type(space.get())) {
        case H5S_SCALAR:
            break;
        case H5S_SIMPLE: {
            const int rank = H5Sget_simple_extent_ndims(space.get());
            if (rank < 0 || rank > H5S_MAX_RANK) return hdf5Error(path(), where + ": cannot read its rank");
            std::vector<hsize_t> dims(size_t(rank), 0);
            if (H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
                return hdf5Error(path(), where + ": cannot read its shape");
            tensor.shape.assign(dims.begin(), dims.end());
            break;
        }
        case H5S_NULL:
            nullSpace = true;
            break;
        default:
            return hdf5Error(path(), where + ": unreadable dataspace");
    }
    const std::optional<uint64_t> elements = checkedElementCount(tensor.shape);
    if (!elements)
        return fileError(path(), where + ": shape " + shapeToString(tensor.shape) +
                                     " has more elements than fit in 64 bits");

    TypeHandle fileType(H5Dget_type(ds.get()));
    if (!fileType) return hdf5Error(path(), where + ": cannot read its element type");
    const std::optional<std::string> dtypeAttribute = readStringAttribute(ds.get(), "dtype");
    std::string note;
    if (nullSpace) {
        m_skipped.add("empty (null) dataspace", fullName);
        addRecord(fullName, tensor.shape, true, fileType.get());
        return Status::success();
    }
    Result<TypeConvention> convention = classifyStoredType(fileType.get(), dtypeAttribute, &note);
    if (!convention) {
        m_skipped.add(convention.message(), fullName);
        addRecord(fullName, tensor.shape, false, fileType.get());
        return Status::success();
    }
    if (!note.empty()) m_other.add(note, fullName);
    tensor.dtype = convention->dtype;
    tensor.storage = convention->storage;
    if (*elements > UINT64_MAX / dtypeSize(tensor.dtype))
        return fileError(
            path(), where + ": shape " + shapeToString(tensor.shape) + " has more bytes than fit in 64 bits");

    Result<std::vector<std::string>> names = attributeNames(ds.get());
    if (!names) return fileError(path(), where + ": " + names.message());
    const bool dtypeConsumed = dtypeAttribute && note.empty();
    for (const std::string& name : *names) {
        if (name == "dtype" && dtypeConsumed) continue;
        Result<AttrValue> value = readAttribute(ds.get(), name);
        if (!value) {
            m_attributes.add("dataset attribute '" + name + "' skipped: " + value.message(), fullName);
            continue;
        }
        if (name == "kind") {
            if (const auto* s = std::get_if<std::string>(&*value)) {
                tensor.kind = *s;
                continue;
            }
        }
        tensor.attributes[name] = attrValueToString(*value);
    }

    // Elements stored exactly as read() hands them out can be scanned in place (mappedData), in
    // the file that holds them (an external link leads into another file).
    uint64_t raw = Hdf5TensorFile::kNotRaw;
    size_t holder = 0;
    bool chunksMappable = false;
    if (layout == H5D_CHUNKED && externalCount == 0) {
        const std::optional<size_t> in = holderOf(ds.get());
        chunksMappable = in.has_value();
        holder = in.value_or(0);
    }
    if (layout == H5D_CONTIGUOUS && filters == 0 && externalCount == 0 &&
        H5Tget_order(fileType.get()) != H5T_ORDER_BE &&
        H5Tget_size(fileType.get()) == dtypeSize(tensor.dtype) && !tensor.shape.empty()) {
        const haddr_t offset = H5Dget_offset(ds.get());  // HADDR_UNDEF: never written
        const std::optional<size_t> in = holderOf(ds.get());
        if (offset != HADDR_UNDEF && in &&
            H5Dget_storage_size(ds.get()) == *elements * dtypeSize(tensor.dtype)) {
            raw = uint64_t(offset);
            holder = *in;
        }
    }
    H5Eclear2(H5E_DEFAULT);

    m_out.m_tensors.push_back(std::move(tensor));
    m_out.m_memoryTypes.push_back(std::move(convention->memoryType));
    m_out.m_rawOffsets.push_back(raw);
    m_out.m_rawHolders.push_back(holder);
    m_out.m_chunksMappable.push_back(chunksMappable);
    m_out.m_chunked.push_back(layout == H5D_CHUNKED && externalCount == 0 &&
                              !m_out.m_tensors.back().shape.empty());
    return Status::success();
}

void Scanner::readRootAttributes(hid_t root)
{
    Result<std::vector<std::string>> names = attributeNames(root);
    if (!names) {
        m_other.add("root attributes unreadable: " + names.message(), "/");
        return;
    }
    for (const std::string& name : *names) {
        Result<AttrValue> value = readAttribute(root, name);
        if (!value) {
            m_attributes.add("root attribute '" + name + "' skipped: " + value.message(), "/");
            continue;
        }
        m_out.m_attributes[name] = attrValueToString(*value);
    }
    const auto format = m_out.m_attributes.find("faultline_format");
    if (format != m_out.m_attributes.end() && format->second == "trace") m_out.m_format = FileFormat::Trace;
}

void Scanner::finish()
{
    for (const auto& e : m_skipped.entries())
        m_out.m_warnings.push_back(fileError(path(), "skipped " + std::to_string(e.count) +
                                                         (e.count == 1 ? " dataset that is not a tensor: "
                                                                       : " datasets that are not tensors: ") +
                                                         e.key + " (first: '" + e.first + "')")
                                       .message);
    for (const WarningTally* tally : {&m_attributes, &m_other})
        for (const auto& e : tally->entries()) {
            std::string line = e.key + " ('" + e.first + "'";
            if (e.count > 1) line += " and " + std::to_string(e.count - 1) + " more";
            m_out.m_warnings.push_back(fileError(path(), line + ")").message);
        }
}

}  // namespace

Result<std::unique_ptr<TensorFile>> openHdf5TensorFile(const std::string& path, const OpenOptions& options)
{
    Result<FileHandle> file = openReadOnly(path);
    if (!file) return file.error();

    Hdf5Lock lock;
    auto out = std::make_unique<Hdf5TensorFile>();
    out->m_path = path;
    out->m_file = std::move(*file);

    PlistHandle linkAccess(H5Pcreate(H5P_LINK_ACCESS));
    out->m_datasetAccess = PlistHandle(H5Pcreate(H5P_DATASET_ACCESS));
    if (!linkAccess || !out->m_datasetAccess) return hdf5Error(path, "cannot set up HDF5 access");
    // Chunks read through H5Dread (filters the chunk reader does not undo) stay cached while the
    // next pieces of the tensor need them: 16 MiB instead of HDF5's 1 MiB, which holds no chunk of
    // 1 MiB or more at all.
    if (H5Pset_chunk_cache(out->m_datasetAccess.get(), 12421, size_t(16) << 20, 0.75) < 0)
        return hdf5Error(path, "cannot set up HDF5 access");
    if (!options.allowExternal) {
        if (H5Pset_elink_cb(linkAccess.get(), refuseExternalLink, nullptr) < 0 ||
            H5Pset_elink_cb(out->m_datasetAccess.get(), refuseExternalLink, nullptr) < 0)
            return hdf5Error(path, "cannot set up HDF5 access");
    } else {
        // External raw files and virtual dataset sources resolve next to this file, not the
        // current directory.
        if (H5Pset_efile_prefix(out->m_datasetAccess.get(), "${ORIGIN}") < 0 ||
            H5Pset_virtual_prefix(out->m_datasetAccess.get(), "${ORIGIN}") < 0)
            return hdf5Error(path, "cannot set up HDF5 access");
    }

    GroupHandle root(H5Gopen2(out->m_file.get(), "/", H5P_DEFAULT));
    if (!root) return hdf5Error(path, "cannot open the root group");
    Scanner scanner(*out, options, linkAccess.get());
    H5Eclear2(H5E_DEFAULT);
    scanner.markVisited(root.get());
    scanner.readRootAttributes(root.get());
    if (Status s = scanner.scanGroup(root.get(), "", 0); !s) return s.error();
    scanner.finish();
    return std::unique_ptr<TensorFile>(std::move(out));
}

Result<std::vector<std::optional<std::string>>> readHdf5GroupStringAttributes(
    const std::string& path, const std::vector<std::string>& groups, const std::string& attribute)
{
    auto file = hdf5::openReadOnly(path);
    if (!file) return file.error();
    hdf5::Hdf5Lock lock;
    std::vector<std::optional<std::string>> out;
    for (const std::string& group : groups) {
        const htri_t exists = H5Lexists(file->get(), group.c_str(), H5P_DEFAULT);
        hdf5::GroupHandle g(exists > 0 ? H5Gopen2(file->get(), group.c_str(), H5P_DEFAULT) : H5I_INVALID_HID);
        out.push_back(g ? hdf5::readStringAttribute(g.get(), attribute) : std::nullopt);
    }
    return out;
}

}  // namespace faultline
