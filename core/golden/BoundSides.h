#pragma once
// The two sides of a TrainingBounds.h bound (internal to core/golden): the production
// implementation as BoundOptions describes it, and the golden model.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ErrorBounds.h"
#include "GoldenMath.h"
#include "GoldenSupport.h"

namespace faultline::golden::bounds {

inline constexpr double kU = 0x1p-24;  // float32 unit roundoff
inline constexpr double kF = kGoldenFunctionUlp * kU;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kFloatTiny = 0x1p-150;  // half the float subnormal spacing

// How one side rounds: elementary steps (us), sums of n terms (gamma(n)), functions (f, relative,
// plus us when the result is rounded to a narrow type), results below the normal range (tiny).
struct Side {
    double us = kU;
    double ua = kU;     // unit roundoff of the sums' partial results
    bool tree = false;  // the golden tree: ceil(n/32) + 5 roundings on any path
    double tiny = kFloatTiny;

    double gamma(double n) const
    {
        if (n <= 1) return 0.0;
        const double depth = tree ? std::min(n - 1, std::ceil(n / 32.0) + 5.0) : n - 1;
        return gammaN(depth, ua);
    }
    double f() const { return kF + (us > kU ? us : 0.0); }
};

inline Side productionSide(const BoundOptions& o)
{
    Side s;
    s.us = std::max(kU, o.intermediateUnitRoundoff);
    s.ua = std::max(kU, o.accumulationUnitRoundoff);
    s.tiny = std::max(kFloatTiny, o.intermediateAbsoluteRoundoff);
    return s;
}

inline Side goldenSide()
{
    Side s;
    s.tree = true;
    return s;
}

// kBoundSafety times both sides' first-order errors, plus the output roundings of both results.
inline double finishTwoSided(double production, double golden, double value, DType out)
{
    if (!std::isfinite(value) || std::isnan(production) || std::isnan(golden)) return kInf;
    const double pre = kBoundSafety * (production + golden);
    if (!std::isfinite(pre)) return kInf;
    return pre + ulpAt(out, std::fabs(value) + pre);
}

// For sums of exact terms (or of terms rounded once, folded into the errors given), where the
// gamma bounds are rigorous to every order: no safety factor, only a margin for evaluating the
// magnitudes in double.
inline double finishRigorous(double production, double golden, double value, DType out)
{
    if (!std::isfinite(value) || std::isnan(production) || std::isnan(golden)) return kInf;
    const double pre = (production + golden) * (1.0 + 1e-6);
    if (!std::isfinite(pre)) return kInf;
    return pre + ulpAt(out, std::fabs(value) + pre);
}

}  // namespace faultline::golden::bounds
