#pragma once
// Reading untrusted JSON documents field by field without exceptions: a missing field or one of
// another type reads as empty, so a hostile document can only be refused, never crash a reader.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace faultline {

// j[key] when j is an object holding it, else a null value.
const nlohmann::json& jsonField(const nlohmann::json& j, const char* key);
// The text of j[key] ("" when absent or not a string).
std::string jsonText(const nlohmann::json& j, const char* key);
// The number of j[key] (nullopt when absent or not a number).
std::optional<double> jsonNumber(const nlohmann::json& j, const char* key);
std::optional<int64_t> jsonInteger(const nlohmann::json& j, const char* key);
// j[key] as a flag (false when absent or not a boolean).
bool jsonFlag(const nlohmann::json& j, const char* key);

}  // namespace faultline
