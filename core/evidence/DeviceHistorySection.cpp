#include "DeviceHistorySection.h"

#include <sstream>

#include "../replay/Statistics.h"
#include "ReportText.h"

namespace faultline {
namespace {

using json = nlohmann::json;
using report_text::cell;
using report_text::field;
using report_text::text;

// Campaigns and per-op lines shown in the report; case.json holds them all.
constexpr size_t kMaxCampaignRows = 100, kMaxOpRows = 200;

const json& member(const json& j, const char* key)
{
    static const json null;
    if (!j.is_object()) return null;
    auto it = j.find(key);
    return it == j.end() ? null : *it;
}

const json& arrayOf(const json& j, const char* key)
{
    static const json empty = json::array();
    const json& m = member(j, key);
    return m.is_array() ? m : empty;
}

double number(const json& j, const char* key)
{
    const json& m = member(j, key);
    return m.is_number() ? m.get<double>() : 0.0;
}

// Two table cells, "3/200 | 1.5% [0.5%, 4.3%]", from {runs, failures, rate, ci: [low, high]}.
std::string rateCells(const json& r)
{
    const json& ci = member(r, "ci");
    RateInterval rate{number(r, "rate"), 0, 1};
    if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number()) {
        rate.low = ci[0].get<double>();
        rate.high = ci[1].get<double>();
    }
    return cell(field(r, "failures")) + "/" + cell(field(r, "runs")) + " | " + rateText(rate);
}

void campaignsPart(std::ostringstream& out, const json& campaigns)
{
    if (campaigns.empty()) {
        out << "No campaign of this GPU is in the ledger.\n\n";
        return;
    }
    out << "Campaigns (rates with 95% Wilson intervals):\n\n"
           "| ended | campaign | trace | target | host | verdict | failed runs | rate (95% CI) |\n"
           "|---|---|---|---|---|---|---|---|\n";
    size_t shown = 0;
    for (const json& c : campaigns) {
        if (shown++ == kMaxCampaignRows) break;
        out << "| " << cell(field(c, "at")) << " | " << field(c, "campaign")
            << (member(c, "fleet").is_boolean() && c["fleet"].get<bool>() ? " (fleet)" : "") << " | "
            << cell(field(c, "trace")) << " | " << cell(field(c, "target")) << " | " << cell(field(c, "host"))
            << " | " << cell(field(c, "verdict")) << " | " << rateCells(c) << " |\n";
    }
    if (campaigns.size() > kMaxCampaignRows)
        out << "\n" << campaigns.size() - kMaxCampaignRows << " more campaign(s) are in `case.json`.\n";
    out << "\nPer-op rates:\n\n| campaign | op | failed runs | rate (95% CI) |\n|---|---|---|---|\n";
    size_t ops = 0, left = 0;
    for (const json& c : campaigns)
        for (const json& o : arrayOf(c, "ops")) {
            if (ops == kMaxOpRows) {
                ++left;
                continue;
            }
            ++ops;
            out << "| " << field(c, "campaign") << " | " << field(o, "op_index") << " "
                << cell(field(o, "op")) << " (" << cell(field(o, "name")) << ") | " << rateCells(o) << " |\n";
        }
    if (left) out << "\n" << left << " more per-op line(s) are in `case.json`.\n";
    out << "\n";
}

void trendsPart(std::ostringstream& out, const json& trends)
{
    const json& rates = arrayOf(trends, "failure_rate");
    if (!rates.empty()) {
        out << "Failure rate per " << field(trends, "window")
            << ":\n\n| window | campaigns | failed runs | rate (95% CI) |\n|---|---|---|---|\n";
        for (const json& r : rates)
            out << "| " << cell(field(r, "window")) << " | " << field(r, "campaigns") << " | " << rateCells(r)
                << " |\n";
        out << "\n";
    }
    const json& counters = arrayOf(trends, "counters");
    if (!counters.empty()) {
        out << "Counters' growth:\n\n| counter | first | last | delta | per day |\n|---|---|---|---|---|\n";
        for (const json& g : counters)
            out << "| " << cell(field(g, "counter")) << " | " << field(member(g, "first"), "value") << " ("
                << cell(field(member(g, "first"), "at")) << ") | " << field(member(g, "last"), "value")
                << " (" << cell(field(member(g, "last"), "at")) << ") | " << field(g, "delta") << " | "
                << field(g, "per_day") << " |\n";
        out << "\n";
    }
}

}  // namespace

std::string deviceHistoryMarkdown(const json& caseJson)
{
    const json& h = member(caseJson, "ledger_history");
    if (!h.is_object()) return {};
    std::ostringstream out;
    out << "## Device history\n\n";
    if (!(member(h, "found").is_boolean() && h["found"].get<bool>())) {
        out << "The ledger `" << field(h, "ledger") << "` holds no history of this GPU (serial "
            << field(h, "serial") << ", UUID `" << field(h, "uuid") << "`): " << field(h, "reason")
            << ".\n\n";
        return out.str();
    }
    std::string serials, uuids;
    for (const json& s : arrayOf(h, "serials")) serials += (serials.empty() ? "" : ", ") + text(s);
    for (const json& u : arrayOf(h, "uuids")) uuids += (uuids.empty() ? "" : ", ") + text(u);
    out << "From the ledger `" << field(h, "ledger") << "`, looked up by the suspect's "
        << field(h, "looked_up_by") << ", as it stood before this bundle was recorded: only rows of this GPU "
        << "(serials " << (serials.empty() ? "—" : serials) << "; UUIDs " << (uuids.empty() ? "—" : uuids)
        << ") and events that name no GPU but a slot it was seen in. First seen " << field(h, "first_seen")
        << ", last seen " << field(h, "last_seen") << ".\n\n";
    const json& locations = arrayOf(h, "locations");
    if (!locations.empty()) {
        out << "| host | bus id | first seen | last seen |\n|---|---|---|---|\n";
        for (const json& l : locations)
            out << "| " << cell(field(l, "host")) << " | " << cell(field(l, "bus_id")) << " | "
                << cell(field(l, "first_seen")) << " | " << cell(field(l, "last_seen")) << " |\n";
        out << "\n";
    }
    const json& events = member(h, "events");
    out << field(events, "xid") << " Xid and " << field(events, "sxid") << " SXid event(s), "
        << field(h, "resets") << " GPU reset(s), " << field(h, "reboots") << " reboot(s) of its hosts, "
        << field(h, "health_snapshots") << " health snapshot(s).\n\n";
    const json& summary = arrayOf(h, "event_summary");
    if (!summary.empty()) {
        out << "| event | count | first | last | action |\n|---|---|---|---|---|\n";
        for (const json& e : summary)
            out << "| " << (field(e, "kind") == "sxid" ? "SXid " : "Xid ") << field(e, "code") << " ("
                << cell(field(e, "name")) << ") | " << field(e, "count") << " | " << cell(field(e, "first"))
                << " | " << cell(field(e, "last")) << " | " << cell(field(e, "action")) << " |\n";
        out << "\n";
    }
    campaignsPart(out, arrayOf(h, "campaigns"));
    const json& bundles = arrayOf(h, "evidence_bundles");
    if (!bundles.empty()) {
        out << "Earlier evidence bundles:\n\n";
        for (const json& b : bundles)
            out << "- case " << field(b, "case_id") << ", " << field(b, "at") << " (manifest SHA-256 "
                << field(b, "manifest_sha256") << ", intact: " << field(b, "intact") << ")\n";
        out << "\n";
    }
    const json& rules = arrayOf(h, "rules");
    if (rules.empty()) out << "The ledger's rules conclude nothing about this GPU.\n\n";
    for (const json& r : rules)
        out << "- **" << field(r, "conclusion") << "**: " << field(r, "reason") << "\n";
    if (!rules.empty()) out << "\n";
    trendsPart(out, member(h, "trends"));
    return out.str();
}

}  // namespace faultline
