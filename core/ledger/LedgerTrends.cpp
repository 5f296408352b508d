#include "LedgerTrends.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>

#include "LedgerTime.h"
#include "LedgerTimeline.h"

namespace faultline {
namespace {

std::string dateText(int year, int month, int day)
{
    char buf[48];  // room for any int, so the compiler sees no truncation
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", year, month, day);
    return buf;
}

std::string dateOf(std::time_t t)
{
    std::tm tm{};
    gmtime_r(&t, &tm);
    return dateText(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

nlohmann::json ciJson(const RateInterval& r)
{
    return {r.low, r.high};
}

nlohmann::json pointJson(const CounterPoint& p)
{
    return {{"at", p.at}, {"value", p.value}};
}

std::string numberText(double v)
{
    std::ostringstream s;
    s.precision(3);
    s << std::fixed << v;
    return s.str();
}

}  // namespace

std::optional<TrendWindow> parseTrendWindow(const std::string& word)
{
    if (word == "week") return TrendWindow::Week;
    if (word == "month") return TrendWindow::Month;
    return std::nullopt;
}

std::string nameOf(TrendWindow w)
{
    return w == TrendWindow::Week ? "week" : "month";
}

std::optional<TrendWindowSpan> trendWindowOf(const std::string& at, TrendWindow w)
{
    if (!isIsoDate(at)) return std::nullopt;
    const int year = std::stoi(at.substr(0, 4)), month = std::stoi(at.substr(5, 2)),
              day = std::stoi(at.substr(8, 2));
    if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
    if (w == TrendWindow::Month) {
        const int nextYear = month == 12 ? year + 1 : year, nextMonth = month == 12 ? 1 : month + 1;
        return TrendWindowSpan{at.substr(0, 7), dateText(year, month, 1), dateText(nextYear, nextMonth, 1)};
    }
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = 12;  // noon: whole days either way
    const std::time_t noon = timegm(&tm);
    std::tm norm{};
    gmtime_r(&noon, &norm);
    const int sinceMonday = (norm.tm_wday + 6) % 7;
    const std::time_t monday = noon - std::time_t(sinceMonday) * 86400;
    const std::string start = dateOf(monday);
    return TrendWindowSpan{start, start, dateOf(monday + 7 * 86400)};
}

const std::vector<std::string>& trendCounterNames()
{
    static const std::vector<std::string> names = {"ecc_corrected_aggregate",   "ecc_uncorrected_aggregate",
                                                   "remapped_rows_correctable", "remapped_rows_uncorrectable",
                                                   "retired_pages_single_bit",  "retired_pages_double_bit"};
    return names;
}

LedgerTrends ledgerTrends(const std::vector<TimelineEntry>& entries, TrendWindow window)
{
    LedgerTrends t;
    t.window = window;
    std::map<std::string, size_t> windowAt;  // label -> index in failureRate
    std::map<std::string, CounterGrowth> growth;
    for (const TimelineEntry& e : entries) {
        if (e.kind == "campaign") {
            auto span = trendWindowOf(e.at, window);
            if (!span) continue;
            auto [it, fresh] = windowAt.emplace(span->label, t.failureRate.size());
            if (fresh) {
                TrendRate added;
                added.window = *span;
                t.failureRate.push_back(std::move(added));
            }
            TrendRate& r = t.failureRate[it->second];
            r.campaigns += 1;
            r.runs += e.detail.value("runs", uint64_t(0));
            r.failures += e.detail.value("failures", uint64_t(0));
            for (const nlohmann::json& o : e.detail.value("ops", nlohmann::json::array())) {
                const std::string op = o.value("op", ""), name = o.value("name", "");
                auto found = std::find_if(r.ops.begin(), r.ops.end(),
                                          [&](const TrendOpRate& x) { return x.op == op && x.name == name; });
                if (found == r.ops.end()) {
                    TrendOpRate added;
                    added.op = op;
                    added.name = name;
                    found = r.ops.insert(r.ops.end(), std::move(added));
                }
                found->runs += o.value("runs", uint64_t(0));
                found->failures += o.value("failures", uint64_t(0));
            }
        } else if (e.kind == "health") {
            for (const std::string& name : trendCounterNames()) {
                const auto v = e.detail.find(name);
                if (v == e.detail.end() || !v->is_number_integer()) continue;
                CounterGrowth& g = growth[name];
                const CounterPoint p{e.at, v->get<int64_t>()};
                if (g.snapshots == 0) g.first = p;
                g.last = p;
                g.snapshots += 1;
            }
        }
    }
    std::sort(t.failureRate.begin(), t.failureRate.end(),
              [](const TrendRate& a, const TrendRate& b) { return a.window.start < b.window.start; });
    for (TrendRate& r : t.failureRate) {
        r.rate = wilsonInterval(r.failures, r.runs);
        for (TrendOpRate& o : r.ops) o.rate = wilsonInterval(o.failures, o.runs);
    }
    for (const std::string& name : trendCounterNames()) {
        auto it = growth.find(name);
        if (it == growth.end()) continue;
        CounterGrowth g = it->second;
        g.counter = name;
        g.delta = g.last.value - g.first.value;
        g.days = daysBetween(g.first.at, g.last.at);
        if (g.days && *g.days > 0) g.perDay = double(g.delta) / *g.days;
        t.counters.push_back(std::move(g));
    }
    return t;
}

nlohmann::json ledgerTrendsJson(const LedgerTrends& t)
{
    nlohmann::json rates = nlohmann::json::array();
    for (const TrendRate& r : t.failureRate) {
        nlohmann::json ops = nlohmann::json::array();
        for (const TrendOpRate& o : r.ops)
            ops.push_back({{"op", o.op},
                           {"name", o.name},
                           {"runs", o.runs},
                           {"failures", o.failures},
                           {"rate", o.rate.rate},
                           {"ci", ciJson(o.rate)}});
        rates.push_back({{"window", r.window.label},
                         {"start", r.window.start},
                         {"end", r.window.end},
                         {"campaigns", r.campaigns},
                         {"runs", r.runs},
                         {"failures", r.failures},
                         {"rate", r.rate.rate},
                         {"ci", ciJson(r.rate)},
                         {"ops", ops}});
    }
    nlohmann::json counters = nlohmann::json::array();
    for (const CounterGrowth& g : t.counters)
        counters.push_back({{"counter", g.counter},
                            {"snapshots", g.snapshots},
                            {"first", pointJson(g.first)},
                            {"last", pointJson(g.last)},
                            {"delta", g.delta},
                            {"days", g.days ? nlohmann::json(*g.days) : nlohmann::json()},
                            {"per_day", g.perDay ? nlohmann::json(*g.perDay) : nlohmann::json()}});
    return {{"window", nameOf(t.window)}, {"failure_rate", rates}, {"counters", counters}};
}

std::string ledgerTrendsText(const LedgerTrends& t)
{
    std::ostringstream out;
    for (const TrendRate& r : t.failureRate)
        out << "trend: " << nameOf(t.window) << " " << r.window.label << ": " << r.failures << "/" << r.runs
            << " failed in " << r.campaigns << " campaign(s), " << rateText(r.rate) << "\n";
    for (const CounterGrowth& g : t.counters) {
        out << "counter: " << g.counter << " " << g.first.value << " -> " << g.last.value << " ("
            << (g.delta >= 0 ? "+" : "") << g.delta << " over " << g.snapshots << " snapshot(s)";
        if (g.days) out << ", " << numberText(*g.days) << " days";
        if (g.perDay) out << ", " << numberText(*g.perDay) << "/day";
        out << ")\n";
    }
    return out.str();
}

}  // namespace faultline
