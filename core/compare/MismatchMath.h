#pragma once
// Internal to the compare engine: the error arithmetic of one 64-element block of float32,
// bfloat16 or float16 pairs, vectorised with Highway and dispatched at run time to the best
// instruction set of the CPU (SSE4, AVX2, AVX-512; the portable scalar target is compiled in
// as well). Every figure is the IEEE result of the same operations as the scalar path
// (ChunkScanner's per-element code), lane by lane, so the comparison results do not depend on
// the instruction set; tests/core/test_compare_dispatch.cpp checks it on every target.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace faultline {

enum class MismatchFloat { Float32, BFloat16, Float16 };

// The figures of the 64 pairs of a block, by position k; a pair with equal bits yields zeros
// (every maximum below starts at 0, so equal pairs do not change them).
struct BlockErrors {
    static constexpr unsigned kBlock = 64;
    alignas(64) double absErr[kBlock];    // |double(s) - double(r)|
    alignas(64) double absSq[kBlock];     // absErr * absErr
    alignas(64) double relErr[kBlock];    // absErr / |r|; 0 when both are 0, +inf when only r is
    alignas(64) double relAdd[kBlock];    // relErr where finite, else +0 (adding it leaves a sum >= 0 as is)
    alignas(64) double relSq[kBlock];     // relAdd * relAdd
    alignas(64) uint64_t ulp[kBlock];     // distance on the sign-magnitude integer line
    alignas(64) uint64_t ulpBin[kBlock];  // std::bit_width(ulp)
    double maxAbs = 0.0, maxRel = 0.0;    // maxRel over finite relative errors
    uint64_t maxUlp = 0;
    uint64_t relInfinite = 0;
    // Over the pairs whose bits differ (equal pairs left out): the smallest absErr, relErr (+inf
    // when any is infinite) and ulp. With the maxima they tell when every mismatch of the block
    // falls in one histogram bin, so the bin is counted once per block.
    double minAbs = 0.0, minRel = 0.0;
    uint64_t minUlp = 0;
    // maxAbs over the positions [16 g, 16 g + 16): a tile part that is a union of these groups
    // takes its maximum from here (tiles are multiples of 16 columns wide).
    static constexpr unsigned kGroup = 16;
    double groupMaxAbs[kBlock / kGroup] = {};
};

// Adds the bit-position counts of the differing bits of `blocks` x 64 pairs (flips: s ^ r) and
// of those that are 1 in the suspect (toOne: (s ^ r) & s) to flips[0, 32) and toOne[0, 32):
// carry-save adders over the vectors (Harley-Seal), so a mismatch costs a few vector operations
// instead of table adds. Equal pairs add nothing; NaN/Inf pairs count like any other bits.
void countSegmentBits(MismatchFloat kind, const void* suspect, const void* reference, size_t blocks,
                      uint64_t* flips, uint64_t* toOne);

// Fills `out` for the 64 pairs at suspect[0, 64) and reference[0, 64) (packed little-endian
// elements of `kind`, any alignment). Returns false, with `out` unspecified, when any of the 128
// elements is NaN or infinite: such a block takes the per-element path.
bool computeBlockErrors(MismatchFloat kind, const void* suspect, const void* reference, BlockErrors& out);

// For tests and benchmarks: the Highway targets compiled in that this CPU supports (best first is
// not guaranteed), their names, the one computeBlockErrors uses now, and a restriction to one of
// them (0 lifts it). The restriction is process-wide: not while a comparison runs.
std::vector<int64_t> mismatchMathTargets();
std::string mismatchMathTargetName(int64_t target);
int64_t mismatchMathActiveTarget();
void restrictMismatchMathTargets(int64_t target);

}  // namespace faultline
