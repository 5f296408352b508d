#include "LedgerTime.h"

#include <cctype>
#include <ctime>

#include "../health/KernelLogLine.h"

namespace faultline {

std::string isoUtc(std::chrono::system_clock::time_point t)
{
    const std::time_t secs = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string isoUtcNow()
{
    return isoUtc(std::chrono::system_clock::now());
}

bool isIsoDate(std::string_view t)
{
    if (t.size() < 10) return false;
    for (size_t i = 0; i < 10; ++i) {
        const bool dash = i == 4 || i == 7;
        if (dash ? t[i] != '-' : !std::isdigit(static_cast<unsigned char>(t[i]))) return false;
    }
    return true;
}

std::optional<std::string> ledgerTime(std::string_view text)
{
    if (isIsoDate(text) && (text.size() == 10 || text[10] == 'T' || text[10] == ' '))
        return std::string(text);
    if (std::string iso = ctimeToIso(text); !iso.empty()) return iso;
    return std::nullopt;
}

namespace {

std::optional<std::time_t> epochOf(std::string_view t)
{
    if (!isIsoDate(t)) return std::nullopt;
    std::tm tm{};
    auto num = [&](size_t at, size_t n) {
        int v = 0;
        for (size_t i = at; i < at + n && i < t.size(); ++i) {
            if (!std::isdigit(static_cast<unsigned char>(t[i]))) return v;
            v = v * 10 + (t[i] - '0');
        }
        return v;
    };
    tm.tm_year = num(0, 4) - 1900;
    tm.tm_mon = num(5, 2) - 1;
    tm.tm_mday = num(8, 2);
    if (t.size() >= 19) {
        tm.tm_hour = num(11, 2);
        tm.tm_min = num(14, 2);
        tm.tm_sec = num(17, 2);
    }
    return timegm(&tm);
}

}  // namespace

std::optional<double> daysBetween(std::string_view a, std::string_view b)
{
    const auto ea = epochOf(a), eb = epochOf(b);
    if (!ea || !eb) return std::nullopt;
    return static_cast<double>(*eb - *ea) / 86400.0;
}

}  // namespace faultline
