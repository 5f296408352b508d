#include "Fletcher32.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace faultline::hdf5 {

namespace {

constexpr uint64_t kModulus = 65535;
constexpr size_t kLanes = 8;         // words summed side by side: word i goes to lane i % 8
constexpr size_t kBlockSteps = 256;  // steps of 8 words per block: lane sums stay below 2^32

// One block of `steps` * 8 big-endian words: per lane l, s1[l] = the sum of its words and
// s2[l] = the sum of its running sums (the scalar recurrence run on the lane alone).
void laneSums(const unsigned char* data, size_t steps, uint32_t s1[kLanes], uint32_t s2[kLanes])
{
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    __m128i a1 = zero, a2 = zero, b1 = zero, b2 = zero;
    for (size_t k = 0; k < steps; ++k, data += 2 * kLanes) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data));
        const __m128i words = _mm_or_si128(_mm_slli_epi16(raw, 8), _mm_srli_epi16(raw, 8));
        a1 = _mm_add_epi32(a1, _mm_unpacklo_epi16(words, zero));
        b1 = _mm_add_epi32(b1, _mm_unpackhi_epi16(words, zero));
        a2 = _mm_add_epi32(a2, a1);
        b2 = _mm_add_epi32(b2, b1);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(s1), a1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(s1 + 4), b1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(s2), a2);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(s2 + 4), b2);
#else
    for (size_t l = 0; l < kLanes; ++l) s1[l] = s2[l] = 0;
    for (size_t k = 0; k < steps; ++k, data += 2 * kLanes)
        for (size_t l = 0; l < kLanes; ++l) {
            s1[l] += (uint32_t(data[2 * l]) << 8) | uint32_t(data[2 * l + 1]);
            s2[l] += s1[l];
        }
#endif
}

}  // namespace

// HDF5 runs sum1 += word; sum2 += sum1 over the words, folding both (x & 0xffff) + (x >> 16)
// now and then. A fold keeps a value modulo 65535 and keeps it non-zero when it was, so each
// 16-bit result is 0 when the plain sum is 0 (every word 0), else the sum modulo 65535 written
// in [1, 65535]. Those plain sums are formed here blockwise in eight lanes: in a block of n = 8K
// words, word i = 8k + l weighs n - i = 8(K - k) - l in sum2, that is 8 * s2[l] - l * s1[l].
uint32_t fletcher32(const unsigned char* data, size_t bytes)
{
    uint64_t sum1 = 0, sum2 = 0;  // modulo 65535
    bool nonZero = false;
    size_t words = bytes / 2;
    while (words >= kLanes) {
        const size_t steps = words / kLanes < kBlockSteps ? words / kLanes : kBlockSteps;
        uint32_t s1[kLanes], s2[kLanes];
        laneSums(data, steps, s1, s2);
        uint64_t block1 = 0, block2 = 0;
        for (size_t l = 0; l < kLanes; ++l) {
            block1 += s1[l];
            block2 += kLanes * uint64_t(s2[l]) - l * uint64_t(s1[l]);
        }
        nonZero = nonZero || block1 != 0;
        const uint64_t n = steps * kLanes;
        sum2 = (sum2 + n % kModulus * sum1 + block2) % kModulus;
        sum1 = (sum1 + block1) % kModulus;
        data += 2 * n;
        words -= n;
    }
    for (; words > 0; --words, data += 2) {
        const uint32_t word = (uint32_t(data[0]) << 8) | uint32_t(data[1]);
        nonZero = nonZero || word != 0;
        sum1 = (sum1 + word) % kModulus;
        sum2 = (sum2 + sum1) % kModulus;
    }
    if (bytes % 2) {  // an odd last byte is the high byte of a word
        nonZero = nonZero || *data != 0;
        sum1 = (sum1 + (uint32_t(*data) << 8)) % kModulus;
        sum2 = (sum2 + sum1) % kModulus;
    }
    if (!nonZero) return 0;
    const uint32_t low = sum1 == 0 ? 0xffff : uint32_t(sum1);
    const uint32_t high = sum2 == 0 ? 0xffff : uint32_t(sum2);
    return (high << 16) | low;
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
