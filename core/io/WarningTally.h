#pragma once
// Collects repeated problems so each is reported once, with a count and its first example.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace faultline {

class WarningTally {
public:
    struct Entry {
        std::string key;
        size_t count = 0;
        std::string first;  // first example (a dataset, op or attribute name)
    };

    void add(const std::string& key, const std::string& example)
    {
        for (Entry& e : m_entries)
            if (e.key == key) {
                ++e.count;
                return;
            }
        m_entries.push_back(Entry{key, 1, example});
    }
    const std::vector<Entry>& entries() const { return m_entries; }
    bool empty() const { return m_entries.empty(); }

private:
    std::vector<Entry> m_entries;  // in order of first appearance
};

}  // namespace faultline
