#pragma once
// Which (target, op, repetition) runs a campaign holds, as ranges of repetitions per target and
// op: a campaign's runs finish rep after rep, so this stays a handful of ranges however many
// repetitions there are (memory bounded by ops x targets, not by runs).
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace faultline {

class RunKeySet {
public:
    // False when it was already there.
    bool insert(const std::string& target, size_t op, uint32_t rep);
    bool contains(const std::string& target, size_t op, uint32_t rep) const;
    uint64_t size() const { return m_size; }

private:
    // Per (target, op): first rep of a range -> one past its last.
    std::map<std::pair<std::string, size_t>, std::map<uint64_t, uint64_t>> m_ranges;
    uint64_t m_size = 0;
};

}  // namespace faultline
