#pragma once
// Read buffers kept between the tensors of one comparison run, so that each tensor's workers do
// not allocate, zero and page-fault fresh chunk buffers (a measurable share of a compare of many
// large tensors). Thread-safe; buffers keep their size, and grow only when a chunk needs more.
#include <cstdint>
#include <mutex>
#include <vector>

namespace faultline {

class ChunkBufferPool {
public:
    std::vector<uint64_t> take()
    {
        std::lock_guard lock(m_mutex);
        if (m_free.empty()) return {};
        std::vector<uint64_t> b = std::move(m_free.back());
        m_free.pop_back();
        return b;
    }
    void give(std::vector<uint64_t>&& buffer)
    {
        if (buffer.empty()) return;
        std::lock_guard lock(m_mutex);
        m_free.push_back(std::move(buffer));
    }

private:
    std::mutex m_mutex;
    std::vector<std::vector<uint64_t>> m_free;
};

}  // namespace faultline
