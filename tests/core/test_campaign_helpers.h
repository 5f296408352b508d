#pragma once
// Lookups into a campaign summary for the campaign tests.
#include <QtTest>
#include <string>

#include "core/replay/CampaignSummary.h"

namespace faultline::test {

inline const OpTargetStats& statsOf(const CampaignReport& r, const std::string& target, size_t op = 0)
{
    for (const OpTargetStats& s : r.stats)
        if (s.target == target && s.opIndex == op) return s;
    qFatal("no stats for %s", target.c_str());
}

inline const TargetSummary& summaryOf(const CampaignReport& r, const std::string& target)
{
    for (const TargetSummary& t : r.targets)
        if (t.target == target) return t;
    qFatal("no summary for %s", target.c_str());
}

}  // namespace faultline::test
