#include "TileSmMap.h"

#include <algorithm>
#include <limits>

#include "JsonFields.h"

namespace faultline {

int32_t TileSmMap::smOf(uint64_t row, uint64_t col) const
{
    if (!valid() || row >= rows || col >= cols) return -1;
    return sm[size_t((row / tile) * tilesAcross() + col / tile)];
}

uint32_t TileSmMap::smCount() const
{
    int32_t hi = -1;
    for (int32_t s : sm) hi = std::max(hi, s);
    return uint32_t(hi + 1);
}

nlohmann::json TileSmMap::toJson() const
{
    return {{"tile", tile}, {"rows", rows}, {"cols", cols}, {"sm", sm}};
}

Result<TileSmMap> TileSmMap::fromJson(const nlohmann::json& j)
{
    if (!j.is_object()) return Error{"tile->SM map: not an object", ErrorCode::Format};
    for (const char* key : {"tile", "rows", "cols"})
        if (j.contains(key) && !isJsonCount(j[key]))
            return Error{std::string("tile->SM map: ") + key + " is not a count", ErrorCode::Format};
    if (j.contains("tile") && j["tile"].get<uint64_t>() > std::numeric_limits<uint32_t>::max())
        return Error{"tile->SM map: tile is too large", ErrorCode::Format};
    if (j.contains("sm") && j["sm"].is_array())
        for (const nlohmann::json& id : j["sm"])
            if (!isJsonInt32(id)) return Error{"tile->SM map: an SM id is not an int32", ErrorCode::Format};
    try {
        TileSmMap m;
        m.tile = j.at("tile").get<uint32_t>();
        m.rows = j.at("rows").get<uint64_t>();
        m.cols = j.at("cols").get<uint64_t>();
        m.sm = j.at("sm").get<std::vector<int32_t>>();
        if (!m.valid()) return Error{"tile->SM map: tile count does not match its shape", ErrorCode::Format};
        return m;
    } catch (const nlohmann::json::exception& e) {
        return Error{std::string("tile->SM map: ") + e.what(), ErrorCode::Format};
    }
}

}  // namespace faultline
