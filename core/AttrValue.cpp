#include "AttrValue.h"

#include <charconv>

namespace faultline {

namespace {

std::string numberToString(double v)
{
    char buffer[64];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);  // shortest round-trip form
    return std::string(buffer, r.ptr);
}

std::string quoted(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

template <class T, class F>
std::string listToString(const std::vector<T>& values, F format)
{
    std::string out = "[";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ", ";
        out += format(values[i]);
    }
    return out + "]";
}

}  // namespace

// Integers as decimal, floats in their shortest round-trip form, strings as they are; arrays as
// "[1, 2]" / "[0.5, 2]" / "[\"gpu0\", \"gpu1\"]".
std::string attrValueToString(const AttrValue& v)
{
    return std::visit(
        [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, int64_t>)
                return std::to_string(x);
            else if constexpr (std::is_same_v<T, double>)
                return numberToString(x);
            else if constexpr (std::is_same_v<T, std::string>)
                return x;
            else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
                return listToString(x, [](int64_t i) { return std::to_string(i); });
            else if constexpr (std::is_same_v<T, std::vector<double>>)
                return listToString(x, numberToString);
            else
                return listToString(x, quoted);
        },
        v);
}

}  // namespace faultline
