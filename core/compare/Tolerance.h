#pragma once
// What "close enough" means for one comparison. Elements whose bits differ but that satisfy the
// policy are mismatches within tolerance; the others are beyond tolerance.
//
// Policies (the text form is public: `compare --tolerance`, JSON "tolerance"):
//   exact    every bit-pattern difference is beyond tolerance (±0 and NaN payloads included)
//   ulp:N    |ordered(s) - ordered(r)| <= N units in the last place (integers: |s - r| <= N)
//   abs:X    |s - r| <= X, computed in double
//   rel:X    |s - r| <= X * |r| (so r == 0 only accepts s == ±0)
//   bound    |s - r| <= bound[i], a per-element absolute bound the caller supplies (the replay
//            engine's rounding-error bound against the golden model); without one it is an error
// Whatever the policy, a NaN or infinity on one side only, or infinities of opposite sign, are
// beyond tolerance. Two NaNs with different payloads are beyond `exact` and within the others.
#include <cstdint>
#include <string>
#include <string_view>

#include "../Result.h"

namespace faultline {

enum class ToleranceKind : uint8_t { Exact, Ulp, Abs, Rel, Bound };

struct Tolerance {
    ToleranceKind kind = ToleranceKind::Exact;
    uint64_t ulps = 0;   // Ulp
    double value = 0.0;  // Abs, Rel: X (finite, >= 0)

    static Tolerance exact() { return {}; }
    static Tolerance ulp(uint64_t n) { return {ToleranceKind::Ulp, n, 0.0}; }
    static Tolerance absolute(double x) { return {ToleranceKind::Abs, 0, x}; }
    static Tolerance relative(double x) { return {ToleranceKind::Rel, 0, x}; }
    static Tolerance bound() { return {ToleranceKind::Bound, 0, 0.0}; }

    // "exact", "ulp:4", "abs:1e-05", "rel:0.001", "bound"; parseTolerance(toString()) gives the
    // same tolerance back.
    std::string toString() const;
    bool operator==(const Tolerance&) const = default;
};

// Parses the text form above (case-insensitive, surrounding blanks ignored). Errors name the
// text and say what is wrong: unknown policy, missing/negative/non-finite value, trailing text.
Result<Tolerance> parseTolerance(std::string_view text);

}  // namespace faultline
