#include "Tolerance.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace faultline {

namespace {

std::string lowerTrimmed(std::string_view text)
{
    size_t b = 0, e = text.size();
    while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
    std::string out(text.substr(b, e - b));
    for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

Error toleranceError(std::string_view text, const std::string& problem)
{
    return Error{"tolerance '" + std::string(text) + "': " + problem, ErrorCode::Usage};
}

// Shortest text that reads back as the same double.
std::string formatDouble(double v)
{
    char buf[64];
    for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

}  // namespace

std::string Tolerance::toString() const
{
    switch (kind) {
        case ToleranceKind::Exact:
            return "exact";
        case ToleranceKind::Ulp:
            return "ulp:" + std::to_string(ulps);
        case ToleranceKind::Abs:
            return "abs:" + formatDouble(value);
        case ToleranceKind::Rel:
            return "rel:" + formatDouble(value);
        case ToleranceKind::Bound:
            return "bound";
    }
    return "exact";
}

Result<Tolerance> parseTolerance(std::string_view text)
{
    const std::string t = lowerTrimmed(text);
    if (t.empty()) return toleranceError(text, "empty (expected exact, ulp:N, abs:X, rel:X or bound)");
    const size_t colon = t.find(':');
    const std::string policy = t.substr(0, colon);
    const bool hasValue = colon != std::string::npos;
    const std::string arg = hasValue ? t.substr(colon + 1) : std::string();

    if (policy == "exact" || policy == "bound") {
        if (hasValue) return toleranceError(text, "'" + policy + "' takes no value");
        return policy == "exact" ? Tolerance::exact() : Tolerance::bound();
    }
    if (policy != "ulp" && policy != "abs" && policy != "rel")
        return toleranceError(
            text, "unknown policy '" + policy + "' (expected exact, ulp:N, abs:X, rel:X or bound)");
    if (!hasValue || arg.empty())
        return toleranceError(
            text, "'" + policy + "' needs a value, e.g. " + policy + (policy == "ulp" ? ":4" : ":1e-5"));

    if (policy == "ulp") {
        if (arg.front() == '-' || arg.front() == '+')
            return toleranceError(text, "ulp count must be a non-negative integer");
        uint64_t n = 0;
        const auto [ptr, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), n);
        if (ec == std::errc::result_out_of_range) return toleranceError(text, "ulp count is too large");
        if (ec != std::errc() || ptr != arg.data() + arg.size())
            return toleranceError(text, "ulp count must be a non-negative integer");
        return Tolerance::ulp(n);
    }

    // from_chars for double is in libstdc++ 11+, but strtod is what every other reader uses.
    char* end = nullptr;
    const double x = std::strtod(arg.c_str(), &end);
    if (end == arg.c_str() || *end != '\0') return toleranceError(text, "'" + arg + "' is not a number");
    if (!std::isfinite(x)) return toleranceError(text, "value must be finite");
    if (x < 0) return toleranceError(text, "value must not be negative");
    const double v = x + 0.0;  // -0 -> +0
    return policy == "abs" ? Tolerance::absolute(v) : Tolerance::relative(v);
}

}  // namespace faultline
