#pragma once
// Small text helpers shared across core.
#include <cctype>
#include <string>
#include <string_view>

namespace faultline {

// `s` without leading and trailing whitespace (spaces, tabs, newlines, ...).
inline std::string trimmed(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return std::string(s);
}

}  // namespace faultline
