#include "LedgerHistory.h"

#include <algorithm>
#include <map>
#include <set>

#include "Ledger.h"
#include "LedgerTimeline.h"

namespace faultline {
namespace {

using json = nlohmann::json;

json textOrNull(const std::string& s)
{
    return s.empty() ? json() : json(s);
}

std::string detailText(const json& detail, const char* key)
{
    auto it = detail.find(key);
    return it != detail.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Per kind and code: count, name, NVIDIA's action, first and last time.
json eventSummary(const std::vector<TimelineEntry>& entries)
{
    std::map<std::pair<std::string, int64_t>, json> byCode;
    for (const TimelineEntry& e : entries) {
        if (e.kind != "xid" && e.kind != "sxid") continue;
        const int64_t code = e.detail.value("xid", int64_t(0));
        json& s = byCode[{e.kind, code}];
        if (s.is_null())
            s = {{"kind", e.kind},
                 {"code", code},
                 {"name", detailText(e.detail, "name")},
                 {"action", detailText(e.detail, "action")},
                 {"count", 0},
                 {"first", e.at}};
        s["count"] = s["count"].get<int64_t>() + 1;
        s["last"] = e.at;
    }
    json out = json::array();
    for (auto& [key, s] : byCode) out.push_back(std::move(s));
    return out;
}

json historyJson(const LedgerTimeline& t, const std::string& serial, const std::string& uuid,
                 const std::string& lookedUpBy)
{
    std::set<std::string> serials, uuids;
    if (!serial.empty()) serials.insert(serial);
    if (!uuid.empty()) uuids.insert(ledgerUuid(uuid));
    std::string firstSeen, lastSeen;
    uint64_t xids = 0, sxids = 0, resets = 0, reboots = 0, snapshots = 0;
    json campaigns = json::array(), bundles = json::array();
    for (const TimelineEntry& e : t.entries) {
        if (e.kind == "boot") {
            ++reboots;  // of a host it was seen on: not a fact about the board alone
            continue;
        }
        if (!e.at.empty()) {
            if (firstSeen.empty() || e.at < firstSeen) firstSeen = e.at;
            if (lastSeen.empty() || e.at > lastSeen) lastSeen = e.at;
        }
        if (e.kind == "identity") {
            if (!detailText(e.detail, "serial").empty()) serials.insert(detailText(e.detail, "serial"));
            if (!detailText(e.detail, "uuid").empty()) uuids.insert(detailText(e.detail, "uuid"));
        } else if (e.kind == "xid") {
            ++xids;
        } else if (e.kind == "sxid") {
            ++sxids;
        } else if (e.kind == "reset") {
            ++resets;
        } else if (e.kind == "health") {
            ++snapshots;
        } else if (e.kind == "campaign") {
            json c = {{"at", e.at}};
            c.update(e.detail);
            campaigns.push_back(std::move(c));
        } else if (e.kind == "evidence") {
            bundles.push_back({{"at", e.at},
                               {"case_id", e.detail.value("case_id", json())},
                               {"manifest_sha256", e.detail.value("manifest_sha256", json())},
                               {"intact", e.detail.value("intact", json())}});
        }
    }
    json locations = json::array();
    for (const RuleLocation& l : t.locations)
        locations.push_back(
            {{"host", l.host}, {"bus_id", l.busId}, {"first_seen", l.firstSeen}, {"last_seen", l.lastSeen}});
    json rules = json::array();
    for (const RuleFinding& f : t.findings) rules.push_back(ruleFindingJson(f));
    return {{"version", kLedgerHistoryVersion},
            {"found", true},
            {"ledger", t.location},
            {"serial", textOrNull(serial)},
            {"uuid", textOrNull(uuid)},
            {"looked_up_by", lookedUpBy},
            {"serials", serials},
            {"uuids", uuids},
            {"first_seen", textOrNull(firstSeen)},
            {"last_seen", textOrNull(lastSeen)},
            {"locations", locations},
            {"events", {{"xid", xids}, {"sxid", sxids}}},
            {"event_summary", eventSummary(t.entries)},
            {"resets", resets},
            {"reboots", reboots},
            {"health_snapshots", snapshots},
            {"campaigns", campaigns},
            {"evidence_bundles", bundles},
            {"rules", rules},
            {"trends", ledgerTrendsJson(t.trends)}};
}

}  // namespace

Result<nlohmann::json> ledgerDeviceHistory(LedgerEngine& engine, const std::string& serial,
                                           const std::string& uuid)
{
    for (const auto& [key, by] : {std::pair{serial, "serial"}, std::pair{uuid, "uuid"}}) {
        if (key.empty()) continue;
        auto found = findLedgerTimeline(engine, key);
        if (!found) return found.error();
        if (*found) return historyJson(**found, serial, uuid, by);
    }
    return json{{"version", kLedgerHistoryVersion},
                {"found", false},
                {"ledger", engine.location()},
                {"serial", textOrNull(serial)},
                {"uuid", textOrNull(uuid)},
                {"reason", serial.empty() && uuid.empty()
                               ? "the suspect has no serial or UUID to look up (a bus id alone may name "
                                 "another board that sat in that slot)"
                               : "the ledger holds nothing about this GPU"}};
}

}  // namespace faultline
