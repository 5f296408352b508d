#pragma once
// Reproduction statistics: rates with Wilson score intervals.
#include <cstdint>
#include <string>

namespace faultline {

struct RateInterval {
    double rate = 0, low = 0, high = 0;
};

// Wilson score interval for `failures` out of `runs` at ~95% (z = 1.959964). runs == 0 gives
// rate 0 and the uninformative interval [0, 1].
RateInterval wilsonInterval(uint64_t failures, uint64_t runs, double z = 1.959963984540054);

// A fraction as reports print it: 0.1234 -> "12.3%".
std::string percentText(double fraction);

// A rate with its interval as reports print it: "12.3% [4.1%, 31.0%]".
std::string rateText(const RateInterval& r);

}  // namespace faultline
