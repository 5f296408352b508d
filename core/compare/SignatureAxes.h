#pragma once
// The two axes a signature is classified on (Signature.h): WHAT changed in the anomalous
// elements and WHERE they are. The primary kind is derived from the pair by signatureKindFor,
// so a planted pattern's truth and a classification are named the same way.
#include <cstdint>
#include <optional>
#include <string_view>

namespace faultline {

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

// What changed (public: JSON "what").
enum class SignatureWhat : uint8_t {
    None,       // identical: nothing changed
    Rounding,   // rounding-sized differences only (<= kRoundingUlps ulp)
    NanInf,     // NaN/Inf introduced, removed or sign-changed
    Sign,       // the sign bit alone
    Exponent,   // bits of the exponent field only (one or several)
    StuckBit,   // one bit at one position, one direction
    FixedBit,   // one bit at one position, both directions
    RandomBit,  // one bit per element at varying positions
    MultiBit,   // several bits across fields: an unrelated value
};

// Where the anomalies are (public: JSON "where").
enum class SignatureWhere : uint8_t {
    None,          // no anomaly to place
    Element,       // one element
    Tile,          // a few tiles (an SM's or thread block's output)
    RowStripe,     // a few rows spanning the columns
    ColumnStripe,  // a few columns spanning the rows (a lane)
    AddressRange,  // one contiguous flat range
    Periodic,      // runs at a fixed stride in flat memory order
    Scattered,     // a few elements, no structure
    Widespread,    // most tiles, no structure
};

// identical rounding single_bit_random stuck_bit sign_flip exponent nan_inf tile_clustered
// row_stripe column_stripe address_range widespread scattered (public: JSON "kind").
std::string_view signatureKindName(SignatureKind k);
std::optional<SignatureKind> parseSignatureKind(std::string_view name);

// none rounding nan_inf sign exponent stuck_bit fixed_bit random_bit multi_bit
std::string_view signatureWhatName(SignatureWhat w);
std::optional<SignatureWhat> parseSignatureWhat(std::string_view name);

// none element tile row_stripe column_stripe address_range periodic scattered widespread
std::string_view signatureWhereName(SignatureWhere w);
std::optional<SignatureWhere> parseSignatureWhere(std::string_view name);

// The primary kind of a (what, where) pair, the most specific true statement:
//   none -> identical; rounding -> rounding; nan_inf -> nan_inf (NaN/Inf poison everything
//   downstream, so they outrank bit-level explanations of the same elements); stuck_bit ->
//   stuck_bit (a defective bit is the most specific hardware fact); otherwise a structured where
//   (tile, stripes, range, periodic) names the unit to isolate; otherwise the what: sign ->
//   sign_flip, exponent -> exponent, fixed_bit/random_bit -> single_bit_random; multi_bit is
//   widespread when widespread, else scattered.
SignatureKind signatureKindFor(SignatureWhat what, SignatureWhere where);

}  // namespace faultline
