#include "KernelLogLine.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "../Text.h"
#include "LogText.h"

namespace faultline {
namespace {

constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int monthIndex(std::string_view m)
{
    for (int i = 0; i < 12; ++i)
        if (m == kMonths[i]) return i;
    return -1;
}

bool isDigit(char c)
{
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// Skips one space-separated token and the spaces after it ("" when there is no space).
std::string_view skipToken(std::string_view s)
{
    size_t i = s.find(' ');
    if (i == std::string_view::npos) return {};
    while (i < s.size() && s[i] == ' ') ++i;
    return s.substr(i);
}

// "[ 1234.567890]" → seconds; "[Tue Dec  1 10:00:00 2026]" → ISO time. Returns the rest.
std::string_view bracketStamp(std::string_view s, std::optional<double>& uptime, std::string& time)
{
    if (s.empty() || s.front() != '[') return s;
    const size_t close = s.find(']');
    if (close == std::string_view::npos || close > 48) return s;
    std::string_view inner = trimBlanks(s.substr(1, close - 1));
    const size_t dot = inner.find('.');
    if (dot != std::string_view::npos && allDigits(inner.substr(0, dot)) &&
        allDigits(inner.substr(dot + 1)) && inner.size() < 24) {
        uptime = std::strtod(std::string(inner).c_str(), nullptr);
    } else if (std::string iso = ctimeToIso(inner); !iso.empty()) {
        time = iso;
    } else {
        return s;
    }
    s.remove_prefix(close + 1);
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    return s;
}

// dmesg -x's "kern  :err   : " (facility and level, padded): the rest, and whether the facility
// is the kernel's; nullopt when the line does not start with one.
std::optional<std::string_view> facilityPrefix(std::string_view s, bool& kernel)
{
    static constexpr std::string_view facilities[] = {
        "kern",     "user", "mail",   "daemon", "auth",   "syslog", "lpr",    "news",   "uucp",   "cron",
        "authpriv", "ftp",  "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"};
    static constexpr std::string_view levels[] = {"emerg", "alert",  "crit", "err",
                                                  "warn",  "notice", "info", "debug"};
    size_t i = 0;
    while (i < s.size() && (std::islower(static_cast<unsigned char>(s[i])) || isDigit(s[i]))) ++i;
    const std::string_view facility = s.substr(0, i);
    while (i < s.size() && s[i] == ' ') ++i;
    if (i >= s.size() || s[i] != ':') return std::nullopt;
    const size_t levelStart = ++i;
    while (i < s.size() && std::islower(static_cast<unsigned char>(s[i]))) ++i;
    const std::string_view level = s.substr(levelStart, i - levelStart);
    while (i < s.size() && s[i] == ' ') ++i;
    if (i + 1 >= s.size() || s[i] != ':' || s[i + 1] != ' ') return std::nullopt;
    bool knownFacility = false, knownLevel = false;
    for (std::string_view f : facilities) knownFacility = knownFacility || f == facility;
    for (std::string_view l : levels) knownLevel = knownLevel || l == level;
    if (!knownFacility || !knownLevel) return std::nullopt;
    kernel = facility == "kern";
    return s.substr(i + 2);
}

// After a syslog time: "host ident: message" → the message, and whether the ident is the kernel's
// tag "kernel:". A line without an ident is not the kernel's.
std::string_view syslogHeader(std::string_view s, bool& kernel)
{
    s = skipToken(s);  // host
    const std::string_view ident = s.substr(0, s.find(' '));
    kernel = ident == "kernel:";
    if (!ident.empty() && ident.back() == ':') return skipToken(s);
    return s;
}

}  // namespace

std::string ctimeToIso(std::string_view text)
{
    // "Tue Dec  1 10:00:00 2026"
    text = trimBlanks(text);
    if (text.size() < 20 || text[3] != ' ') return {};
    std::string_view rest = trimBlanks(text.substr(4));
    const int month = monthIndex(rest.substr(0, 3));
    if (month < 0) return {};
    rest = trimBlanks(rest.substr(3));
    const size_t sp = rest.find(' ');
    if (sp == std::string_view::npos || !allDigits(rest.substr(0, sp)) || sp > 2) return {};
    const int day = std::atoi(std::string(rest.substr(0, sp)).c_str());
    rest = trimBlanks(rest.substr(sp));
    if (rest.size() < 13 || rest[2] != ':' || rest[5] != ':' || rest[8] != ' ') return {};
    const std::string_view hms = rest.substr(0, 8);
    const std::string_view year = trimBlanks(rest.substr(9));
    if (!allDigits(year) || year.size() != 4 || day < 1 || day > 31) return {};
    for (size_t i : {0, 1, 3, 4, 6, 7})
        if (!isDigit(hms[i])) return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*s-%02d-%02dT%.*s", 4, year.data(), month + 1, day, 8, hms.data());
    return buf;
}

std::string epochMicrosToIso(uint64_t micros)
{
    const std::time_t secs = static_cast<std::time_t>(micros / 1000000);
    std::tm tm{};
    if (!gmtime_r(&secs, &tm)) return {};
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lluZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<unsigned long long>(micros % 1000000));
    return buf;
}

std::string_view stripKernelStamp(std::string_view message)
{
    std::optional<double> uptime;
    std::string time;
    return bracketStamp(message, uptime, time);
}

KernelLogLine splitKernelLogLine(std::string_view s)
{
    KernelLogLine out;
    if (auto rest = facilityPrefix(s, out.fromKernel)) s = *rest;
    const size_t before = s.size();
    s = bracketStamp(s, out.uptime, out.time);
    if (s.size() != before) {
        // journalctl -o short-monotonic: "[ 1234.567890] host kernel: message"; else dmesg.
        const std::string_view afterHost = skipToken(s);
        const std::string_view host = s.substr(0, s.find(' '));
        if (!host.empty() && host.find(':') == std::string_view::npos && afterHost.substr(0, 8) == "kernel: ")
            s = skipToken(afterHost);
        out.message = s;
        return out;
    }
    if (s.size() >= 19 && isDigit(s[0]) && s[4] == '-' && s[7] == '-' && (s[10] == 'T' || s[10] == ' ') &&
        s[13] == ':' && s[16] == ':') {
        // journalctl -o short-iso / short-iso-precise, rsyslog's RFC 3339 stamps.
        const size_t end = s.find(' ', 11);
        if (end == std::string_view::npos || s[10] == ' ') {
            // "2026-12-01 10:00:00 ...": not a syslog stamp we know; the whole line is the message.
            out.message = s;
            return out;
        }
        out.time = validUtf8(s.substr(0, end), 64);
        s = syslogHeader(s.substr(end + 1), out.fromKernel);
    } else if (s.size() >= 16 && monthIndex(s.substr(0, 3)) >= 0 && s[3] == ' ' && s[9] == ':' &&
               s[12] == ':') {
        // "Dec  1 10:00:00 host kernel: ..." (syslog, journalctl's short format)
        size_t i = 15;
        while (i < s.size() && (isDigit(s[i]) || s[i] == '.')) ++i;  // short-precise
        out.time = validUtf8(s.substr(0, i), 64);
        s = syslogHeader(s.substr(i < s.size() ? i + 1 : i), out.fromKernel);
    } else {
        out.message = s;  // dmesg -t, or any other text: the kernel's ring buffer
        return out;
    }
    s = bracketStamp(s, out.uptime, out.time);
    out.message = s;
    return out;
}

}  // namespace faultline
