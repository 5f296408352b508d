#include "CampaignEvidence.h"

#include <set>

#include "../replay/Campaign.h"

namespace faultline {
namespace {

nlohmann::json rateJson(const RateInterval& r)
{
    return {{"rate", r.rate}, {"ci95", {r.low, r.high}}};
}

template <class T>
T field(const nlohmann::json& j, const char* name, T fallback)
{
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) return fallback;
    try {
        return it->get<T>();
    } catch (const nlohmann::json::exception&) {
        return fallback;
    }
}

}  // namespace

std::vector<const CampaignTargetEvidence*> CampaignEvidence::divergingTargets() const
{
    std::vector<const CampaignTargetEvidence*> out;
    for (const CampaignTargetEvidence& t : targets)
        if (t.verdict != "healthy") out.push_back(&t);
    return out;
}

std::string CampaignEvidence::divergentOpList() const
{
    std::string s;
    for (const CampaignOpEvidence& o : divergentOps) s += (s.empty() ? "" : ",") + std::to_string(o.index);
    return s;
}

Result<CampaignEvidence> readCampaignEvidence(const std::string& resultsPath)
{
    auto doc = readCampaignResults(resultsPath);
    if (!doc) return doc.error();
    const nlohmann::json& j = *doc;
    if (!j.is_object() || !j.contains("targets") || !j["targets"].is_array())
        return fileError(resultsPath, "the campaign report has no targets");
    CampaignEvidence c;
    c.resultsPath = resultsPath;
    c.document = j;
    c.trace = field<std::string>(j, "trace", "");
    c.reps = field<uint32_t>(j, "reps", 0);
    c.seed = field<uint64_t>(j, "seed", 0);
    c.reference = field<std::string>(j, "reference", "");
    c.cancelled = field<bool>(j, "cancelled", false);
    std::set<size_t> divergent;
    for (const nlohmann::json& t : j["targets"]) {
        CampaignTargetEvidence e;
        e.target = field<std::string>(t, "target", "");
        e.description = field<std::string>(t, "description", "");
        e.verdict = field<std::string>(t, "verdict", "");
        e.explanation = field<std::string>(t, "explanation", "");
        e.runs = field<uint64_t>(t, "runs", 0);
        e.failures = field<uint64_t>(t, "failures", 0);
        if (e.target.empty() || e.verdict.empty() || e.failures > e.runs)
            return fileError(resultsPath, "a campaign target without a name, a verdict or consistent counts");
        e.rate = wilsonInterval(e.failures, e.runs);
        e.failingOps = field<std::vector<size_t>>(t, "failing_ops", {});
        if (auto d = t.find("determinism"); d != t.end() && d->is_object())
            e.deterministic = field<bool>(*d, "certified", false);
        if (e.verdict != "healthy") divergent.insert(e.failingOps.begin(), e.failingOps.end());
        c.targets.push_back(std::move(e));
    }
    if (auto ops = j.find("ops"); ops != j.end() && ops->is_array())
        for (const nlohmann::json& o : *ops) {
            const size_t index = field<size_t>(o, "index", 0);
            if (!divergent.count(index)) continue;
            CampaignOpEvidence e;
            e.index = index;
            e.op = field<std::string>(o, "op", "");
            e.name = field<std::string>(o, "name", "");
            if (auto ts = o.find("targets"); ts != o.end() && ts->is_object())
                for (auto it = ts->begin(); it != ts->end(); ++it) {
                    CampaignOpEvidence::PerTarget p;
                    p.runs = field<uint64_t>(*it, "runs", 0);
                    p.failures = field<uint64_t>(*it, "failures", 0);
                    p.mismatches = field<uint64_t>(*it, "mismatches", 0);
                    p.maxUlp = field<uint64_t>(*it, "max_ulp", 0);
                    p.signature = field<std::string>(*it, "signature", "");
                    p.rate = wilsonInterval(std::min(p.failures, p.runs), p.runs);
                    e.targets[it.key()] = p;
                }
            c.divergentOps.push_back(std::move(e));
        }
    return c;
}

nlohmann::json campaignEvidenceJson(const CampaignEvidence& c)
{
    nlohmann::json targets = nlohmann::json::array();
    for (const CampaignTargetEvidence& t : c.targets) {
        nlohmann::json j = {{"target", t.target},
                            {"description", t.description},
                            {"verdict", t.verdict},
                            {"runs", t.runs},
                            {"failures", t.failures},
                            {"failing_ops", t.failingOps},
                            {"deterministic", t.deterministic},
                            {"explanation", t.explanation}};
        j.update(rateJson(t.rate));
        targets.push_back(std::move(j));
    }
    nlohmann::json ops = nlohmann::json::array();
    for (const CampaignOpEvidence& o : c.divergentOps) {
        nlohmann::json per = nlohmann::json::object();
        for (const auto& [target, p] : o.targets) {
            nlohmann::json t = {{"runs", p.runs},
                                {"failures", p.failures},
                                {"mismatches", p.mismatches},
                                {"max_ulp", p.maxUlp},
                                {"signature", p.signature}};
            t.update(rateJson(p.rate));
            per[target] = std::move(t);
        }
        ops.push_back({{"index", o.index}, {"op", o.op}, {"name", o.name}, {"targets", per}});
    }
    return {{"trace", c.trace},
            {"reps", c.reps},
            {"seed", c.seed},
            {"reference", c.reference.empty() ? nlohmann::json() : nlohmann::json(c.reference)},
            {"cancelled", c.cancelled},
            {"reproduced", c.reproduced()},
            {"targets", targets},
            {"divergent_ops", ops}};
}

}  // namespace faultline
