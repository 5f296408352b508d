#include "RateByCondition.h"

#include <cmath>

#include "../Text.h"

namespace faultline {

namespace {

using json = nlohmann::json;

const json& field(const json& j, const char* key)
{
    static const json null;
    if (!j.is_object()) return null;
    const auto it = j.find(key);
    return it == j.end() ? null : *it;
}

std::string textField(const json& j, const char* key)
{
    const json& v = field(j, key);
    return v.is_string() ? printableText(v.get_ref<const std::string&>()) : std::string();
}

bool numberField(const json& j, const char* key, double& out)
{
    const json& v = field(j, key);
    if (v.is_null()) return true;  // absent: the default stands
    if (!v.is_number()) return false;
    out = v.get<double>();
    return std::isfinite(out);
}

bool countField(const json& j, const char* key, uint64_t& out)
{
    const json& v = field(j, key);
    if (v.is_null()) return true;
    if (v.is_number_unsigned()) {
        out = v.get<uint64_t>();
        return true;
    }
    if (v.is_number_integer() && v.get<int64_t>() >= 0) {
        out = uint64_t(v.get<int64_t>());
        return true;
    }
    return false;
}

Error reportError(const std::string& path, const std::string& what)
{
    return fileError(path, "not a readable explore report: " + what);
}

}  // namespace

std::string conditionKindOf(const std::string& vary, const std::string& axis)
{
    if (vary == "block" && !axis.empty()) return "block " + axis;
    return vary;
}

Result<RateByCondition> rateByCondition(const json& r, const std::string& path)
{
    const json& conditions = field(r, "conditions");
    const json& cells = field(r, "cells");
    if (!conditions.is_array()) return reportError(path, "no \"conditions\" array");
    if (!cells.is_array()) return reportError(path, "no \"cells\" array");
    RateByCondition out;
    const json& op = field(r, "op");
    uint64_t opIndex = 0;
    if (!countField(op, "index", opIndex)) return reportError(path, "op.index is not a count");
    const std::string name = textField(op, "name");
    out.op =
        "op " + std::to_string(opIndex) + " " + textField(op, "op") + (name.empty() ? "" : " (" + name + ")");
    if (!numberField(r, "confidence", out.confidence) || out.confidence <= 0 || out.confidence >= 1)
        return reportError(path, "confidence is not a number in (0, 1)");
    if (!countField(r, "runs_per_condition", out.runsPerCondition))
        return reportError(path, "runs_per_condition is not a count");
    for (const json& t : field(r, "targets").is_array() ? field(r, "targets") : json::array())
        if (t.is_string()) out.targets.push_back(printableText(t.get_ref<const std::string&>()));
    for (size_t i = 0; i < conditions.size(); ++i) {
        const json& c = conditions[i];
        if (!c.is_object()) return reportError(path, "condition " + std::to_string(i) + " is not an object");
        ExploreConditionInfo info;
        info.vary = textField(c, "vary");
        info.axis = textField(c, "axis");
        info.label = textField(c, "label");
        info.kind = conditionKindOf(info.vary, info.axis);
        if (!numberField(c, "max_abs", info.maxAbs))
            return reportError(path, "condition " + std::to_string(i) + ": max_abs is not a number");
        info.recorded = field(c, "recorded").is_boolean() && field(c, "recorded").get<bool>();
        if (out.groups.empty() || out.groups.back().kind != info.kind)
            out.groups.push_back({info.kind, i, 0});
        ++out.groups.back().count;
        out.conditions.push_back(std::move(info));
    }
    for (size_t i = 0; i < cells.size(); ++i) {
        const json& c = cells[i];
        const std::string where = "cell " + std::to_string(i);
        if (!c.is_object()) return reportError(path, where + " is not an object");
        ConditionRate p;
        uint64_t condition = 0;
        if (!countField(c, "condition", condition) || condition >= out.conditions.size())
            return reportError(path, where + " names no condition of the report");
        p.condition = size_t(condition);
        p.target = textField(c, "target");
        p.replayable = !field(c, "replayable").is_boolean() || field(c, "replayable").get<bool>();
        if (!countField(c, "runs", p.runs) || !countField(c, "failures", p.failures) || p.failures > p.runs)
            return reportError(path, where + ": runs and failures are not counts with failures <= runs");
        if (!numberField(c, "rate", p.rate)) return reportError(path, where + ": rate is not a number");
        const json& ci = field(c, "ci");
        if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number()) {
            p.low = ci[0].get<double>();
            p.high = ci[1].get<double>();
        }
        // (Wilson bounds may miss the rate by an ulp at 0 and 1 failures per run.)
        constexpr double kSlack = 1e-9;
        if (!(p.low >= 0 && p.low <= p.rate + kSlack && p.rate <= p.high + kSlack && p.high <= 1))
            return reportError(path, where + ": the rate is not inside its interval [0, 1]");
        const json& rulesOut = field(c, "rules_out");
        if (rulesOut.is_object() && !numberField(rulesOut, "rate_below", p.rateBelow))
            return reportError(path, where + ": rules_out.rate_below is not a number");
        out.rates.push_back(std::move(p));
    }
    for (const json& f : field(r, "findings").is_array() ? field(r, "findings") : json::array())
        out.findings.push_back(textField(f, "target") + ", " +
                               conditionKindOf(textField(f, "vary"), textField(f, "axis")) + ": " +
                               textField(f, "text"));
    for (const json& w : field(r, "warnings").is_array() ? field(r, "warnings") : json::array())
        if (w.is_string()) out.warnings.push_back(printableText(w.get_ref<const std::string&>()));
    out.cancelled = field(r, "cancelled").is_boolean() && field(r, "cancelled").get<bool>();
    return out;
}

}  // namespace faultline
