#include "SafetensorsFile.h"
#include "SafeFiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <limits>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

// safetensors data is little-endian and read() hands it out as stored.
static_assert(std::endian::native == std::endian::little, "safetensors reading assumes a little-endian host");

namespace faultline {

namespace {

using Json = nlohmann::json;

constexpr int kMaxJsonDepth = 64;  // a valid header nests 3 deep (object, entry, shape)
constexpr size_t kMaxNameInMessage = 120;

struct DTypeName {
    const char* name;
    DType type;
};
constexpr DTypeName kDTypeNames[] = {
    {"BOOL", DType::Bool},
    {"U8", DType::UInt8},
    {"I8", DType::Int8},
    {"F8_E5M2", DType::Float8E5M2},
    {"F8_E4M3", DType::Float8E4M3FN},
    {"I16", DType::Int16},
    {"U16", DType::UInt16},
    {"F16", DType::Float16},
    {"BF16", DType::BFloat16},
    {"I32", DType::Int32},
    {"U32", DType::UInt32},
    {"F32", DType::Float32},
    {"F64", DType::Float64},
    {"I64", DType::Int64},
    {"U64", DType::UInt64},
};

// Text from the file, made safe for a one-line message: control and non-ASCII bytes become \xNN,
// long text is cut.
std::string printable(std::string_view s, size_t maxLength = kMaxNameInMessage)
{
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (out.size() >= maxLength) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += char(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string quoteName(std::string_view name)
{
    return "'" + printable(name) + "'";
}

std::string offsetsText(uint64_t begin, uint64_t end)
{
    return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

uint64_t readLittleEndian64(const unsigned char* p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// nlohmann's message without its "[json.exception.parse_error.101] " prefix, made printable.
std::string jsonProblem(const std::exception& e)
{
    std::string_view what = e.what();
    if (!what.empty() && what.front() == '[') {
        const size_t close = what.find("] ");
        if (close != std::string_view::npos) what.remove_prefix(close + 2);
    }
    return printable(what, 300);
}

// Nesting depth of a JSON text, counting brackets outside strings, so that a header of a
// hundred million '[' is refused before nlohmann builds anything for it. Returns false when the
// depth exceeds kMaxJsonDepth.
bool nestingWithinLimit(std::string_view json)
{
    int depth = 0;
    bool inString = false;
    bool escaped = false;
    for (const char c : json) {
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            if (++depth > kMaxJsonDepth) return false;
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    return true;
}

// Finds duplicate keys in the top-level object and in its entries, which nlohmann would resolve
// silently by keeping the last one.
class DuplicateKeyWatch {
public:
    bool onEvent(int depth, Json::parse_event_t event, const Json& parsed)
    {
        // An object opened at depth d holds keys of depth d + 1.
        if (event == Json::parse_event_t::object_start && depth <= 1) {
            if (depth == 0) m_rootIsObject = true;
            m_keys[size_t(depth)].clear();
        } else if (event == Json::parse_event_t::key && m_rootIsObject && (depth == 1 || depth == 2) &&
                   parsed.is_string()) {
            const std::string& key = parsed.get_ref<const std::string&>();
            if (depth == 1) m_entry = key;
            if (!m_keys[size_t(depth) - 1].insert(key).second && m_problem.empty()) {
                if (depth == 1)
                    m_problem = key == "__metadata__" ? "duplicate key '__metadata__'"
                                                      : "duplicate tensor name " + quoteName(key);
                else
                    m_problem = "entry " + quoteName(m_entry) + " has a duplicate key " + quoteName(key);
            }
        }
        return true;
    }
    const std::string& problem() const { return m_problem; }

private:
    std::set<std::string> m_keys[2];  // keys seen in the top-level object and the current entry
    std::string m_entry;              // the top-level key being parsed
    std::string m_problem;
    bool m_rootIsObject = false;  // otherwise the header is refused as not an object
};

struct ParsedEntry {
    TensorInfo info;
    uint64_t begin = 0;
    uint64_t end = 0;
};

// Checks one tensor entry. Returns the problem ("" when fine).
std::string parseEntry(const std::string& name, const Json& v, ParsedEntry& out, size_t& unknownKeys)
{
    const std::string who = "tensor " + quoteName(name);
    if (!v.is_object()) return who + ": entry is not a JSON object";
    const auto dtypeIt = v.find("dtype");
    const auto shapeIt = v.find("shape");
    const auto offsetsIt = v.find("data_offsets");
    if (dtypeIt == v.end()) return who + " has no \"dtype\"";
    if (shapeIt == v.end()) return who + " has no \"shape\"";
    if (offsetsIt == v.end()) return who + " has no \"data_offsets\"";
    for (auto it = v.begin(); it != v.end(); ++it)
        if (it.key() != "dtype" && it.key() != "shape" && it.key() != "data_offsets") ++unknownKeys;

    if (!dtypeIt->is_string()) return who + ": \"dtype\" is not a string";
    const std::string& dtypeText = dtypeIt->get_ref<const std::string&>();
    const auto dtype = dtypeFromSafetensorsName(dtypeText);
    if (!dtype) return "unsupported dtype " + quoteName(dtypeText) + " for tensor " + quoteName(name);

    if (!shapeIt->is_array()) return who + ": \"shape\" is not an array";
    std::vector<uint64_t> shape;
    shape.reserve(shapeIt->size());
    for (size_t i = 0; i < shapeIt->size(); ++i) {
        const Json& d = (*shapeIt)[i];
        if (!d.is_number_unsigned())
            return who + ": shape dimension " + std::to_string(i) + " (" + printable(d.dump(), 40) +
                   ") is not a non-negative integer";
        shape.push_back(d.get<uint64_t>());
    }

    const Json& offsets = *offsetsIt;
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
        return who + ": \"data_offsets\" is not [begin, end] with non-negative integers";
    const uint64_t begin = offsets[0].get<uint64_t>();
    const uint64_t end = offsets[1].get<uint64_t>();
    if (end < begin) return who + ": data_offsets " + offsetsText(begin, end) + " end before they begin";

    // Element count and byte count, refusing any 64-bit overflow (as the reference reader does,
    // in dimension order, even when a later dimension is 0).
    uint64_t bytes = 1;
    for (uint64_t d : shape) {
        if (d != 0 && bytes > std::numeric_limits<uint64_t>::max() / d)
            return who + ": shape " + printable(shapeToString(shape), 200) +
                   " overflows a 64-bit element count";
        bytes *= d;
    }
    const uint64_t elementSize = dtypeSize(*dtype);
    if (bytes > std::numeric_limits<uint64_t>::max() / elementSize)
        return who + ": shape " + printable(shapeToString(shape), 200) + " of " + dtypeText +
               " overflows a 64-bit byte count";
    bytes *= elementSize;
    if (bytes != end - begin)
        return who + ": shape " + printable(shapeToString(shape), 200) + " of " + dtypeText + " needs " +
               std::to_string(bytes) + " bytes but data_offsets " + offsetsText(begin, end) + " span " +
               std::to_string(end - begin);

    out.info.name = name;
    out.info.dtype = *dtype;
    out.info.shape = std::move(shape);
    out.info.storage = "safetensors";
    out.begin = begin;
    out.end = end;
    return {};
}

// __metadata__: string->string. Anything else is kept as JSON text with a warning.
void parseMetadata(const Json& v, SafetensorsLayout& layout)
{
    if (v.is_null()) return;  // as the reference reader: the same as no metadata
    if (!v.is_object()) {
        layout.warnings.push_back("__metadata__ is not a JSON object (" + std::string(v.type_name()) +
                                  "); ignored");
        return;
    }
    size_t nonString = 0;
    std::string example;
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (it->is_string()) {
            layout.metadata[it.key()] = it->get<std::string>();
        } else {
            layout.metadata[it.key()] = it->dump();
            if (nonString++ == 0) example = it.key();
        }
    }
    if (nonString)
        layout.warnings.push_back("__metadata__: " + std::to_string(nonString) +
                                  " non-string value(s) kept as JSON text (e.g. " + quoteName(example) + ")");
}

// RAII file descriptor.
class UniqueFd {
public:
    explicit UniqueFd(int fd = -1) : m_fd(fd) {}
    ~UniqueFd()
    {
        if (m_fd >= 0) ::close(m_fd);
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    UniqueFd(UniqueFd&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept
    {
        if (this != &o) {
            if (m_fd >= 0) ::close(m_fd);
            m_fd = std::exchange(o.m_fd, -1);
        }
        return *this;
    }
    int get() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }

private:
    int m_fd;
};

// Reads exactly `size` bytes at `offset`. Returns "" or the problem.
std::string preadFully(int fd, void* dst, uint64_t size, uint64_t offset)
{
    auto* p = static_cast<unsigned char*>(dst);
    while (size > 0) {
        const size_t chunk = size_t(std::min<uint64_t>(size, uint64_t(1) << 30));
        const ssize_t r = ::pread(fd, p, chunk, off_t(offset));
        if (r < 0) {
            if (errno == EINTR) continue;
            return "read failed at byte " + std::to_string(offset) + ": " + errnoText(errno);
        }
        if (r == 0) return "file ends at byte " + std::to_string(offset) + " (truncated?)";
        p += r;
        size -= uint64_t(r);
        offset += uint64_t(r);
    }
    return {};
}

struct OpenedFile {
    UniqueFd fd;
    uint64_t size = 0;
};

Result<OpenedFile> openForReading(const std::string& path)
{
    OpenedFile f;
    int fd;
    do {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return fileError(path, "cannot open: " + errnoText(errno), ErrorCode::Io);
    f.fd = UniqueFd(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fileError(path, "cannot stat: " + errnoText(errno));
    if (S_ISDIR(st.st_mode)) return fileError(path, "is a directory, not a tensor file");
    if (!S_ISREG(st.st_mode)) return fileError(path, "not a regular file");
    f.size = uint64_t(st.st_size);
    return f;
}

class SafetensorsFile final : public TensorFile {
public:
    SafetensorsFile(std::string path, UniqueFd fd, SafetensorsLayout layout)
        : m_path(std::move(path)), m_fd(std::move(fd)), m_layout(std::move(layout))
    {
    }

    const std::string& path() const override { return m_path; }
    FileFormat format() const override { return FileFormat::Safetensors; }
    const std::vector<TensorInfo>& tensors() const override { return m_layout.tensors; }
    const std::map<std::string, std::string>& attributes() const override { return m_layout.metadata; }
    const std::vector<std::string>& warnings() const override { return m_layout.warnings; }

    Status read(size_t index, uint64_t first, uint64_t count, void* dst) const override
    {
        if (index >= m_layout.tensors.size())
            return fileError(m_path, "no tensor with index " + std::to_string(index) + " (the file has " +
                                         std::to_string(m_layout.tensors.size()) + ")");
        const TensorInfo& t = m_layout.tensors[index];
        const uint64_t n = t.elementCount();  // checked against overflow when the header was parsed
        if (count > n || first > n - count)
            return fileError(m_path, "tensor " + quoteName(t.name) + ": elements [" + std::to_string(first) +
                                         ", +" + std::to_string(count) + ") are out of range (it has " +
                                         std::to_string(n) + ")");
        if (count == 0) return {};
        if (!dst) return fileError(m_path, "tensor " + quoteName(t.name) + ": no destination buffer");
        const uint64_t size = dtypeSize(t.dtype);
        const uint64_t offset = m_layout.dataStart() + m_layout.dataBegin[index] + first * size;
        const std::string problem = preadFully(m_fd.get(), dst, count * size, offset);
        if (!problem.empty()) return fileError(m_path, "tensor " + quoteName(t.name) + ": " + problem);
        return {};
    }

private:
    std::string m_path;
    UniqueFd m_fd;
    SafetensorsLayout m_layout;
};

}  // namespace

std::optional<DType> dtypeFromSafetensorsName(std::string_view name)
{
    for (const DTypeName& d : kDTypeNames)
        if (name == d.name) return d.type;
    return std::nullopt;
}

std::string_view safetensorsDTypeName(DType t)
{
    for (const DTypeName& d : kDTypeNames)
        if (d.type == t) return d.name;
    return "UNKNOWN";
}

Result<uint64_t> checkSafetensorsHeaderSize(const std::string& path, const unsigned char* prefix,
                                            uint64_t fileSize)
{
    if (fileSize == 0) return fileError(path, "empty file");
    if (fileSize < 8)
        return fileError(path, "file too small for a safetensors header (" + std::to_string(fileSize) +
                                   " bytes, the size field alone needs 8)");
    const uint64_t n = readLittleEndian64(prefix);
    if (n > kSafetensorsMaxHeaderSize)
        return fileError(path, "header size " + std::to_string(n) + " exceeds the limit of " +
                                   std::to_string(kSafetensorsMaxHeaderSize) + " bytes");
    if (n > fileSize - 8)
        return fileError(path, "header size " + std::to_string(n) + " is larger than the rest of the file (" +
                                   std::to_string(fileSize - 8) + " bytes; truncated?)");
    return n;
}

Result<SafetensorsLayout> parseSafetensorsHeader(const std::string& path, std::string_view json,
                                                 uint64_t bufferSize)
{
    // A raw NUL is never valid JSON, but nlohmann stops at one as if the input ended there.
    if (const size_t nul = json.find('\0'); nul != std::string_view::npos)
        return fileError(path, "header is not valid JSON: NUL byte at header offset " + std::to_string(nul));

    // nlohmann skips a leading byte-order mark; the reference reader (and looksLikeSafetensors)
    // do not.
    if (json.starts_with("\xEF\xBB\xBF"))
        return fileError(path, "header is not valid JSON: it starts with a UTF-8 byte-order mark");
    if (!nestingWithinLimit(json))
        return fileError(path, "header JSON nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");

    DuplicateKeyWatch watch;
    Json root;
    try {
        root = Json::parse(json.begin(), json.end(),
                           [&watch](int depth, Json::parse_event_t event, Json& parsed) {
                               return watch.onEvent(depth, event, parsed);
                           });
    } catch (const std::exception& e) {
        if (!watch.problem().empty()) return fileError(path, watch.problem());
        return fileError(path, "header is not valid JSON: " + jsonProblem(e));
    }
    if (!watch.problem().empty()) return fileError(path, watch.problem());
    if (!root.is_object())
        return fileError(path, std::string("header is not a JSON object (it is ") + root.type_name() + ")");

    SafetensorsLayout layout;
    layout.headerSize = json.size();
    layout.bufferSize = bufferSize;

    std::vector<ParsedEntry> entries;
    entries.reserve(root.size());
    size_t unknownKeys = 0;
    try {
        for (auto it = root.begin(); it != root.end(); ++it) {
            if (it.key() == "__metadata__") {
                parseMetadata(it.value(), layout);
                continue;
            }
            ParsedEntry e;
            const std::string problem = parseEntry(it.key(), it.value(), e, unknownKeys);
            if (!problem.empty()) return fileError(path, problem);
            entries.push_back(std::move(e));
        }
    } catch (const std::exception& e) {
        // Not expected (every access above is type-checked); never let one escape.
        return fileError(path, "malformed header: " + jsonProblem(e));
    }
    if (unknownKeys)
        layout.warnings.push_back(
            std::to_string(unknownKeys) +
            " unknown key(s) in tensor entries ignored (only dtype, shape, data_offsets are read)");

    std::sort(entries.begin(), entries.end(), [](const ParsedEntry& a, const ParsedEntry& b) {
        return std::tie(a.begin, a.end, a.info.name) < std::tie(b.begin, b.end, b.info.name);
    });

    // Contiguous from 0, no gaps, no overlaps, within the buffer, ending exactly at its end.
    uint64_t expected = 0;
    const ParsedEntry* previous = nullptr;
    for (const ParsedEntry& e : entries) {
        if (e.begin < expected)
            return fileError(path, "tensors " + quoteName(previous->info.name) + " " +
                                       offsetsText(previous->begin, previous->end) + " and " +
                                       quoteName(e.info.name) + " " + offsetsText(e.begin, e.end) +
                                       " overlap");
        if (e.begin > expected)
            return fileError(path, "gap of " + std::to_string(e.begin - expected) + " bytes before tensor " +
                                       quoteName(e.info.name) + " " + offsetsText(e.begin, e.end) +
                                       " (data must be contiguous from offset 0)");
        if (e.end > bufferSize)
            return fileError(path, "tensor " + quoteName(e.info.name) + " data_offsets " +
                                       offsetsText(e.begin, e.end) + " extend past the end of the " +
                                       std::to_string(bufferSize) + "-byte data buffer (truncated?)");
        expected = e.end;
        previous = &e;
    }
    if (expected != bufferSize)
        return fileError(path, std::to_string(bufferSize - expected) +
                                   " bytes of data after the last tensor (the " + std::to_string(bufferSize) +
                                   "-byte buffer should end at " + std::to_string(expected) + ")");

    layout.tensors.reserve(entries.size());
    layout.dataBegin.reserve(entries.size());
    for (ParsedEntry& e : entries) {
        layout.tensors.push_back(std::move(e.info));
        layout.dataBegin.push_back(e.begin);
    }
    return layout;
}

Result<SafetensorsLayout> parseSafetensorsBytes(const std::string& path, const void* data, size_t size)
{
    const auto* bytes = static_cast<const unsigned char*>(data);
    if (size > 0 && !bytes) return fileError(path, "no data");
    auto n = checkSafetensorsHeaderSize(path, bytes, size);
    if (!n) return n.error();
    const std::string_view json(reinterpret_cast<const char*>(bytes) + 8, size_t(*n));
    return parseSafetensorsHeader(path, json, uint64_t(size) - 8 - *n);
}

bool looksLikeSafetensors(const std::string& path)
{
    auto file = openForReading(path);
    if (!file || file->size < 10) return false;  // 8-byte size + at least "{}"
    unsigned char prefix[8];
    if (!preadFully(file->fd.get(), prefix, 8, 0).empty()) return false;
    const uint64_t n = readLittleEndian64(prefix);
    if (n < 2 || n > kSafetensorsMaxHeaderSize || n > file->size - 8) return false;
    // The first non-whitespace byte of the header must open an object.
    char chunk[4096];
    for (uint64_t pos = 0; pos < n; pos += sizeof chunk) {
        const uint64_t len = std::min<uint64_t>(sizeof chunk, n - pos);
        if (!preadFully(file->fd.get(), chunk, len, 8 + pos).empty()) return false;
        for (uint64_t i = 0; i < len; ++i) {
            const char c = chunk[i];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
            return c == '{';
        }
    }
    return false;
}

Result<std::unique_ptr<TensorFile>> openSafetensors(const std::string& path, const OpenOptions&)
{
    auto file = openForReading(path);
    if (!file) return file.error();
    unsigned char prefix[8] = {};
    const uint64_t prefixSize = std::min<uint64_t>(8, file->size);
    if (std::string problem = preadFully(file->fd.get(), prefix, prefixSize, 0); !problem.empty())
        return fileError(path, problem);
    auto n = checkSafetensorsHeaderSize(path, prefix, file->size);
    if (!n) return n.error();
    // Bounded by kSafetensorsMaxHeaderSize and by the file size.
    std::string json(size_t(*n), '\0');
    if (std::string problem = preadFully(file->fd.get(), json.data(), *n, 8); !problem.empty())
        return fileError(path, "reading the header: " + problem);
    auto layout = parseSafetensorsHeader(path, json, file->size - 8 - *n);
    if (!layout) return layout.error();
    return std::unique_ptr<TensorFile>(
        std::make_unique<SafetensorsFile>(path, std::move(file->fd), std::move(*layout)));
}

}  // namespace faultline
