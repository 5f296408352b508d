// The JSON and text of `faultline explore` (Explore.h).
#include <cstdio>
#include <sstream>

#include "Explore.h"
#include "RulesOut.h"
#include "StoppingRule.h"

namespace faultline {

nlohmann::json exploreJson(const ExploreReport& r)
{
    nlohmann::json conditions = nlohmann::json::array(), cells = nlohmann::json::array(),
                   findings = nlohmann::json::array();
    for (size_t i = 0; i < r.conditions.size(); ++i) {
        const ExploreCondition& c = r.conditions[i];
        nlohmann::json j{{"index", i},       {"vary", c.vary},        {"axis", c.axis},
                         {"label", c.label}, {"max_abs", c.maxAbs},   {"inner", c.inner},
                         {"dtype", c.dtype}, {"recorded", c.recorded}};
        if (c.vary == "block") j["block"] = {{"first", c.first}, {"size", c.size}};
        if (c.grid) j["grid"] = c.grid;
        conditions.push_back(std::move(j));
    }
    for (const ExploreCell& c : r.cells)
        cells.push_back({{"condition", c.condition},
                         {"target", c.target},
                         {"replayable", c.rate.replayable},
                         {"runs", c.rate.runs},
                         {"failures", c.rate.failures},
                         {"rate", c.rate.interval.rate},
                         {"ci", {c.rate.interval.low, c.rate.interval.high}},
                         {"rules_out", rulesOutJson(c.rate.failures, c.rate.runs, r.confidence)},
                         {"ms_per_run", c.rate.runs ? nlohmann::json(c.rate.msPerRun) : nlohmann::json()}});
    for (const ExploreFinding& f : r.findings)
        findings.push_back(
            {{"target", f.target},
             {"vary", f.vary},
             {"axis", f.axis},
             {"fired", f.fired},
             {"never", f.never},
             {"sms", f.sms},
             {"range", f.fired.empty() ? nlohmann::json() : nlohmann::json::array({f.low, f.high})},
             {"text", f.text}});
    return {{"format", "faultline-explore"},
            {"trace", r.trace},
            {"op", {{"index", r.opIndex}, {"op", r.op}, {"name", r.name}}},
            {"targets", r.targets},
            {"vary", r.vary},
            {"runs_per_condition", r.runs},
            {"confidence", r.confidence},
            {"conditions", conditions},
            {"cells", cells},
            {"findings", findings},
            {"cancelled", r.cancelled},
            {"warnings", r.warnings}};
}

std::string exploreText(const ExploreReport& r)
{
    std::ostringstream out;
    out << "explore op " << r.opIndex << " " << r.op << (r.name.empty() ? "" : " (" + r.name + ")") << ": "
        << r.conditions.size() << " conditions x " << r.targets.size() << " target(s), " << r.runs
        << " runs each; rates at " << confidenceText(r.confidence) << "\n";
    char line[512];
    for (const std::string& target : r.targets) {
        out << "\n" << target << "\n";
        for (const ExploreCell& c : r.cells) {
            if (c.target != target) continue;
            const ExploreCondition& k = r.conditions[c.condition];
            const std::string rate = !c.rate.replayable ? std::string("not replayable")
                                     : c.rate.failures  ? rateText(c.rate.interval)
                                                        : cleanRateText(c.rate.runs, r.confidence);
            std::snprintf(line, sizeof line, "  %-9s %-40s max|x| %-10.3g %s\n", k.vary.c_str(),
                          k.label.c_str(), k.maxAbs, rate.c_str());
            out << line;
        }
        for (const ExploreFinding& f : r.findings)
            if (f.target == target)
                out << "  => " << (f.vary == "block" ? f.axis : f.vary) << ": " << f.text << "\n";
    }
    if (r.cancelled) out << "cancelled: the conditions above are those that finished\n";
    for (const std::string& w : r.warnings) out << "warning: " << w << "\n";
    return out.str();
}

}  // namespace faultline
