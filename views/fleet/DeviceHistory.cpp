#include "views/fleet/DeviceHistory.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/ledger/Ledger.h"
#include "core/ledger/LedgerRules.h"
#include "core/ledger/LedgerTimeline.h"
#include "core/ledger/LedgerTrends.h"
#include "views/shell/ViewText.h"

namespace faultline::views {
namespace {

// The lane an entry of the timeline goes in (health snapshots with flags or a recommendation
// go in Flags as well as Health).
std::optional<HistoryLane> laneOf(const std::string& kind)
{
    if (kind == "identity") return HistoryLane::Identity;
    if (kind == "boot") return HistoryLane::Boot;
    if (kind == "reset") return HistoryLane::Reset;
    if (kind == "xid") return HistoryLane::Xid;
    if (kind == "sxid") return HistoryLane::SXid;
    if (kind == "health") return HistoryLane::Health;
    if (kind == "campaign") return HistoryLane::Campaign;
    if (kind == "evidence") return HistoryLane::Evidence;
    return std::nullopt;
}

bool flagged(const nlohmann::json& detail)
{
    const std::string flags = detail.value("flags", std::string());
    const std::string rec = detail.value("recommendation", std::string());
    return !flags.empty() || (!rec.empty() && rec != "none");
}

}  // namespace

QString historyLaneName(HistoryLane lane)
{
    switch (lane) {
        case HistoryLane::Identity:
            return QStringLiteral("Host / slot");
        case HistoryLane::Boot:
            return QStringLiteral("Reboots");
        case HistoryLane::Reset:
            return QStringLiteral("GPU resets");
        case HistoryLane::Xid:
            return QStringLiteral("Xid");
        case HistoryLane::SXid:
            return QStringLiteral("SXid");
        case HistoryLane::Health:
            return QStringLiteral("Health snapshots");
        case HistoryLane::Flags:
            return QStringLiteral("Health flags");
        case HistoryLane::Campaign:
            return QStringLiteral("Campaigns");
        case HistoryLane::Evidence:
            return QStringLiteral("Evidence bundles");
        case HistoryLane::Count:
            break;
    }
    return {};
}

bool historySeconds(const std::string& at, double& seconds)
{
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, n = 0;
    double s = 0;
    if (std::sscanf(at.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10) return false;
    const auto ymd = std::chrono::year{y} / std::chrono::month{unsigned(mo)} / std::chrono::day{unsigned(d)};
    if (!ymd.ok()) return false;
    size_t pos = 10;
    if (at.size() > pos && (at[pos] == 'T' || at[pos] == ' ')) {
        int m = 0;
        if (std::sscanf(at.c_str() + pos + 1, "%2d:%2d:%lf%n", &h, &mi, &s, &m) != 3) return false;
        if (h > 23 || mi > 59 || s < 0 || s >= 61) return false;
        pos += 1 + size_t(m);
    }
    double offset = 0;
    if (at.size() > pos && (at[pos] == '+' || at[pos] == '-')) {
        int oh = 0, om = 0;
        if (std::sscanf(at.c_str() + pos + 1, "%2d:%2d", &oh, &om) == 2)
            offset = (at[pos] == '+' ? 1 : -1) * (oh * 3600.0 + om * 60.0);
    }
    const auto days = std::chrono::sys_days(ymd).time_since_epoch().count();
    seconds = double(days) * 86400.0 + h * 3600.0 + mi * 60.0 + s - offset;
    return true;
}

DeviceHistory deviceHistoryFromTimeline(const LedgerTimeline& timeline)
{
    DeviceHistory h;
    h.key = qs(timeline.key);
    h.location = qs(timeline.location);
    for (const std::string& s : timeline.serials) h.serials << qs(s);
    for (const std::string& u : timeline.uuids) h.uuids << qs(u);
    h.entries = timeline.entries.size();
    bool any = false;
    std::map<std::string, HistoryCounter> counters;
    for (const TimelineEntry& e : timeline.entries) {
        const auto lane = laneOf(e.kind);
        double t = 0;
        if (!lane || !historySeconds(e.at, t)) {
            ++h.undated;
            continue;
        }
        h.first = any ? std::min(h.first, t) : t;
        h.last = any ? std::max(h.last, t) : t;
        any = true;
        const QString summary = qs(e.summary);
        h.lanes[size_t(*lane)].push_back({t, summary});
        if (*lane == HistoryLane::Health) {
            if (flagged(e.detail)) h.lanes[size_t(HistoryLane::Flags)].push_back({t, summary});
            for (const std::string& name : trendCounterNames()) {
                auto it = e.detail.find(name);
                if (it == e.detail.end() || !it->is_number()) continue;
                HistoryCounter& c = counters[name];
                c.name = qs(name);
                const double value = it->get<double>();
                // Drawn as steps: a snapshot that repeats the value before it draws nothing new, so
                // only the snapshots where the counter changed are kept, and the last one.
                if (c.value.size() >= 2 && c.value.back() == value && c.value[c.value.size() - 2] == value) {
                    c.t.back() = t;
                } else {
                    c.t.push_back(t);
                    c.value.push_back(value);
                }
            }
        }
        if (*lane == HistoryLane::Campaign) {
            HistoryRate r;
            r.t = t;
            r.rate = e.detail.value("rate", 0.0);
            const auto ci = e.detail.value("ci", nlohmann::json::array());
            r.low = ci.size() == 2 ? ci[0].get<double>() : r.rate;
            r.high = ci.size() == 2 ? ci[1].get<double>() : r.rate;
            r.runs = e.detail.value("runs", quint64(0));
            r.failures = e.detail.value("failures", quint64(0));
            const std::string verdict = e.detail.value("verdict", std::string());
            const auto parsed = parseVerdict(verdict);
            r.verdict = qs(verdict);
            r.failing = parsed && sdcPositive(*parsed);
            r.summary = summary;
            h.rates.push_back(std::move(r));
        }
    }
    // The timeline is in time order; entries of one time keep their order.
    for (auto& lane : h.lanes)
        std::stable_sort(lane.begin(), lane.end(),
                         [](const HistoryMark& a, const HistoryMark& b) { return a.t < b.t; });
    for (const std::string& name : trendCounterNames())
        if (auto it = counters.find(name); it != counters.end()) h.counters.push_back(std::move(it->second));
    for (const RuleFinding& f : timeline.findings)
        h.findings.push_back({qs(f.rule), qs(f.conclusion), qs(f.reason)});
    return h;
}

DeviceHistory loadDeviceHistoryOnWorker(const QString& ledgerSpec, const QString& key)
{
    DeviceHistory failed;
    failed.key = key;
    auto ledger = Ledger::openExisting(ledgerSpec.toStdString());
    if (!ledger) {
        failed.error = qs(ledger.message());
        return failed;
    }
    failed.location = qs(ledger->location());
    auto timeline = ledgerTimeline(ledger->engine(), key.trimmed().toStdString());
    if (!timeline) {
        failed.error = qs(timeline.message());
        return failed;
    }
    return deviceHistoryFromTimeline(*timeline);
}

}  // namespace faultline::views
