#pragma once
// How report.md writes values of case.json: "—" for null or empty, yes/no for booleans, table
// cells without '|' or line breaks. Shared by the report's sections (EvidenceReport.cpp,
// DeviceHistorySection.cpp).
#include <nlohmann/json.hpp>
#include <string>

namespace faultline::report_text {

inline std::string text(const nlohmann::json& j)
{
    if (j.is_null()) return "—";
    if (j.is_string()) return j.get<std::string>().empty() ? "—" : j.get<std::string>();
    if (j.is_boolean()) return j.get<bool>() ? "yes" : "no";
    return j.dump();
}

inline std::string field(const nlohmann::json& j, const char* key)
{
    return j.is_object() && j.contains(key) ? text(j[key]) : "—";
}

// Table cells: no '|' or line breaks.
inline std::string cell(std::string s)
{
    for (char& c : s)
        if (c == '|' || c == '\n' || c == '\r') c = c == '|' ? '/' : ' ';
    return s;
}

}  // namespace faultline::report_text
