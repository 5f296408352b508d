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

double medianOf(std::vector<double>& values)
{
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double zForConfidence(double confidence)
{
    // erfc(z / sqrt 2) = 1 - confidence, by bisection: erfc falls monotonically.
    const double tail = 1 - std::clamp(confidence, 1e-12, 1 - 1e-12);
    double lo = 0, hi = 40;
    for (int i = 0; i < 200; ++i) {
        const double mid = (lo + hi) / 2;
        (std::erfc(mid / std::sqrt(2.0)) > tail ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
}

double cleanRateBound(uint64_t runs, double confidence)
{
    if (runs == 0) return 1.0;
    return -std::expm1(std::log1p(-confidence) / double(runs));
}

std::string rateBoundText(double rate)
{
    // Rounded up, never down: "rate < X" must stay true of the printed X.
    auto up = [](double v, int digits) {
        if (!(v > 0) || !std::isfinite(v)) return v;
        const double scale = std::pow(10.0, std::floor(std::log10(v)) - (digits - 1));
        return std::ceil(v / scale * (1 - 1e-12)) * scale;
    };
    char text[32];
    if (rate >= 1e-4)
        std::snprintf(text, sizeof text, "%.3g%%", up(100.0 * rate, 3));
    else
        std::snprintf(text, sizeof text, "%.2g", up(rate, 2));
    return text;
}

std::string cleanRateText(uint64_t runs, double confidence)
{
    char level[16];
    std::snprintf(level, sizeof level, "%g%%", 100.0 * confidence);
    return "no failure in " + std::to_string(runs) + " run" + (runs == 1 ? "" : "s") + ": rate < " +
           rateBoundText(cleanRateBound(runs, confidence)) + " at " + level;
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
