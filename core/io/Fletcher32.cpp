#include "Fletcher32.h"

namespace faultline::hdf5 {

uint32_t fletcher32(const unsigned char* data, size_t bytes)
{
    size_t words = bytes / 2;
    uint32_t sum1 = 0, sum2 = 0;
    while (words > 0) {
        // 360 words is the most that both sums take without overflowing 32 bits.
        const size_t block = words > 360 ? 360 : words;
        words -= block;
        for (size_t i = 0; i < block; ++i, data += 2) {
            sum1 += (uint32_t(data[0]) << 8) | uint32_t(data[1]);
            sum2 += sum1;
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if (bytes % 2) {
        sum1 += uint32_t(*data) << 8;
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    return (sum2 << 16) | sum1;
}

bool fletcher32Matches(const unsigned char* data, size_t bytes)
{
    if (bytes < 4) return false;
    const unsigned char* tail = data + bytes - 4;
    const uint32_t stored =
        uint32_t(tail[0]) | uint32_t(tail[1]) << 8 | uint32_t(tail[2]) << 16 | uint32_t(tail[3]) << 24;
    const uint32_t sum = fletcher32(data, bytes - 4);
    // Before 1.6.3 each 16-bit half was stored with its two bytes swapped (on little-endian hosts).
    const uint32_t reversed = ((sum & 0x00ff00ffu) << 8) | ((sum >> 8) & 0x00ff00ffu);
    return stored == sum || stored == reversed;
}

}  // namespace faultline::hdf5
