#pragma once
// The named pattern of a divergence: what a hardware engineer acts on.
//
// Classification looks at the ANOMALIES of a comparison: elements beyond tolerance that are not
// rounding-sized (rounding-sized = floating-point, both finite, at most kRoundingUlps ulp apart;
// for integer dtypes every beyond-tolerance element is an anomaly). So ±1-2 ulp noise around a
// real defect, or an `exact` comparison of two nondeterministic reductions, does not hide the
// defect's shape. Thresholds are constants below; each detector needs kMinEvidence anomalies.
//
// Precedence of the primary kind (first rule that matches wins; every other kind that matches
// is listed as a secondary finding, with its own detail):
//   1. identical        no bit pattern differs.
//   2. rounding         nothing beyond tolerance (confidence 1), or everything beyond tolerance
//                       is rounding-sized and no bit flips one way only (confidence 0.7).
//   3. stuck_bit        one bit position explains >= 90% of the anomalies and >= 99% of its
//                       flips go the same direction (so elements that already held that value are
//                       untouched): a defective lane/register/SRAM bit, the most specific
//                       hardware fact there is. Where it happens (tiles, columns) is secondary.
//   4. nan_inf          NaN/Inf appear, vanish or change sign in >= 50% of the anomalies: they
//                       poison everything downstream, so they come before where and how.
//   5. spatial          where the anomalies are, which names the unit to isolate (memory range,
//                       lane, SM). At most one spatial kind is reported, tried in this order:
//        address_range  one contiguous flat range, >= 50% dense, not whole rows (memory);
//        address_range  periodic in flat memory order: period P = the most common gap between
//                       run starts (>= half of them) in the first anomalies, >= 90% of which lie
//                       in a window of L <= P/2 elements per period; P neither divides nor is a
//                       multiple of the row length (those are columns, tiles or rows: next rules);
//        row_stripe     few rows (<= half the random expectation) spanning the columns;
//        column_stripe  few columns spanning the rows (a lane; a stride is reported);
//        tile_clustered confined to tiles of an inferred size (the pyramid level where the
//                       anomalies' tiles are still dense): an SM's / a thread block's output.
//   6. sign_flip        >= 90% of the anomalies differ in the sign bit only (up to rounding).
//   7. single_bit_random >= 90% of the anomalies differ in one flipped bit (exactly one bit, or
//                       one bit on top of a rounding-sized difference), at random places.
//   8. exponent         >= 50% of the anomalies touch the exponent field (errors >= 2x).
//   9. widespread       anomalies in >= 50% of the finest tiles, no structure found.
//  10. scattered        a few anomalies at random places with multi-bit garbage (fallback).
// A background of within-tolerance or rounding-sized mismatches next to a defect is reported as a
// secondary `rounding` finding.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline {

struct Divergence;

enum class SignatureKind : uint8_t {
    Identical,
    Rounding,
    SingleBitRandom,
    StuckBit,
    SignFlip,
    Exponent,
    NanInf,
    TileClustered,
    RowStripe,
    ColumnStripe,
    AddressRange,
    Widespread,
    Scattered,
};

// identical rounding single_bit_random stuck_bit sign_flip exponent nan_inf tile_clustered
// row_stripe column_stripe address_range widespread scattered (public: JSON "kind").
std::string_view signatureKindName(SignatureKind k);
std::optional<SignatureKind> parseSignatureKind(std::string_view name);

inline constexpr uint64_t kRoundingUlps = 2;
inline constexpr uint64_t kMinEvidence = 8;

// The facts a finding rests on; only the members its kind uses are set.
struct SignatureEvidence {
    std::optional<unsigned> bit;                       // stuck_bit: bit position (0 = LSB)
    std::optional<unsigned> bitValue;                  // stuck_bit: the value it is stuck at (0/1)
    std::string field;                                 // stuck_bit: sign | exponent | mantissa | value
    uint64_t tileRows = 0, tileCols = 0;               // tile_clustered: inferred tile size (elements)
    std::vector<std::pair<uint64_t, uint64_t>> tiles;  // tile_clustered: (tile row, tile col), <= 64
    std::vector<uint64_t> lines;                       // row_stripe / column_stripe: rows or columns, <= 64
    uint64_t lineCount = 0;                            // how many rows/columns in all
    uint64_t stride = 0;  // column_stripe: columns form c0 + k*stride (0: no stride)
    std::optional<std::pair<uint64_t, uint64_t>> range;  // address_range: flat [first, last + 1)
    uint64_t period = 0, runLength = 0;                  // address_range when periodic
};

struct SignatureFinding {
    SignatureKind kind = SignatureKind::Identical;
    double confidence = 0.0;  // 0..1
    std::string detail;       // one line
    SignatureEvidence evidence;
};

struct Signature {
    SignatureKind kind = SignatureKind::Identical;
    double confidence = 1.0;
    std::string detail;
    SignatureEvidence evidence;
    std::vector<SignatureFinding> secondary;
};

// Classifies a finished divergence (all counts, histograms, tiles and spatial data filled).
Signature classifyDivergence(const Divergence& d);

}  // namespace faultline
