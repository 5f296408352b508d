#pragma once
// Internal to the compare engine: the error arithmetic of 64-element blocks of float32,
// bfloat16 or float16 pairs, vectorised with Highway and dispatched at run time to the best
// instruction set of the CPU (SSE4, AVX2, AVX-512; the portable scalar target is compiled in
// as well). Every figure is the IEEE result of the same operations as the scalar path
// (ChunkScanner's per-element code), lane by lane, so the comparison results do not depend on
// the instruction set; tests/core/test_compare_dispatch.cpp checks it on every target.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "Divergence.h"

namespace faultline {

enum class MismatchFloat { Float32, BFloat16, Float16 };

// Decade histogram bins as one index: 0 zero, 1 + decade, kDecadeSlots - 1 infinite.
inline constexpr size_t kDecadeSlots = DecadeHistogram::kDecades + 2;

// The slot of any x >= 0 (not NaN) from its biased exponent alone, without branches: the
// binade's slot, plus one from the value where the next decade starts inside the binade.
// Exponent 0 holds zero (slot 0) and subnormals (the lowest decade); 2047 holds +inf.
struct DecadeSlots {
    std::array<uint8_t, 2048> slot{};
    std::array<double, 2048> nextFrom{};
    // Where each slot starts: a finite x is in slot s for start[s] <= x < start[s + 1].
    std::array<double, kDecadeSlots> start{};

    unsigned of(double x) const
    {
        uint64_t u;
        std::memcpy(&u, &x, sizeof u);
        const size_t e = size_t(u >> 52 & 0x7FF);
        return unsigned(slot[e]) + (x >= nextFrom[e] ? 1u : 0u);
    }
    static const DecadeSlots& table();
};

// The figures of the mismatching pairs of 1 to 4 consecutive 64-element blocks (the pairs whose
// bits differ), packed in position order: entry i is the pair at position k[i]; count entries
// are set. Equal pairs are left out, so the arithmetic costs in proportion to the mismatches,
// and the figures of up to 256 pairs are gathered at once, so what is paid per call (the
// reductions, the decade lookups) is paid once for them all.
struct BlockErrors {
    static constexpr unsigned kBlock = 64;
    static constexpr unsigned kMaxBlocks = 4;
    static constexpr unsigned kMaxElements = kBlock * kMaxBlocks;
    static constexpr unsigned kPad = 16;  // room for a full vector past the last entry
    static constexpr unsigned kRoom = kMaxElements + kPad;
    unsigned count = 0;
    alignas(64) uint32_t k[kRoom];     // position among the blocks' elements
    alignas(64) double absErr[kRoom];  // |double(s) - double(r)|
    alignas(64) double absSq[kRoom];   // absErr * absErr
    alignas(64) double relErr[kRoom];  // absErr / |r|; 0 when both are 0, +inf when only r is
    // relErr where finite, else +0 (adding it leaves a sum >= 0 as is)
    alignas(64) double relAdd[kRoom];
    alignas(64) double relSq[kRoom];     // relAdd * relAdd
    alignas(64) uint64_t ulp[kRoom];     // distance on the sign-magnitude integer line
    alignas(64) uint64_t ulpBin[kRoom];  // std::bit_width(ulp)
    // Over the entries (0 when there are none). maxRel over finite relative errors; minRel is
    // +inf when every relative error is. With the maxima, the minima tell when every mismatch
    // falls in one histogram bin, so the bin is counted once for them all.
    double maxAbs = 0.0, maxRel = 0.0, minAbs = 0.0, minRel = 0.0;
    uint64_t maxUlp = 0, minUlp = 0;
    uint64_t relInfinite = 0;
    // The entries at positions [16 g, 16 g + 16) are [groupStart[g], groupStart[g + 1]), for
    // g up to the number of elements / 16 (the last is count): a tile part that is a union of
    // these groups (tiles are multiples of 16 columns) finds its mismatches here.
    static constexpr unsigned kGroup = 16;
    uint32_t groupStart[kMaxElements / kGroup + 1] = {};
    // The decade histograms of absErr and relErr over the entries, when they span at most
    // kMaxSpan slots (and, for relErr, none is infinite): slots [lo, lo + span) with their
    // counts. A span of 0: not binned here, each entry is binned by its caller.
    static constexpr unsigned kMaxSpan = 8;
    unsigned absSlotLo = 0, absSlotSpan = 0, relSlotLo = 0, relSlotSpan = 0;
    uint32_t absSlotCount[kMaxSpan] = {}, relSlotCount[kMaxSpan] = {};
};

// The bit-position counts of segments not yet added to the output (bit-sliced carry-save
// counters, as many 32-bit lanes as the widest vector): carried from one countSegmentBits call
// to the next, so short segments (the rows of a chunked tensor's chunks) do not each pay for
// turning them into positional counts. flushSegmentBits adds them and empties it.
struct SegmentBitState {
    static constexpr unsigned kLanes = 16, kCounters = 8;
    alignas(64) uint32_t counters[kCounters][kLanes] = {};
    bool pending = false;
    unsigned width = 32;  // bits per element: 16 when each 32-bit lane holds two elements
};

// Adds the bit-position counts of the differing bits of `blocks` x 64 pairs (flips: s ^ r) and
// of those that are 1 in the suspect (toOne: (s ^ r) & s) to flips[0, 32) and toOne[0, 32),
// some of them only when `state` is flushed: carry-save adders over the vectors (Harley-Seal),
// so a mismatch costs a few vector operations instead of table adds. Equal pairs add nothing;
// NaN/Inf pairs count like any other bits.
void countSegmentBits(MismatchFloat kind, const void* suspect, const void* reference, size_t blocks,
                      uint64_t* flips, uint64_t* toOne, SegmentBitState& state);
void flushSegmentBits(SegmentBitState& state, uint64_t* flips, uint64_t* toOne);

// Fills `out` for the mismatching pairs among the n = 64 * blocks (1 to 4) at suspect[0, n) and
// reference[0, n) (packed little-endian elements of `kind`, any alignment). Returns false, with
// `out` unspecified, when any of the 2n elements is NaN or infinite: such blocks take the
// per-element path.
bool computeBlockErrors(MismatchFloat kind, const void* suspect, const void* reference, unsigned blocks,
                        const DecadeSlots& decades, BlockErrors& out);

// For tests and benchmarks: the Highway targets compiled in that this CPU supports (best first is
// not guaranteed), their names, the one computeBlockErrors uses now, and a restriction to one of
// them (0 lifts it). The restriction is process-wide: not while a comparison runs.
std::vector<int64_t> mismatchMathTargets();
std::string mismatchMathTargetName(int64_t target);
int64_t mismatchMathActiveTarget();
void restrictMismatchMathTargets(int64_t target);

}  // namespace faultline
