#pragma once
// Internal to the compare engine: per-bit-position counts of differing bits (ChunkScanner).
#include <array>
#include <bit>
#include <cstdint>

namespace faultline {

inline void addBits(uint64_t x, uint64_t s, uint64_t* flips, uint64_t* toOne)
{
    while (x != 0) {
        const unsigned b = unsigned(std::countr_zero(x));
        ++flips[b];
        toOne[b] += (s >> b) & 1u;
        x &= x - 1;
    }
}

// Per-bit counts of a stream of words without a branch per set bit: each byte of a word is
// spread into eight byte-wide counters by a table (bit q of the byte -> byte q of a uint64), and
// these byte counters are added to the output every 255 words, before any can overflow.
template <unsigned Bytes>
class BitCounter {
public:
    explicit BitCounter(uint64_t* out) : m_out(out) {}
    void add(uint64_t x)
    {
        for (unsigned p = 0; p < Bytes; ++p) m_bytes[p] += kSpread[(x >> (8 * p)) & 0xFF];
        if (++m_pending == 255) [[unlikely]]
            flush();
    }
    void flush()
    {
        for (unsigned p = 0; p < Bytes; ++p) {
            for (unsigned q = 0; q < 8; ++q) m_out[8 * p + q] += (m_bytes[p] >> (8 * q)) & 0xFF;
            m_bytes[p] = 0;
        }
        m_pending = 0;
    }

private:
    static constexpr std::array<uint64_t, 256> kSpread = [] {
        std::array<uint64_t, 256> t{};
        for (unsigned v = 0; v < 256; ++v)
            for (unsigned q = 0; q < 8; ++q) t[v] |= uint64_t((v >> q) & 1u) << (8 * q);
        return t;
    }();
    uint64_t* m_out;
    uint64_t m_bytes[Bytes] = {};
    unsigned m_pending = 0;
};

}  // namespace faultline
