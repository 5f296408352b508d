#include "BusId.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace faultline {
namespace {

bool parseHex(std::string_view s, uint64_t& out, size_t maxDigits)
{
    if (s.empty() || s.size() > maxDigits) return false;
    uint64_t v = 0;
    for (char c : s) {
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return false;
        v = v * 16 + uint64_t(d);
    }
    out = v;
    return true;
}

}  // namespace

std::string normalizeBusId(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    if (text.substr(0, 4) == "PCI:" || text.substr(0, 4) == "pci:") text.remove_prefix(4);
    std::string_view function;
    if (const size_t dot = text.rfind('.'); dot != std::string_view::npos) {
        function = text.substr(dot + 1);
        text = text.substr(0, dot);
    }
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == ':') {
            parts.push_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    if (parts.size() == 2) parts.insert(parts.begin(), std::string_view("0"));
    if (parts.size() != 3) return {};
    uint64_t domain = 0, bus = 0, device = 0, fn = 0;
    if (!parseHex(parts[0], domain, 8) || !parseHex(parts[1], bus, 2) || !parseHex(parts[2], device, 2))
        return {};
    if (!function.empty() && !parseHex(function, fn, 1)) return {};
    if (device > 0x1f || fn > 7) return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04llx:%02llx:%02llx.%llx", static_cast<unsigned long long>(domain),
                  static_cast<unsigned long long>(bus), static_cast<unsigned long long>(device),
                  static_cast<unsigned long long>(fn));
    return buf;
}

}  // namespace faultline
