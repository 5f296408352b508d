#include "LedgerTimeline.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "../Text.h"
#include "../replay/Statistics.h"
#include "Ledger.h"
#include "LedgerSlots.h"

namespace faultline {
namespace {

// A WHERE clause over a table's serial, uuid, host and bus_id columns naming one GPU, with its
// parameters numbered from $1.
struct GpuWhere {
    std::string sql;
    std::vector<SqlValue> params;
};

std::string placeholder(std::vector<SqlValue>& params, SqlValue v)
{
    params.push_back(std::move(v));
    return "$" + std::to_string(params.size());
}

std::string inList(std::vector<SqlValue>& params, const std::set<std::string>& values)
{
    std::string s;
    for (const std::string& v : values) s += (s.empty() ? "" : ", ") + placeholder(params, v);
    return s;
}

GpuWhere gpuWhere(const LedgerTimeline& t, bool withPlaces, const std::string& prefix = "")
{
    GpuWhere w;
    std::vector<std::string> terms;
    if (!t.serials.empty()) terms.push_back(prefix + "serial IN (" + inList(w.params, t.serials) + ")");
    if (!t.uuids.empty()) terms.push_back(prefix + "uuid IN (" + inList(w.params, t.uuids) + ")");
    if (withPlaces) {
        std::vector<std::string> places;
        for (const RuleLocation& l : t.locations)
            if (!l.host.empty() && !l.busId.empty())
                places.push_back("(" + prefix + "host = " + placeholder(w.params, l.host) + " AND " + prefix +
                                 "bus_id = " + placeholder(w.params, l.busId) + ")");
        if (!places.empty())
            terms.push_back("(" + prefix + "serial = '' AND " + prefix + "uuid = '' AND (" +
                            joinText(places, " OR ") + "))");
    }
    w.sql = terms.empty() ? "1 = 0" : "(" + joinText(terms, " OR ") + ")";
    return w;
}

std::string countText(const SqlValue& v)
{
    return sqlIsNull(v) ? std::string("n/a") : std::to_string(sqlInt(v));
}

nlohmann::json optionalInt(const SqlValue& v)
{
    return sqlIsNull(v) ? nlohmann::json() : nlohmann::json(sqlInt(v));
}

Status loadIdentities(LedgerEngine& engine, LedgerTimeline& t)
{
    // Serials and UUIDs seen together with the key, then every identity row of them.
    auto first = runSql(engine, "SELECT serial, uuid FROM gpu_identities WHERE serial = $1 OR uuid = $2",
                        {t.key, ledgerUuid(t.key)});
    if (!first) return first.error();
    for (const SqlRow& r : *first) {
        if (!sqlText(r[0]).empty()) t.serials.insert(sqlText(r[0]));
        if (!sqlText(r[1]).empty()) t.uuids.insert(sqlText(r[1]));
    }
    if (t.serials.empty() && t.uuids.empty()) {
        // Not in the identities: rows may still name it directly.
        t.serials.insert(t.key);
        t.uuids.insert(ledgerUuid(t.key));
    }
    GpuWhere w = gpuWhere(t, false);
    auto rows = runSql(
        engine,
        "SELECT host, bus_id, product, vbios, driver, first_seen, last_seen, serial, uuid, source FROM "
        "gpu_identities WHERE " +
            w.sql + " ORDER BY first_seen, id",
        w.params);
    if (!rows) return rows.error();
    std::map<std::pair<std::string, std::string>, size_t> place;
    for (const SqlRow& r : *rows) {
        const std::string host = sqlText(r[0]), bus = sqlText(r[1]);
        auto [it, fresh] = place.emplace(std::make_pair(host, bus), t.locations.size());
        if (fresh) {
            t.locations.push_back({host, bus, sqlText(r[5]), sqlText(r[6])});
        } else {
            RuleLocation& l = t.locations[it->second];
            l.firstSeen = std::min(l.firstSeen, sqlText(r[5]));
            l.lastSeen = std::max(l.lastSeen, sqlText(r[6]));
        }
        t.entries.push_back({sqlText(r[5]),
                             "identity",
                             "seen on " + host + " " + bus + ": " + sqlText(r[2]) + ", VBIOS " +
                                 sqlText(r[3]) + ", driver " + sqlText(r[4]) + " (serial " + sqlText(r[7]) +
                                 ", uuid " + sqlText(r[8]) + "; until " + sqlText(r[6]) + ")",
                             {{"host", host},
                              {"bus_id", bus},
                              {"product", sqlText(r[2])},
                              {"vbios", sqlText(r[3])},
                              {"driver", sqlText(r[4])},
                              {"serial", sqlText(r[7])},
                              {"uuid", sqlText(r[8])},
                              {"first_seen", sqlText(r[5])},
                              {"last_seen", sqlText(r[6])},
                              {"source", sqlText(r[9])}}});
    }
    return {};
}

}  // namespace

Result<LedgerTimeline> ledgerTimeline(LedgerEngine& engine, const std::string& key, TrendWindow window)
{
    auto found = findLedgerTimeline(engine, key, window);
    if (!found) return found.error();
    if (!*found)
        return Error{engine.location() + ": no GPU with serial or UUID '" + key + "'", ErrorCode::Usage};
    return std::move(**found);
}

Result<std::optional<LedgerTimeline>> findLedgerTimeline(LedgerEngine& engine, const std::string& key,
                                                         TrendWindow window)
{
    LedgerTimeline t;
    t.key = key;
    t.location = engine.location();
    if (key.empty()) return Error{"ledger show: an empty serial or UUID", ErrorCode::Usage};
    if (Status s = loadIdentities(engine, t); !s) return s.error();
    RuleInputs rules;
    rules.locations = t.locations;

    // Rows naming no GPU, found by place, are its own only while it held that slot (LedgerSlots.h).
    auto tenancy = loadSlotTenancy(engine, t.locations, t.serials, t.uuids);
    if (!tenancy) return tenancy.error();
    auto ownRow = [&](const SqlValue& host, const SqlValue& bus, const SqlValue& at, const SqlValue& serial,
                      const SqlValue& uuid) {
        if (!sqlText(serial).empty() || !sqlText(uuid).empty()) return true;
        return tenancy->holds(sqlText(host), sqlText(bus),
                              sqlIsNull(at) ? std::nullopt : std::optional<std::string>(sqlText(at)));
    };

    GpuWhere w = gpuWhere(t, true);
    auto health = runSql(
        engine,
        "SELECT COALESCE(at, recorded_at), host, bus_id, flags, ecc_corrected, ecc_uncorrected, "
        "remapped_correctable, remapped_uncorrectable, retired_single_bit, retired_double_bit, "
        "recovery_action, recommendation, source, boot_id, at, serial, uuid FROM health_snapshots WHERE " +
            w.sql,
        w.params);
    if (!health) return health.error();
    for (const SqlRow& r : *health) {
        if (!ownRow(r[1], r[2], r[14], r[15], r[16])) continue;
        const std::string rec = sqlText(r[11]);
        t.entries.push_back({sqlText(r[0]),
                             "health",
                             "health on " + sqlText(r[1]) + " " + sqlText(r[2]) + ": flags [" +
                                 sqlText(r[3]) + "], ECC corrected " + countText(r[4]) + " uncorrected " +
                                 countText(r[5]) + ", remapped rows " + countText(r[6]) + "/" +
                                 countText(r[7]) + ", recommendation " + rec,
                             {{"host", sqlText(r[1])},
                              {"bus_id", sqlText(r[2])},
                              {"flags", sqlText(r[3])},
                              {"ecc_corrected_aggregate", optionalInt(r[4])},
                              {"ecc_uncorrected_aggregate", optionalInt(r[5])},
                              {"remapped_rows_correctable", optionalInt(r[6])},
                              {"remapped_rows_uncorrectable", optionalInt(r[7])},
                              {"retired_pages_single_bit", optionalInt(r[8])},
                              {"retired_pages_double_bit", optionalInt(r[9])},
                              {"recovery_action", sqlText(r[10])},
                              {"recommendation", rec},
                              {"source", sqlText(r[12])},
                              {"boot_id", sqlText(r[13])}}});
        if (rec == "reset" || rec == "drain" || rec == "rma_candidate")
            rules.failures.push_back({sqlText(r[0]), sqlText(r[1]), "health: " + rec});
    }

    auto events = runSql(
        engine,
        "SELECT COALESCE(at, recorded_at), host, bus_id, kind, code, name, message, action, time_text, "
        "uptime_s, boot_id, source, at, serial, uuid FROM xid_events WHERE " +
            w.sql,
        w.params);
    if (!events) return events.error();
    for (const SqlRow& r : *events) {
        if (!ownRow(r[1], r[2], r[12], r[13], r[14])) continue;
        const std::string kind = sqlText(r[3]);
        const std::string what =
            kind == "reset" ? std::string("GPU reset") : (kind == "sxid" ? "SXid " : "Xid ") + sqlText(r[4]);
        t.entries.push_back(
            {sqlText(r[0]),
             kind,
             (kind == "reset" ? what : what + " (" + sqlText(r[5]) + ")") + " on " + sqlText(r[1]) + " " +
                 sqlText(r[2]) + ": " + sqlText(r[6]) + " [" + sqlText(r[7]) + "]",
             {{"host", sqlText(r[1])},
              {"bus_id", sqlText(r[2])},
              {"xid", sqlInt(r[4])},
              {"name", sqlText(r[5])},
              {"message", sqlText(r[6])},
              {"action", sqlText(r[7])},
              {"time", sqlText(r[8])},
              {"uptime_s", sqlIsNull(r[9]) ? nlohmann::json() : nlohmann::json(sqlReal(r[9]))},
              {"boot_id", sqlText(r[10])},
              {"source", sqlText(r[11])}}});
        const std::string action = sqlText(r[7]);
        if (action == "reset" || action == "drain" || action == "rma_candidate")
            rules.failures.push_back({sqlText(r[0]), sqlText(r[1]), what + " (" + sqlText(r[5]) + ")"});
    }

    std::set<std::string> hosts;
    for (const RuleLocation& l : t.locations)
        if (!l.host.empty()) hosts.insert(l.host);
    if (!hosts.empty()) {
        std::vector<SqlValue> params;
        const std::string list = inList(params, hosts);
        auto boots =
            runSql(engine,
                   "SELECT at, host, boot_id, time_text, source, recorded_at FROM boots WHERE host IN (" +
                       list + ")",
                   params);
        if (!boots) return boots.error();
        for (const SqlRow& r : *boots) {
            const std::string at = sqlText(r[0]);
            t.entries.push_back(
                {at.empty() ? sqlText(r[5]) : at,
                 "boot",
                 "boot of " + sqlText(r[1]) + (sqlText(r[2]).empty() ? "" : " (" + sqlText(r[2]) + ")"),
                 {{"host", sqlText(r[1])},
                  {"boot_id", sqlText(r[2])},
                  {"time", sqlText(r[3])},
                  {"source", sqlText(r[4])}}});
            if (!at.empty()) rules.boots.push_back({at, sqlText(r[1]), sqlText(r[2])});
        }
    }

    GpuWhere tw = gpuWhere(t, false, "t.");
    auto campaigns =
        runSql(engine,
               "SELECT c.id, COALESCE(c.at, c.recorded_at), c.trace, c.trace_digest, c.fleet, t.id, "
               "t.target, t.host, t.bus_id, t.verdict, t.runs, t.failures, t.rate, t.ci_low, t.ci_high, "
               "t.explanation, c.file, c.at FROM campaign_targets t JOIN campaigns c ON c.id = "
               "t.campaign_id WHERE " +
                   tw.sql,
               tw.params);
    if (!campaigns) return campaigns.error();
    for (const SqlRow& r : *campaigns) {
        auto verdict = parseVerdict(sqlText(r[9]));
        if (!verdict)
            return Error{engine.location() + ": campaign " + sqlText(r[0]) + " has verdict '" +
                             sqlText(r[9]) + "', which this Faultline does not know",
                         ErrorCode::Format};
        const RateInterval rate{sqlReal(r[12]), sqlReal(r[13]), sqlReal(r[14])};
        auto ops =
            runSql(engine,
                   "SELECT op_index, op, name, runs, failures, rate, ci_low, ci_high FROM campaign_op_rates "
                   "WHERE campaign_target_id = $1 ORDER BY op_index",
                   {sqlInt(r[5])});
        if (!ops) return ops.error();
        nlohmann::json opRates = nlohmann::json::array();
        for (const SqlRow& o : *ops)
            opRates.push_back({{"op_index", sqlInt(o[0])},
                               {"op", sqlText(o[1])},
                               {"name", sqlText(o[2])},
                               {"runs", sqlInt(o[3])},
                               {"failures", sqlInt(o[4])},
                               {"rate", sqlReal(o[5])},
                               {"ci", {sqlReal(o[6]), sqlReal(o[7])}}});
        t.entries.push_back({sqlText(r[1]),
                             "campaign",
                             std::string(sqlInt(r[4]) ? "fleet campaign " : "campaign ") + sqlText(r[0]) +
                                 " of " + sqlText(r[2]) + " on " + sqlText(r[7]) + " " + sqlText(r[6]) +
                                 ": " + nameOf(*verdict) + ", " + std::to_string(sqlInt(r[11])) + "/" +
                                 std::to_string(sqlInt(r[10])) + " failed, " + rateText(rate),
                             {{"campaign", sqlInt(r[0])},
                              {"trace", sqlText(r[2])},
                              {"trace_digest", sqlText(r[3])},
                              {"fleet", sqlInt(r[4]) != 0},
                              {"target", sqlText(r[6])},
                              {"host", sqlText(r[7])},
                              {"bus_id", sqlText(r[8])},
                              {"verdict", nameOf(*verdict)},
                              {"runs", sqlInt(r[10])},
                              {"failures", sqlInt(r[11])},
                              {"rate", rate.rate},
                              {"ci", {rate.low, rate.high}},
                              {"explanation", sqlText(r[15])},
                              {"file", sqlText(r[16])},
                              {"ops", opRates}}});
        rules.campaigns.push_back({sqlInt(r[0]), sqlText(r[17]), sqlText(r[6]), sqlText(r[7]), *verdict,
                                   static_cast<uint64_t>(sqlInt(r[10])), static_cast<uint64_t>(sqlInt(r[11])),
                                   rate.rate, rate.low, rate.high});
    }

    GpuWhere ew = gpuWhere(t, false);
    auto bundles =
        runSql(engine,
               "SELECT COALESCE(at, recorded_at), case_id, manifest_digest, intact, path, host, bus_id FROM "
               "evidence_bundles WHERE " +
                   ew.sql,
               ew.params);
    if (!bundles) return bundles.error();
    for (const SqlRow& r : *bundles)
        t.entries.push_back({sqlText(r[0]),
                             "evidence",
                             "evidence bundle, case " + sqlText(r[1]) +
                                 (sqlInt(r[3]) ? " (intact)" : " (NOT intact)") + ": " + sqlText(r[4]),
                             {{"case_id", sqlText(r[1])},
                              {"manifest_sha256", sqlText(r[2])},
                              {"intact", sqlInt(r[3]) != 0},
                              {"path", sqlText(r[4])},
                              {"host", sqlText(r[5])},
                              {"bus_id", sqlText(r[6])}}});

    if (t.entries.empty()) return std::optional<LedgerTimeline>();
    std::stable_sort(t.entries.begin(), t.entries.end(),
                     [](const TimelineEntry& a, const TimelineEntry& b) { return a.at < b.at; });
    t.findings = applyLedgerRules(rules);
    t.trends = ledgerTrends(t.entries, window);
    return std::optional<LedgerTimeline>(std::move(t));
}

nlohmann::json ledgerTimelineJson(const LedgerTimeline& t)
{
    nlohmann::json locations = nlohmann::json::array();
    for (const RuleLocation& l : t.locations)
        locations.push_back(
            {{"host", l.host}, {"bus_id", l.busId}, {"first_seen", l.firstSeen}, {"last_seen", l.lastSeen}});
    nlohmann::json entries = nlohmann::json::array();
    for (const TimelineEntry& e : t.entries) {
        nlohmann::json j = {{"at", e.at}, {"kind", e.kind}, {"summary", e.summary}};
        j.update(e.detail);
        entries.push_back(std::move(j));
    }
    nlohmann::json rules = nlohmann::json::array();
    for (const RuleFinding& f : t.findings) rules.push_back(ruleFindingJson(f));
    return {{"format", "faultline-ledger-timeline"},
            {"version", 1},
            {"ledger", t.location},
            {"key", t.key},
            {"serials", t.serials},
            {"uuids", t.uuids},
            {"locations", locations},
            {"timeline", entries},
            {"rules", rules},
            {"trends", ledgerTrendsJson(t.trends)}};
}

std::string ledgerTimelineText(const LedgerTimeline& t)
{
    std::ostringstream out;
    out << "GPU " << printableText(t.key) << " (serials "
        << printableText(joinText({t.serials.begin(), t.serials.end()})) << "; uuids "
        << printableText(joinText({t.uuids.begin(), t.uuids.end()})) << ")\n";
    for (const TimelineEntry& e : t.entries)
        out << "  " << printableText(e.at) << "  " << e.kind << "  " << printableText(e.summary) << "\n";
    out << ledgerTrendsText(t.trends);
    if (t.findings.empty()) out << "rules: nothing to conclude\n";
    for (const RuleFinding& f : t.findings)
        out << "rule: " << f.conclusion << ": " << printableText(f.reason) << "\n";
    return out.str();
}

}  // namespace faultline
