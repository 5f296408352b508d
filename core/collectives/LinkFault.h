#pragma once
// A defective directed link between two ranks: what a faulty NVLink/PCIe/network path does to
// the bytes that cross it. It is a parameter of the SENDING rank's target, so a sweep over
// `sim:` targets can plant both a faulty GPU (the target's fault model) and a faulty link:
//   sim:healthy:link_to=3,link_rate=0.01     rank -> rank 3: bit flips in 1 % of 32-bit words
//   link_bit=B[,link_value=1]                a stuck bit in every word crossing the link
//   link_drop=P / link_repeat=P              a chunk (link_chunk bytes, default 4096) is lost
//                                            (arrives as zeros) / repeats the chunk before it
//   link_seed=N                              its own random stream
// Every value is range-checked; a link parameter without link_to is an error (it would never
// act). Seeded: the same transfer (source, destination, repetition) is corrupted the same way.
#include <cstdint>
#include <optional>
#include <string>

#include "../Result.h"
#include "../replay/TargetSpec.h"

namespace faultline {

struct LinkFault {
    int64_t to = -1;  // destination rank (index in the group); -1: the links are healthy
    double flipRate = 0;
    int stuckBit = -1;  // 0..31, -1: none
    bool stuckValue = true;
    double dropRate = 0, repeatRate = 0;
    uint64_t chunkBytes = 4096;
    uint64_t seed = 0;

    bool active() const { return to >= 0; }
    std::string describe() const;
    // Corrupts `bytes` (a transfer from rank `src` to rank `to`, repetition `rep`) in place;
    // returns how many bytes changed.
    uint64_t corrupt(unsigned char* bytes, size_t size, size_t src, uint32_t rep) const;
};

// Takes the link_* parameters out of `spec` (so the rest is the target's own) and checks them
// against a group of `groupSize` ranks, the target being rank `self`.
Result<LinkFault> takeLinkFault(TargetSpec& spec, size_t self, size_t groupSize);

}  // namespace faultline
