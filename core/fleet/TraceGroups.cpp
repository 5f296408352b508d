#include "TraceGroups.h"

#include "../Text.h"

namespace faultline {

std::string traceText(const TraceGroup& g)
{
    return g.trace + (g.digest.empty() ? " (no digest)" : " (digest " + g.digest + ")");
}

uint32_t TraceGroups::add(const FleetNode& node)
{
    const std::string key = node.traceDigest.empty() ? "path:" + node.trace : node.traceDigest;
    auto [it, inserted] = m_byKey.emplace(key, uint32_t(m_groups.size()));
    if (inserted) {
        TraceGroup g;
        g.trace = node.trace;
        g.digest = node.traceDigest;
        g.reps = node.reps;
        g.seed = node.seed;
        m_groups.push_back(std::move(g));
    }
    TraceGroup& g = m_groups[it->second];
    ++g.nodes;
    g.cancelled = g.cancelled || node.cancelled;
    for (const FleetOpInfo& op : node.ops) g.ops.try_emplace(op.index, op);
    return it->second;
}

Result<TraceGroups::Choice> TraceGroups::choose(const std::optional<NamedTrace>& named) const
{
    Choice c;
    c.merged.assign(m_groups.size(), false);
    if (m_groups.empty()) return c;
    if (named) {
        // By digest; a group without one by its path.
        std::optional<uint32_t> found;
        for (uint32_t i = 0; i < m_groups.size() && !found; ++i)
            if (m_groups[i].digest == named->digest) found = i;
        for (uint32_t i = 0; i < m_groups.size() && !found; ++i)
            if (m_groups[i].digest.empty() && m_groups[i].trace == named->path) found = i;
        if (!found) {
            std::string replayed;
            for (size_t i = 0; i < m_groups.size() && i < 4; ++i)
                replayed += (i ? "; " : "") + traceText(m_groups[i]);
            if (m_groups.size() > 4) replayed += "; …";
            return Error{"--trace " + printableText(named->path) + " (digest " + named->digest +
                             "): no node replayed this trace; they replayed " + replayed,
                         ErrorCode::Usage};
        }
        c.campaign = *found;
    } else {
        // The most nodes; of equals, the first given, with a warning.
        uint32_t best = 0;
        for (uint32_t i = 1; i < m_groups.size(); ++i)
            if (m_groups[i].nodes > m_groups[best].nodes) best = i;
        c.campaign = best;
        for (uint32_t i = 0; i < m_groups.size(); ++i)
            if (i != best && m_groups[i].nodes == m_groups[best].nodes) {
                c.warnings.push_back(
                    "no trace was replayed by most nodes: " + std::to_string(m_groups[best].nodes) +
                    " node(s) replayed " + traceText(m_groups[best]) + " and as many " +
                    traceText(m_groups[i]) +
                    "; the campaign is of the first (name the campaign's trace with --trace)");
                break;
            }
    }
    const TraceGroup& campaign = m_groups[c.campaign];
    c.merged[c.campaign] = true;
    // Of a campaign without a digest, a group with one joins it by path only when it is the only
    // one there: two digests at one path are two different files.
    size_t digestsAtPath = 0;
    if (campaign.digest.empty())
        for (const TraceGroup& g : m_groups) digestsAtPath += !g.digest.empty() && g.trace == campaign.trace;
    for (uint32_t i = 0; i < m_groups.size(); ++i) {
        if (i == c.campaign) continue;
        const TraceGroup& g = m_groups[i];
        const bool byPath = g.trace == campaign.trace && (g.digest.empty() || digestsAtPath == 1);
        if (byPath) {
            c.merged[i] = true;
            c.warnings.push_back(
                std::to_string(g.nodes) + " node(s) replayed " + traceText(g) + ", merged with the " +
                std::to_string(campaign.nodes) + " of " + traceText(campaign) +
                " by the trace's path alone (a file of an older Faultline records no digest)");
        } else {
            c.warnings.push_back(
                std::to_string(g.nodes) + " node(s) replayed another trace, " + traceText(g) +
                ", than the campaign's " + traceText(campaign) +
                ": not merged, and their GPUs do not vote (fleet.other_trace_nodes; name the "
                "campaign's trace with --trace)");
        }
    }
    return c;
}

}  // namespace faultline
