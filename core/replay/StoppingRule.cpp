#include "StoppingRule.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "../Text.h"
#include "Statistics.h"

namespace faultline {

Status checkStoppingRule(const StoppingRule& rule)
{
    if (rule.until && rule.untilRate == 0)
        return rule.budget.count() < 0 ? Status(Error{"--budget must not be negative", ErrorCode::Usage})
                                       : Status();
    if (!(rule.untilRate >= 1e-7 && rule.untilRate <= 0.5))
        return Error{
            "--until-rate " + rateNumberText(rule.untilRate) + ": must be a rate between 1e-7 and 0.5",
            ErrorCode::Usage};
    if (!(rule.confidence >= 0.5 && rule.confidence <= 0.999999))
        return Error{"--confidence " + std::to_string(rule.confidence) + ": must be between 0.5 and 0.999999",
                     ErrorCode::Usage};
    if (rule.budget.count() < 0) return Error{"--budget must not be negative", ErrorCode::Usage};
    return {};
}

uint64_t runsToRuleOut(double rate, double confidence)
{
    if (!(rate > 0 && rate < 1) || !(confidence > 0 && confidence < 1)) return 0;
    // log(1 - confidence) / log(1 - rate), then the exact bound decides at the boundary.
    uint64_t n = uint64_t(std::floor(std::log1p(-confidence) / std::log1p(-rate)));
    if (n > 0) --n;
    while (cleanRateBound(n, confidence) >= rate) ++n;
    return n;
}

bool stopReached(uint64_t runs, uint64_t failures, const StoppingRule& rule)
{
    if (!rule.adaptive()) return false;
    if (rule.until) return rule.until(runs, failures);
    return failures > 0 || cleanRateBound(runs, rule.confidence) < rule.untilRate;
}

StoppedBy stoppedBy(uint64_t runs, uint64_t failures, const StoppingRule& rule, bool cancelled)
{
    if (failures > 0) return StoppedBy::Failure;
    if (cleanRateBound(runs, rule.confidence) < rule.untilRate) return StoppedBy::Rate;
    return cancelled ? StoppedBy::Cancelled : StoppedBy::Budget;
}

Result<double> parseRate(std::string_view text, std::string_view option)
{
    const std::string s = trimmed(text);
    const bool percent = !s.empty() && s.back() == '%';
    const std::string number = percent ? s.substr(0, s.size() - 1) : s;
    char* end = nullptr;
    const double value = number.empty() ? 0 : std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(value))
        return Error{
            std::string(option) + " '" + std::string(text) + "': expected a rate such as 1e-3, 0.001 or 0.1%",
            ErrorCode::Usage};
    return percent ? value / 100.0 : value;
}

Result<std::chrono::milliseconds> parseDuration(std::string_view text)
{
    const std::string s(text);
    auto bad = [&] {
        return Error{"--budget '" + s + "': expected a duration such as 90s, 10m or 2h", ErrorCode::Usage};
    };
    if (s.empty()) return bad();
    char* end = nullptr;
    const double value = std::strtod(s.c_str(), &end);
    if (end == s.c_str()) return bad();
    const std::string unit(end);
    double seconds = 0;
    if (unit.empty() || unit == "s")
        seconds = value;
    else if (unit == "m")
        seconds = value * 60;
    else if (unit == "h")
        seconds = value * 3600;
    else
        return bad();
    // Up to a year: longer is a typo, and NaN or infinities are never a budget.
    if (!std::isfinite(seconds) || seconds <= 0 || seconds > 366 * 24 * 3600.0)
        return Error{"--budget '" + s + "': must be more than 0 and at most a year", ErrorCode::Usage};
    return std::chrono::milliseconds(int64_t(std::ceil(seconds * 1000)));
}

std::string rateNumberText(double rate)
{
    char text[32];
    if (rate > 0 && rate < 0.01) {
        const int exponent = int(std::floor(std::log10(rate) + 1e-9));
        const double mantissa = rate / std::pow(10.0, exponent);
        std::snprintf(text, sizeof text, "%ge%d", std::round(mantissa * 1000) / 1000, exponent);
    } else {
        std::snprintf(text, sizeof text, "%g", rate);
    }
    return text;
}

std::string confidenceText(double confidence)
{
    char text[16];
    std::snprintf(text, sizeof text, "%g%%", 100.0 * confidence);
    return text;
}

}  // namespace faultline
