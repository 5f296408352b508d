#include "SafetensorsWriter.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <system_error>

#include <nlohmann/json.hpp>

#include "SafetensorsFile.h"

namespace faultline {

namespace {

std::string errnoText(int e)
{
    return std::system_category().message(e);
}

// Byte count of one entry, or nullopt on a 64-bit overflow.
std::optional<uint64_t> entryBytes(const SafetensorsEntry& e)
{
    uint64_t n = dtypeSize(e.dtype);
    for (uint64_t d : e.shape) {
        if (d != 0 && n > std::numeric_limits<uint64_t>::max() / d) return std::nullopt;
        n *= d;
    }
    return n;
}

Status writeAll(int fd, const void* data, uint64_t size, const std::string& path)
{
    const auto* p = static_cast<const unsigned char*>(data);
    while (size > 0) {
        const size_t chunk = size_t(std::min<uint64_t>(size, uint64_t(1) << 30));
        const ssize_t w = ::write(fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            return fileError(path, "write failed: " + errnoText(errno), ErrorCode::Io);
        }
        p += w;
        size -= uint64_t(w);
    }
    return {};
}

}  // namespace

Result<std::string> encodeSafetensorsHeader(const std::vector<SafetensorsEntry>& entries,
                                            const std::map<std::string, std::string>& metadata,
                                            const std::string& label)
{
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::set<std::string> names;
    uint64_t offset = 0;
    for (const SafetensorsEntry& e : entries) {
        const std::string who = "tensor '" + e.name + "'";
        if (e.name == "__metadata__") return fileError(label, "the tensor name '__metadata__' is reserved");
        if (!names.insert(e.name).second) return fileError(label, "duplicate tensor name '" + e.name + "'");
        const auto bytes = entryBytes(e);
        if (!bytes)
            return fileError(label,
                             who + ": shape " + shapeToString(e.shape) + " overflows a 64-bit byte count");
        if (*bytes > 0 && !e.data) return fileError(label, who + ": no data");
        if (*bytes > std::numeric_limits<uint64_t>::max() - offset)
            return fileError(label, who + ": the data would end past 2^64 bytes");
        header[e.name] = {{"dtype", std::string(safetensorsDTypeName(e.dtype))},
                          {"shape", e.shape},
                          {"data_offsets", {offset, offset + *bytes}}};
        offset += *bytes;
    }
    std::string json;
    try {
        json = header.dump();
    } catch (const std::exception& ex) {
        return fileError(
            label, std::string("cannot encode the header (names and metadata must be UTF-8): ") + ex.what());
    }
    json.append((8 - json.size() % 8) % 8, ' ');
    std::string out(8, '\0');
    uint64_t n = json.size();
    for (int i = 0; i < 8; ++i, n >>= 8) out[size_t(i)] = char(n & 0xff);
    return out + json;
}

Result<std::string> encodeSafetensors(const std::vector<SafetensorsEntry>& entries,
                                      const std::map<std::string, std::string>& metadata,
                                      const std::string& label)
{
    auto header = encodeSafetensorsHeader(entries, metadata, label);
    if (!header) return header.error();
    std::string out = std::move(*header);
    for (const SafetensorsEntry& e : entries)
        if (const uint64_t bytes = *entryBytes(e); bytes > 0)  // checked by the header
            out.append(static_cast<const char*>(e.data), size_t(bytes));
    return out;
}

Status writeSafetensors(const std::string& path, const std::vector<SafetensorsEntry>& entries,
                        const std::map<std::string, std::string>& metadata)
{
    auto header = encodeSafetensorsHeader(entries, metadata, path);
    if (!header) return header.error();

    const std::string tmp = path + ".tmp";
    int fd;
    do {
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return fileError(path, "cannot create " + tmp + ": " + errnoText(errno), ErrorCode::Io);

    Status status = writeAll(fd, header->data(), header->size(), path);
    for (size_t i = 0; status.ok() && i < entries.size(); ++i)
        status = writeAll(fd, entries[i].data, *entryBytes(entries[i]), path);
    if (status.ok() && ::fsync(fd) != 0)
        status = fileError(path, "fsync failed: " + errnoText(errno), ErrorCode::Io);
    if (::close(fd) != 0 && status.ok())
        status = fileError(path, "close failed: " + errnoText(errno), ErrorCode::Io);
    if (status.ok() && std::rename(tmp.c_str(), path.c_str()) != 0)
        status = fileError(path, "cannot rename " + tmp + " to it: " + errnoText(errno), ErrorCode::Io);
    if (!status.ok()) ::unlink(tmp.c_str());
    return status;
}

}  // namespace faultline
