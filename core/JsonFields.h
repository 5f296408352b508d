#pragma once
// Reading optional fields of JSON documents that users and other tools write.
#include <nlohmann/json.hpp>
#include <string>

namespace faultline {

// The string at `key` of object `j`, or "" when `j` has no such key or it is not a string.
inline std::string jsonString(const nlohmann::json& j, const char* key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace faultline
