#include "LedgerRules.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "../replay/Statistics.h"
#include "LedgerTime.h"

namespace faultline {
namespace {

std::string campaignText(const RuleCampaign& c)
{
    return "campaign " + std::to_string(c.campaignId) + " (" + (c.at.empty() ? "time unknown" : c.at) + ", " +
           c.target + ": " + nameOf(c.verdict) + ", " + std::to_string(c.failures) + "/" +
           std::to_string(c.runs) + " failed, " + rateText({c.rate, c.low, c.high}) + ")";
}

}  // namespace

bool sdcPositive(Verdict v)
{
    switch (v) {
        case Verdict::Transient:
        case Verdict::Persistent:
        case Verdict::DeviceSpecific:
            return true;
        case Verdict::Healthy:
        case Verdict::NoVerdict:
            return false;
    }
    return false;
}

std::vector<RuleFinding> applyLedgerRules(const RuleInputs& in)
{
    std::vector<RuleFinding> out;
    // Escalation: two SDC-positive campaigns (distinct campaigns) within the window.
    std::vector<const RuleCampaign*> positive;
    for (const RuleCampaign& c : in.campaigns)
        if (sdcPositive(c.verdict) && !c.at.empty()) positive.push_back(&c);
    std::sort(positive.begin(), positive.end(), [](auto* a, auto* b) { return a->at < b->at; });
    for (size_t i = 0; i + 1 < positive.size(); ++i) {
        const RuleCampaign* a = positive[i];
        const RuleCampaign* b = nullptr;
        for (size_t j = i + 1; j < positive.size() && !b; ++j) {
            if (positive[j]->campaignId == a->campaignId) continue;
            const auto days = daysBetween(a->at, positive[j]->at);
            if (days && *days <= kEscalationWindowDays) b = positive[j];
        }
        if (!b) continue;
        const double days = daysBetween(a->at, b->at).value_or(0);
        char span[32];
        std::snprintf(span, sizeof span, "%.1f", days);
        out.push_back({"rma_candidate", "RMA candidate",
                       "two SDC-positive campaigns within " + std::string(span) + " days (at most " +
                           std::to_string(static_cast<int>(kEscalationWindowDays)) +
                           "): " + campaignText(*a) + " and " + campaignText(*b)});
        break;
    }
    // Possibly masked: a clean campaign after a reboot (of the host it ran on) that followed a
    // failure.
    for (const RuleCampaign& c : in.campaigns) {
        if (c.verdict != Verdict::Healthy || c.at.empty()) continue;
        const RuleBoot* reboot = nullptr;
        std::string failure;
        for (const RuleBoot& b : in.boots) {
            if (b.at.empty() || b.at >= c.at || (!c.host.empty() && !b.host.empty() && b.host != c.host))
                continue;
            // The latest failure before this reboot.
            std::string failAt;
            for (const RuleEvent& f : in.failures)
                if (!f.at.empty() && f.at < b.at && f.at > failAt) {
                    failAt = f.at;
                    failure = f.what + " at " + f.at;
                }
            for (const RuleCampaign& p : in.campaigns)
                if (sdcPositive(p.verdict) && !p.at.empty() && p.at < b.at && p.at > failAt) {
                    failAt = p.at;
                    failure = campaignText(p);
                }
            if (!failAt.empty() && (!reboot || b.at > reboot->at)) reboot = &b;
        }
        if (!reboot) continue;
        out.push_back({"possibly_masked", "possibly masked: replay again",
                       campaignText(c) + " is clean, after a reboot of " +
                           (reboot->host.empty() ? std::string("its host") : reboot->host) + " at " +
                           reboot->at + " that followed a failure (" + failure +
                           "): the reboot may have hidden the fault"});
    }
    // Moved: more than one host or bus id.
    std::set<std::string> hosts, slots;
    std::vector<const RuleLocation*> where;
    for (const RuleLocation& l : in.locations) {
        if (l.host.empty() && l.busId.empty()) continue;
        if (!l.host.empty()) hosts.insert(l.host);
        if (slots.insert(l.host + " " + l.busId).second) where.push_back(&l);
    }
    if (where.size() > 1) {
        std::sort(where.begin(), where.end(), [](auto* a, auto* b) { return a->firstSeen < b->firstSeen; });
        std::string path;
        for (size_t i = 0; i < where.size(); ++i)
            path += (i ? " -> " : "") + where[i]->host + " " + where[i]->busId + " (" + where[i]->firstSeen +
                    " to " + where[i]->lastSeen + ")";
        out.push_back({"moved", hosts.size() > 1 ? "moved host" : "moved slot",
                       "seen in " + std::to_string(where.size()) + " places: " + path});
    }
    return out;
}

nlohmann::json ruleFindingJson(const RuleFinding& f)
{
    return {{"rule", f.rule}, {"conclusion", f.conclusion}, {"reason", f.reason}};
}

}  // namespace faultline
