#include "CampaignEvidence.h"

#include <set>

#include "../Text.h"
#include "../replay/Campaign.h"
#include "../replay/RulesOut.h"

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

// Text of an untrusted field that is shown but never parsed: kept printable.
std::string freeText(const nlohmann::json& j, const char* name)
{
    return printableText(field<std::string>(j, name, ""));
}

// The error for a field that must be printable text and is not.
Error notPrintable(const std::string& file, const std::string& where, const std::string& value)
{
    std::string shown = printableText(value);
    if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
    return fileError(
        file, where + " is not printable text (a control character or invalid UTF-8): \"" + shown + "\"",
        ErrorCode::Format);
}

// A field that names or decides something (a target label, a verdict, a reference, an op):
// printable text, else a Format error naming the file and the field (`where`.`name`).
Result<std::string> printableField(const std::string& file, const nlohmann::json& j, const char* name,
                                   const std::string& where)
{
    std::string v = field<std::string>(j, name, "");
    if (!isPrintableText(v)) return notPrintable(file, where.empty() ? name : where + "." + name, v);
    return v;
}

// A verdict (core/replay/ReplayVocabulary.h's words), else a Format error naming the file and the
// field. An absent or empty field is nullopt when `optional`, else an error too.
Result<std::optional<Verdict>> verdictField(const std::string& file, const nlohmann::json& j,
                                            const char* name, const std::string& where, bool optional)
{
    auto text = printableField(file, j, name, where);
    if (!text) return text.error();
    if (text->empty() && optional) return std::optional<Verdict>{};
    if (auto v = parseVerdict(*text)) return std::optional<Verdict>{*v};
    return fileError(file,
                     where + "." + name +
                         " is not a verdict (healthy, transient, persistent, device-specific, "
                         "none): \"" +
                         *text + "\"",
                     ErrorCode::Format);
}

// An op target's stopped_by: nullopt when absent (a fixed campaign), else one of the words.
Result<std::optional<StoppedBy>> stoppedByField(const std::string& file, const nlohmann::json& j,
                                                const std::string& where)
{
    auto text = printableField(file, j, "stopped_by", where);
    if (!text) return text.error();
    if (text->empty()) return std::optional<StoppedBy>{};
    if (auto v = parseStoppedBy(*text)) return std::optional<StoppedBy>{*v};
    return fileError(file, where + ".stopped_by is not failure, rate, budget or cancelled: \"" + *text + "\"",
                     ErrorCode::Format);
}

}  // namespace

std::vector<const CampaignTargetEvidence*> CampaignEvidence::divergingTargets() const
{
    std::vector<const CampaignTargetEvidence*> out;
    for (const CampaignTargetEvidence& t : targets)
        if (t.verdict != Verdict::Healthy) out.push_back(&t);
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
    auto reference = printableField(resultsPath, j, "reference", "");
    if (!reference) return reference.error();
    c.reference = *reference;
    c.cancelled = field<bool>(j, "cancelled", false);
    c.fleet = j.contains("fleet") && j["fleet"].is_object();
    if (auto u = j.find("until_rate"); u != j.end() && u->is_object()) {
        UntilRateEvidence rule;
        rule.rate = field<double>(*u, "rate", 0);
        rule.confidence = field<double>(*u, "confidence", 0.95);
        rule.budgetSeconds = field<double>(*u, "budget_s", 0);
        if (!(rule.rate > 0 && rule.rate < 1) || !(rule.confidence > 0 && rule.confidence < 1))
            return fileError(resultsPath, "until_rate holds no rate and confidence in (0, 1)",
                             ErrorCode::Format);
        c.untilRate = rule;
    }
    std::set<size_t> divergent;
    size_t i = 0;
    for (const nlohmann::json& t : j["targets"]) {
        const std::string where = "targets[" + std::to_string(i++) + "]";
        CampaignTargetEvidence e;
        auto target = printableField(resultsPath, t, "target", where);
        if (!target) return target.error();
        if (target->empty()) return fileError(resultsPath, where + " is a campaign target without a name");
        auto verdict = verdictField(resultsPath, t, "verdict", where, false);
        if (!verdict) return verdict.error();
        e.target = *target;
        e.verdict = **verdict;
        e.description = freeText(t, "description");
        e.explanation = freeText(t, "explanation");
        e.runs = field<uint64_t>(t, "runs", 0);
        e.failures = field<uint64_t>(t, "failures", 0);
        if (e.failures > e.runs) return fileError(resultsPath, where + " has more failures than runs");
        e.rate = wilsonInterval(e.failures, e.runs);
        e.failingOps = field<std::vector<size_t>>(t, "failing_ops", {});
        if (auto d = t.find("determinism"); d != t.end() && d->is_object())
            e.deterministic = field<bool>(*d, "certified", false);
        if (auto g = t.find("fleet_gpu"); g != t.end() && g->is_object()) {
            CampaignTargetEvidence::FleetGpu f;
            const std::pair<const char*, std::string*> fields[] = {{"host", &f.host},
                                                                   {"target", &f.target},
                                                                   {"uuid", &f.uuid},
                                                                   {"serial", &f.serial},
                                                                   {"pci_bus_id", &f.pciBusId}};
            for (const auto& [name, value] : fields) {
                auto v = printableField(resultsPath, *g, name, where + ".fleet_gpu");
                if (!v) return v.error();
                *value = *v;
            }
            auto nodeVerdict = verdictField(resultsPath, *g, "node_verdict", where + ".fleet_gpu", true);
            if (!nodeVerdict) return nodeVerdict.error();
            f.nodeVerdict = *nodeVerdict;
            f.outlierOps = field<std::vector<size_t>>(*g, "outlier_ops", {});
            e.fleetGpu = f;
        }
        if (e.verdict != Verdict::Healthy) {
            divergent.insert(e.failingOps.begin(), e.failingOps.end());
            if (e.fleetGpu) divergent.insert(e.fleetGpu->outlierOps.begin(), e.fleetGpu->outlierOps.end());
        }
        c.targets.push_back(std::move(e));
    }
    if (auto ops = j.find("ops"); ops != j.end() && ops->is_array()) {
        size_t k = 0;
        for (const nlohmann::json& o : *ops) {
            const std::string where = "ops[" + std::to_string(k++) + "]";
            auto op = printableField(resultsPath, o, "op", where);
            if (!op) return op.error();
            auto name = printableField(resultsPath, o, "name", where);
            if (!name) return name.error();
            const auto ts = o.find("targets");
            const bool hasTargets = ts != o.end() && ts->is_object();
            if (hasTargets)
                for (auto it = ts->begin(); it != ts->end(); ++it)
                    if (!isPrintableText(it.key()))
                        return notPrintable(resultsPath, where + ".targets", it.key());
            const size_t index = field<size_t>(o, "index", 0);
            if (hasTargets)
                for (auto it = ts->begin(); it != ts->end(); ++it) {
                    auto stopped = stoppedByField(resultsPath, *it, where + ".targets." + it.key());
                    if (!stopped) return stopped.error();
                    if (!*stopped) continue;
                    if (c.adaptiveOps.size() >= kAdaptiveOpLines) {
                        ++c.adaptiveOpsLeftOut;
                        continue;
                    }
                    AdaptiveOpEvidence a;
                    a.index = index;
                    a.op = *op;
                    a.name = *name;
                    a.target = it.key();
                    a.runs = field<uint64_t>(*it, "runs", 0);
                    a.failures = std::min(field<uint64_t>(*it, "failures", 0), a.runs);
                    a.stoppedBy = **stopped;
                    a.rate = wilsonInterval(a.failures, a.runs);
                    c.adaptiveOps.push_back(std::move(a));
                }
            if (!divergent.count(index)) continue;
            CampaignOpEvidence e;
            e.index = index;
            e.op = *op;
            e.name = *name;
            if (hasTargets)
                for (auto it = ts->begin(); it != ts->end(); ++it) {
                    CampaignOpEvidence::PerTarget p;
                    p.runs = field<uint64_t>(*it, "runs", 0);
                    p.failures = field<uint64_t>(*it, "failures", 0);
                    p.mismatches = field<uint64_t>(*it, "mismatches", 0);
                    p.maxUlp = field<uint64_t>(*it, "max_ulp", 0);
                    p.signature = freeText(*it, "signature");
                    p.rate = wilsonInterval(std::min(p.failures, p.runs), p.runs);
                    if (auto stopped = stoppedByField(resultsPath, *it, where); stopped)
                        p.stoppedBy = *stopped;
                    e.targets[it.key()] = p;
                }
            c.divergentOps.push_back(std::move(e));
        }
    }
    return c;
}

nlohmann::json campaignEvidenceJson(const CampaignEvidence& c)
{
    nlohmann::json targets = nlohmann::json::array();
    for (const CampaignTargetEvidence& t : c.targets) {
        nlohmann::json j = {{"target", t.target},
                            {"description", t.description},
                            {"verdict", nameOf(t.verdict)},
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
            if (p.stoppedBy) t["stopped_by"] = nameOf(*p.stoppedBy);
            per[target] = std::move(t);
        }
        ops.push_back({{"index", o.index}, {"op", o.op}, {"name", o.name}, {"targets", per}});
    }
    nlohmann::json result = {
        {"trace", c.trace},
        {"reps", c.reps},
        {"seed", c.seed},
        {"reference", c.reference.empty() ? nlohmann::json() : nlohmann::json(c.reference)},
        {"cancelled", c.cancelled},
        {"reproduced", c.reproduced()},
        {"targets", targets},
        {"divergent_ops", ops}};
    if (c.untilRate) {
        const double confidence = c.untilRate->confidence;
        result["until_rate"] = {
            {"rate", c.untilRate->rate},
            {"confidence", confidence},
            {"budget_s",
             c.untilRate->budgetSeconds > 0 ? nlohmann::json(c.untilRate->budgetSeconds) : nlohmann::json()}};
        nlohmann::json adaptive = nlohmann::json::array();
        for (const AdaptiveOpEvidence& a : c.adaptiveOps) {
            nlohmann::json j = {{"index", a.index},
                                {"op", a.op},
                                {"name", a.name},
                                {"target", a.target},
                                {"runs", a.runs},
                                {"failures", a.failures},
                                {"stopped_by", nameOf(a.stoppedBy)},
                                {"rules_out", rulesOutJson(a.failures, a.runs, confidence)}};
            j.update(rateJson(a.rate));
            adaptive.push_back(std::move(j));
        }
        result["adaptive_ops"] = std::move(adaptive);
        result["adaptive_ops_left_out"] = c.adaptiveOpsLeftOut;
    }
    return result;
}

}  // namespace faultline
