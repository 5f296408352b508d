#include "Manifest.h"

#include <algorithm>
#include <set>

namespace faultline {
namespace {

bool isSafeChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '+';
}

bool isLowerHex(const std::string& s)
{
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

}  // namespace

bool isBundlePath(const std::string& path)
{
    if (path.empty() || path.size() > 250) return false;
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        const std::string part = path.substr(start, end - start);
        if (part.empty() || part == "." || part == "..") return false;
        if (!std::all_of(part.begin(), part.end(), isSafeChar)) return false;
        start = end + 1;
    }
    return true;
}

std::string bundleSafeName(const std::string& name)
{
    std::string s;
    for (char c : name) s += isSafeChar(c) ? c : '_';
    if (s.empty() || s == "." || s == "..") s = "_" + s;
    if (s.size() > 120) s = s.substr(s.size() - 120);
    return s;
}

std::string formatManifest(std::vector<ManifestEntry> entries)
{
    std::sort(entries.begin(), entries.end(),
              [](const ManifestEntry& a, const ManifestEntry& b) { return a.path < b.path; });
    std::string text;
    for (const ManifestEntry& e : entries) text += "SHA256 (" + e.path + ") = " + e.sha256 + "\n";
    return text;
}

Result<std::vector<ManifestEntry>> parseManifest(const std::string& text, const std::string& source)
{
    std::vector<ManifestEntry> entries;
    std::set<std::string> seen;
    size_t pos = 0, lineNo = 0;
    while (pos < text.size()) {
        ++lineNo;
        const std::string where = source + ":" + std::to_string(lineNo);
        const size_t nl = text.find('\n', pos);
        if (nl == std::string::npos)
            return Error{where + ": the last line has no line break", ErrorCode::Format};
        const std::string line = text.substr(pos, nl - pos);
        pos = nl + 1;
        const std::string head = "SHA256 (";
        const size_t close = line.rfind(") = ");
        if (line.rfind(head, 0) != 0 || close == std::string::npos || close < head.size())
            return Error{where + ": not a \"SHA256 (path) = hex\" line", ErrorCode::Format};
        ManifestEntry e{line.substr(head.size(), close - head.size()), line.substr(close + 4)};
        if (!isBundlePath(e.path))
            return Error{where + ": '" + e.path + "' is not a bundle path", ErrorCode::Format};
        if (!isLowerHex(e.sha256))
            return Error{where + ": the digest is not 64 lower-case hex digits", ErrorCode::Format};
        if (!seen.insert(e.path).second)
            return Error{where + ": '" + e.path + "' is listed twice", ErrorCode::Format};
        if (!entries.empty() && !(entries.back().path < e.path))
            return Error{where + ": '" + e.path + "' is out of order (lines are sorted by path)",
                         ErrorCode::Format};
        entries.push_back(std::move(e));
    }
    if (entries.empty()) return Error{source + ": lists no file", ErrorCode::Format};
    return entries;
}

}  // namespace faultline
