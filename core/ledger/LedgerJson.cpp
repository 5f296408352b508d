#include "LedgerJson.h"

namespace faultline {

const nlohmann::json& jsonField(const nlohmann::json& j, const char* key)
{
    static const nlohmann::json null;
    if (!j.is_object()) return null;
    auto it = j.find(key);
    return it == j.end() ? null : *it;
}

std::string jsonText(const nlohmann::json& j, const char* key)
{
    const nlohmann::json& v = jsonField(j, key);
    return v.is_string() ? v.get<std::string>() : std::string();
}

std::optional<double> jsonNumber(const nlohmann::json& j, const char* key)
{
    const nlohmann::json& v = jsonField(j, key);
    if (!v.is_number()) return std::nullopt;
    return v.get<double>();
}

std::optional<int64_t> jsonInteger(const nlohmann::json& j, const char* key)
{
    const nlohmann::json& v = jsonField(j, key);
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_unsigned()) {
        const auto u = v.get<uint64_t>();
        return u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (d >= -9.2e18 && d <= 9.2e18) return static_cast<int64_t>(d);
    }
    return std::nullopt;
}

bool jsonFlag(const nlohmann::json& j, const char* key)
{
    const nlohmann::json& v = jsonField(j, key);
    return v.is_boolean() && v.get<bool>();
}

}  // namespace faultline
