#pragma once
// Reproduction statistics: rates with Wilson score intervals.
#include <cstdint>
#include <string>
#include <vector>

namespace faultline {

struct RateInterval {
    double rate = 0, low = 0, high = 0;
};

// Wilson score interval for `failures` out of `runs` at ~95% (z = 1.959964). runs == 0 gives
// rate 0 and the uninformative interval [0, 1].
RateInterval wilsonInterval(uint64_t failures, uint64_t runs, double z = 1.959963984540054);
// The two-sided normal quantile of a confidence: 1.959964 for 0.95, 2.575829 for 0.99 (the z of
// wilsonInterval at that confidence). `confidence` in (0, 1).
double zForConfidence(double confidence);

// The median of `values` (sorted in place); 0 when empty.
double medianOf(std::vector<double>& values);

// What a clean result rules out: with no failure in `runs` runs, the exact one-sided upper
// confidence bound of the failure rate, 1 - (1 - confidence)^(1/runs) (Clopper-Pearson; about
// 3/runs at 95%). 1 when runs == 0 (nothing is ruled out).
double cleanRateBound(uint64_t runs, double confidence = 0.95);
// "no failure in 3000 runs: rate < 0.0999% at 95%".
std::string cleanRateText(uint64_t runs, double confidence = 0.95);
// A bound on a rate as those texts print it, rounded up: "63.2%", "0.0999%", and below 0.01% as
// a number: "3e-06".
std::string rateBoundText(double rate);

// A fraction as reports print it: 0.1234 -> "12.3%".
std::string percentText(double fraction);

// A rate with its interval as reports print it: "12.3% [4.1%, 31.0%]".
std::string rateText(const RateInterval& r);

}  // namespace faultline
