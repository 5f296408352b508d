#include "Statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace faultline {

std::string percentText(double fraction)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
    return buf;
}

std::string rateText(const RateInterval& r)
{
    return percentText(r.rate) + " [" + percentText(r.low) + ", " + percentText(r.high) + "]";
}

RateInterval wilsonInterval(uint64_t failures, uint64_t runs, double z)
{
    if (runs == 0) return {0.0, 0.0, 1.0};
    const double n = double(runs), p = double(std::min(failures, runs)) / n, z2 = z * z;
    const double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
    const double half = z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    return {p, std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace faultline
