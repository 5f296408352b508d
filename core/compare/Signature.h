#pragma once
// The named pattern of a divergence: what a hardware engineer acts on.
//
// Classification looks at the ANOMALIES of a comparison: elements beyond tolerance that are not
// rounding-sized (rounding-sized = floating-point, both finite, at most kRoundingUlps ulp apart;
// for integer dtypes every beyond-tolerance element is an anomaly). So ±1-2 ulp noise around a
// real defect, or an `exact` comparison of two nondeterministic reductions, does not hide the
// defect's shape. Thresholds are constants below; each detector needs kMinEvidence anomalies.
//
// Two axes (SignatureAxes.h), both reported:
//   what   what changed in the anomalies, first rule that matches:
//     nan_inf    NaN/Inf appear, vanish or change sign in >= 50% of the anomalies: they poison
//                everything downstream, so they outrank bit-level explanations of the same
//                elements (writing a NaN sets the exponent bits one way: no stuck bit);
//     stuck_bit  one bit position explains >= 90% of the anomalies, >= 99% of its flips go the
//                same direction, and >= 90% of those elements differ in that bit alone (up to
//                rounding): a defective lane/register/SRAM bit. Elements that already held the
//                stuck value had no room to change and are untouched, so they are no anomalies;
//                and the anomalies form a unit: a spatial structure (below) or >= 10% of the
//                elements. One-way flips at a few scattered elements are random flips at a
//                position nearly every element held the other way (the top exponent bits of
//                normal data): listed as a secondary stuck_bit finding, not claimed;
//     sign       >= 90% of the anomalies differ in the sign bit only (up to rounding);
//     exponent   >= 90% of the anomalies differ in exponent bits only (one or several, up to
//                rounding): errors of 2x and more with the mantissa intact;
//     fixed_bit  >= 90% differ in one flipped bit (exactly one, or one on top of a rounding-sized
//                difference), >= 90% of those at one position, both directions;
//     random_bit the same at varying positions;
//     multi_bit  anything else: several bits across fields, an unrelated value.
//   where  where the anomalies are: element (exactly one); else the spatial rules, at most one,
//          tried in this order:
//        address_range  one contiguous flat range, >= 50% dense, not whole rows (memory);
//        periodic       (kind address_range) periodic in flat memory order: period P = the most
//                       common gap between run starts (>= half of them) in the first anomalies,
//                       >= 90% of which lie in a window of L <= P/2 elements per period; P neither
//                       divides nor is a multiple of the row length (those are columns, tiles or
//                       rows: next rules);
//        row_stripe     few rows (<= half the random expectation) spanning the columns (crossing
//                       >= 80% of the columns a random placement of as many anomalies would, and
//                       stretching over at least half of them);
//        column_stripe  few columns spanning the rows, likewise (a lane; a stride is reported);
//        tile           (kind tile_clustered) confined to tiles of an inferred size (the pyramid
//                       level where the anomalies' tiles are still dense): an SM's output;
//          else widespread (anomalies in >= 50% of the finest tiles), else scattered.
// Each structured rule needs kMinEvidence anomalies.
//
// The primary kind is signatureKindFor(what, where), the most specific true statement:
//   1. identical        no bit pattern differs.
//   2. rounding         nothing beyond tolerance (confidence 1), or everything beyond tolerance
//                       is rounding-sized and no bit flips one way only (confidence 0.7).
//   3. nan_inf          what = nan_inf (where is secondary: a NaN row, NaNs in a tile).
//   4. stuck_bit        what = stuck_bit (where it happens, tiles or columns, is secondary).
//   5. spatial          where = address_range, periodic, row_stripe, column_stripe or tile: the
//                       unit to isolate (memory range, lane, SM); what is secondary.
//   6. sign_flip, exponent, single_bit_random (fixed_bit or random_bit): what, at random places.
//   7. widespread       multi-bit anomalies in >= 50% of the finest tiles, no structure found.
//   8. scattered        a few multi-bit anomalies at random places (fallback).
// Every other detector that matches is listed as a secondary finding, with its own detail. A
// background of within-tolerance or rounding-sized mismatches next to a defect is reported as a
// secondary `rounding` finding.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "SignatureAxes.h"

namespace faultline {

struct Divergence;

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
    SignatureWhat what = SignatureWhat::None;
    SignatureWhere where = SignatureWhere::None;
    double confidence = 1.0;
    std::string detail;
    SignatureEvidence evidence;
    std::vector<SignatureFinding> secondary;
};

// Classifies a finished divergence (all counts, histograms, tiles and spatial data filled).
Signature classifyDivergence(const Divergence& d);

}  // namespace faultline
