#pragma once
// What comparing a suspect tensor with a reference tensor yields: counts, error statistics,
// histograms, where the mismatches are, the worst elements and the named pattern.
//
// Terms:
//   mismatch      the two bit patterns differ (two NaNs with identical bits are equal).
//   beyond        a mismatch the tolerance does not accept (Tolerance.h).
//   anomaly       beyond tolerance and not rounding-sized (Signature.h); what classification,
//                 the per-row/column counts and the samples are about.
//   finite pair   both elements finite; error statistics are over finite pairs only (equal
//                 pairs count with error 0), NaN/Inf mismatches are counted separately.
//   2-D view      last dimension = columns, all leading dimensions flattened into rows; a scalar
//                 is 1 x 1, a vector 1 x n.
//
// Determinism: every number here is independent of the thread count. Integer counts and maxima
// are merged in any order; floating-point sums are accumulated per chunk in flat element order
// and the chunk partial sums are added in chunk order, so they depend only on the chunk size
// (CompareOptions::chunkElements, fixed by default).
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../DType.h"
#include "Signature.h"
#include "TilePyramid.h"

namespace faultline {

// Log-decade histogram of non-negative magnitudes: `zero` counts exact zeros, decades[k] counts
// x with floor(log10 x) == kMinDecade + k (values below 1e-44 land in decades[0], values at or
// above 1e38 in the last), `infinite` counts +inf.
struct DecadeHistogram {
    static constexpr int kMinDecade = -45;
    static constexpr int kMaxDecade = 38;
    static constexpr int kDecades = kMaxDecade - kMinDecade + 1;
    uint64_t zero = 0;
    std::array<uint64_t, kDecades> decades{};
    uint64_t infinite = 0;

    void add(double x);  // x >= 0 or +inf; NaN is ignored
    void merge(const DecadeHistogram& o);
    uint64_t total() const;

    // Per binary exponent of a double: the decade bin of its binade's start and the value from
    // which the binade's upper part belongs to the next bin (+inf when none does). At most one
    // power of ten lies in a binade, so two table reads place any finite x > 0.
    struct Table {
        std::array<int16_t, 2048> bin{};
        std::array<double, 2048> nextFrom{};
    };
    static const Table& table();
};

// add() for finite x > 0 without the checks, for the compare engine's inner loop.
inline void addPositiveFinite(DecadeHistogram& h, double x, const DecadeHistogram::Table& t)
{
    uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    const size_t e = size_t(u >> 52 & 0x7FF);
    ++h.decades[size_t(t.bin[e] + (x >= t.nextFrom[e] ? 1 : 0))];
}

struct ErrorStats {
    double max = 0.0;           // over finite pairs (rel: with a finite relative error)
    double mean = 0.0;          // sum / count
    double rms = 0.0;           // sqrt(sum of squares / count)
    uint64_t count = 0;         // pairs the mean and rms are over
    DecadeHistogram histogram;  // mismatched finite pairs only (equal pairs are not binned)
};

// Per bit position (0 = LSB, length = dtype bits): elements whose bit differs, and how many of
// those went 0 -> 1 (reference 0, suspect 1); 1 -> 0 = flips - toOne.
struct BitFlips {
    std::vector<uint64_t> flips;
    std::vector<uint64_t> toOne;

    uint64_t toZero(unsigned bit) const { return flips[bit] - toOne[bit]; }
};

// Half-open bounding box in the 2-D view.
struct Region {
    uint64_t rowBegin = 0, rowEnd = 0;
    uint64_t colBegin = 0, colEnd = 0;
    bool operator==(const Region&) const = default;
};

// One of the worst elements.
struct ElementDiff {
    uint64_t index = 0;  // flat, row-major
    uint64_t row = 0, col = 0;
    double suspect = 0.0, reference = 0.0;  // values (NaN/inf as they are)
    uint64_t suspectBits = 0, referenceBits = 0;
    bool nonFinite = false;  // a NaN or Inf is involved: no ulp, no finite error
    uint64_t ulp = 0;        // ulp distance (integers: |s - r|); 0 when nonFinite
    double absError = 0.0;   // |s - r| (NaN when nonFinite)
    double relError = 0.0;   // |s - r| / |r|, +inf when r == 0 != s (NaN when nonFinite)
    bool beyond = false;     // beyond tolerance
};

// Where the anomalies are, for classification and for views that plot them.
struct SpatialProfile {
    // Anomalies per row / per column of the 2-D view. When there are more rows (columns) than
    // kMaxLines, each entry covers rowBucket (colBucket) consecutive rows (columns), a power of 2.
    static constexpr uint64_t kMaxLines = 65536;
    uint64_t rowBucket = 1, colBucket = 1;
    std::vector<uint64_t> rowCounts, colCounts;         // empty when there is no anomaly
    std::optional<uint64_t> firstAnomaly, lastAnomaly;  // flat indices
    // The first kSampleSize anomalous flat indices, ascending.
    std::vector<uint64_t> firstIndices;
    // A uniform sample of up to kSampleSize anomalous flat indices, ascending (the ones with the
    // smallest hash: deterministic, independent of processing order).
    std::vector<uint64_t> spreadSample;
    static constexpr size_t kSampleSize = 65536;
};

struct Divergence {
    std::string name;         // pairing key (Pairing.h)
    std::string suspectName;  // names in the two files
    std::string referenceName;
    DType dtype = DType::Float32;
    std::vector<uint64_t> shape;
    uint64_t rows = 0, cols = 0;  // 2-D view
    std::string tolerance;        // Tolerance::toString()

    uint64_t elements = 0;
    uint64_t mismatches = 0;
    uint64_t beyondTolerance = 0;
    uint64_t anomalies = 0;
    uint64_t finitePairs = 0;
    std::optional<uint64_t> firstMismatch, firstBeyond;  // flat indices

    uint64_t nanIntroduced = 0;        // suspect NaN, reference not
    uint64_t nanRemoved = 0;           // reference NaN, suspect not
    uint64_t infIntroduced = 0;        // suspect ±inf, reference not inf
    uint64_t infRemoved = 0;           // reference ±inf, suspect not inf
    uint64_t infSignChanged = 0;       // +inf vs -inf
    uint64_t nanPayloadChanged = 0;    // both NaN, bits differ
    uint64_t nonFiniteMismatches = 0;  // mismatches with a NaN/Inf on either side

    ErrorStats absError;  // |s - r|
    // |s - r| / |r|. Pairs with r == 0 != s (or a quotient overflowing) have an infinite relative
    // error: counted in relInfinite, left out of mean, rms, count and histogram; max is +inf then.
    ErrorStats relError;
    uint64_t relInfinite = 0;

    // Ulp distance of mismatched finite pairs: bin 0 = 0 ulp (±0), bin k = [2^(k-1), 2^k).
    std::array<uint64_t, 65> ulpHistogram{};
    uint64_t maxUlp = 0;

    BitFlips bits;                               // all mismatches (public "bit_histogram")
    BitFlips beyondBits;                         // beyond-tolerance elements
    BitFlips anomalyBits;                        // anomalies
    std::array<uint64_t, 65> anomalyPopcount{};  // anomalies by number of differing bits
    // Single-bit-like anomalies by the bit that flipped: exactly one bit differs, or (floats)
    // flipping the highest differing bit back leaves a rounding-sized difference (a single flip
    // on top of rounding noise). Length = dtype bits.
    std::vector<uint64_t> anomalySingleBit;
    uint64_t anomalySignOnly = 0;  // single-bit-like anomalies at the sign bit
    uint64_t anomalyExponent = 0;  // anomalies with a differing exponent bit
    // Anomalies whose difference is confined to the exponent field: restoring the reference's
    // exponent bits leaves the same bits or a rounding-sized difference (flips on top of noise).
    uint64_t anomalyExponentOnly = 0;
    uint64_t anomalyNonFinite = 0;  // anomalies with a NaN/Inf on either side

    std::optional<Region> region;        // bounding box of all mismatches
    std::optional<Region> beyondRegion;  // bounding box of beyond-tolerance elements
    TilePyramid tiles;
    std::vector<ElementDiff> top;  // worst first (TensorComparer.h: order)
    SpatialProfile spatial;
    Signature signature;
};

// NaN/Inf the suspect holds where the reference holds none of the kind (NaN introduced, Inf
// introduced, an Inf whose sign changed).
uint64_t nonFiniteIntroduced(const Divergence& d);

// The one spelling of the largest error for text: "max |err| 0.5, max 3 ulp", and where NaN/Inf
// were introduced, "max |err| 0.5, max 3 ulp among finite pairs; 12 NaN/Inf introduced" (or "no
// finite element differs; 12 NaN/Inf introduced"), so the finite maxima never read as the
// whole story.
std::string maxErrorText(const Divergence& d);

}  // namespace faultline
