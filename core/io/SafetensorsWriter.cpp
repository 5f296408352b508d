#include "SafetensorsWriter.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <system_error>

#include <nlohmann/json.hpp>

#include "AtomicFile.h"
#include "SafetensorsFile.h"

namespace faultline {

namespace {

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

    FileParts parts{{header->data(), header->size()}};
    for (const SafetensorsEntry& e : entries) parts.emplace_back(e.data, size_t(*entryBytes(e)));
    return replaceFileAtomically(path, parts);
}

}  // namespace faultline
