#include "RunKeySet.h"

#include <iterator>

namespace faultline {

bool RunKeySet::contains(const std::string& target, size_t op, uint32_t rep) const
{
    const auto cell = m_ranges.find({target, op});
    if (cell == m_ranges.end()) return false;
    const auto& ranges = cell->second;
    auto after = ranges.upper_bound(rep);  // the first range starting beyond rep
    if (after == ranges.begin()) return false;
    return std::prev(after)->second > rep;
}

bool RunKeySet::insert(const std::string& target, size_t op, uint32_t rep)
{
    if (contains(target, op, rep)) return false;
    auto& ranges = m_ranges[{target, op}];
    const uint64_t r = rep;
    auto next = ranges.find(r + 1);  // a range that starts right after it
    auto after = ranges.upper_bound(r);
    const bool joinsPrevious = after != ranges.begin() && std::prev(after)->second == r;
    if (joinsPrevious) {
        auto previous = std::prev(after);
        previous->second = r + 1;
        if (next != ranges.end()) {
            previous->second = next->second;
            ranges.erase(next);
        }
    } else if (next != ranges.end()) {
        const uint64_t end = next->second;
        ranges.erase(next);
        ranges.emplace(r, end);
    } else {
        ranges.emplace(r, r + 1);
    }
    ++m_size;
    return true;
}

}  // namespace faultline
