#include "ResultTables.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "../Text.h"
#include "../replay/CampaignSummary.h"
#include "../replay/Statistics.h"
#include "../replay/StoppingRule.h"
#include "RateByCondition.h"

namespace faultline {

namespace {

using json = nlohmann::json;

const json& emptyJson()
{
    static const json empty;
    return empty;
}

// j[key], or null when j is not an object or has no such key: the file decides the types, so
// nothing here may throw on a wrong one.
const json& at(const json& j, const char* key)
{
    if (!j.is_object()) return emptyJson();
    const auto it = j.find(key);
    return it == j.end() ? emptyJson() : *it;
}

const json& arrayAt(const json& j, const char* key)
{
    static const json empty = json::array();
    const json& a = at(j, key);
    return a.is_array() ? a : empty;
}

std::string numberText(double v)
{
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::string textOf(const json& v)
{
    if (v.is_string()) return printableText(v.get_ref<const std::string&>());
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    if (v.is_number_float()) return numberText(v.get<double>());
    if (v.is_null()) return "";
    std::string dumped = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (dumped.size() > 200) dumped = dumped.substr(0, 200) + "…";
    return printableText(dumped);
}

std::string text(const json& j, const char* key)
{
    return textOf(at(j, key));
}

double number(const json& j, const char* key, double fallback = 0)
{
    const json& v = at(j, key);
    return v.is_number() ? v.get<double>() : fallback;
}

uint64_t count(const json& j, const char* key)
{
    const json& v = at(j, key);
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return uint64_t(v.get<int64_t>());
    return 0;
}

std::string fileName(const std::string& path)
{
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "12.3% [4.1%, 31.0%]" from {rate, ci: [low, high]}; a clean target's "< 0.1% (95%)".
std::string rateCell(const json& j)
{
    const json& rulesOut = at(j, "rules_out");
    if (rulesOut.is_object() && at(rulesOut, "rate_below").is_number())
        return "< " + rateBoundText(number(rulesOut, "rate_below")) + " (95%)";
    const json& ci = at(j, "ci");
    RateInterval r{number(j, "rate"), 0, 1};
    if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number()) {
        r.low = ci[0].get<double>();
        r.high = ci[1].get<double>();
    }
    return rateText(r);
}

std::string failuresCell(const json& j)
{
    return std::to_string(count(j, "failures")) + "/" + std::to_string(count(j, "runs"));
}

ResultTable makeTable(std::string title, std::vector<std::string> columns)
{
    ResultTable t;
    t.title = std::move(title);
    t.columns = std::move(columns);
    return t;
}

// Adds a row, or counts it as left out.
void addRow(ResultTable& t, std::vector<std::string> row, size_t& leftOut)
{
    if (t.rows.size() >= kResultTableRows) {
        ++leftOut;
        return;
    }
    row.resize(t.columns.size());
    t.rows.push_back(std::move(row));
}

void noteLeftOut(ResultTable& t, size_t leftOut, const std::string& what)
{
    if (leftOut == 0) return;
    t.note = std::to_string(t.rows.size()) + " of " + std::to_string(t.rows.size() + leftOut) + " " + what +
             " shown";
}

ResultTable verdictTable(const json& report)
{
    ResultTable t = makeTable(
        "Verdicts", {"Target", "Verdict", "Failures/runs", "Rate (95% CI)", "Deterministic", "Reason"});
    size_t leftOut = 0;
    for (const json& target : arrayAt(report, "targets"))
        addRow(t,
               {text(target, "target"), text(target, "verdict"), failuresCell(target), rateCell(target),
                textOf(at(at(target, "determinism"), "certified")), text(target, "explanation")},
               leftOut);
    noteLeftOut(t, leftOut, "targets");
    return t;
}

void summarizeCampaign(const ResultDocument& doc, ResultSummary& s)
{
    const json& r = doc.report;
    s.title = "Campaign " + fileName(doc.path);
    // An adaptive campaign (replay --until-rate) keeps its rule: what each op and target stopped by
    // reads as the CLI prints it (stoppedByText).
    const json& untilRate = at(r, "until_rate");
    StoppingRule rule;
    if (untilRate.is_object()) {
        rule.untilRate = number(untilRate, "rate");
        rule.confidence = number(untilRate, "confidence", 0.95);
    }
    const std::string repetitions = rule.adaptive()
                                        ? "runs until a failure or rate < " + rateNumberText(rule.untilRate) +
                                              " at " + confidenceText(rule.confidence)
                                        : text(r, "reps") + " rep(s)";
    s.lines.push_back("Replay of " + text(r, "trace") + ": " + std::to_string(arrayAt(r, "ops").size()) +
                      " op(s) × " + std::to_string(arrayAt(r, "targets").size()) + " target(s) × " +
                      repetitions + ", seed " + text(r, "seed"));
    if (at(r, "cancelled").is_boolean() && at(r, "cancelled").get<bool>())
        s.lines.push_back("Cancelled: the verdicts rest on the runs that finished");
    if (!at(r, "reference").is_null()) s.lines.push_back("Reference target: " + text(r, "reference"));
    const json& node = at(r, "node");
    if (node.is_object()) s.lines.push_back("Ran on " + text(node, "host"));
    for (const json& w : arrayAt(r, "warnings")) s.lines.push_back("Warning: " + textOf(w));
    s.tables.push_back(verdictTable(r));

    ResultTable ops = makeTable("Ops", {"Op", "Kind", "Name", "Target", "Failures/runs", "Rate (95% CI)",
                                        "Max ULP", "Signature", "Stopped by", "What it rules out"});
    size_t leftOut = 0;
    for (const json& op : arrayAt(r, "ops")) {
        const json& targets = at(op, "targets");
        if (!targets.is_object()) continue;
        for (auto it = targets.begin(); it != targets.end(); ++it) {
            // Adaptive campaigns (replay --until-rate) only; "" otherwise.
            const std::optional<StoppedBy> stopped = parseStoppedBy(text(*it, "stopped_by"));
            const std::string rulesOut =
                stopped && rule.adaptive()
                    ? stoppedByText(*stopped, count(*it, "runs"), count(*it, "failures"), rule)
                    : std::string();
            addRow(ops,
                   {text(op, "index"), text(op, "op"), text(op, "name"), printableText(it.key()),
                    failuresCell(*it), rateCell(*it), text(*it, "max_ulp"), text(*it, "signature"),
                    text(*it, "stopped_by"), rulesOut},
                   leftOut);
        }
    }
    noteLeftOut(ops, leftOut, "rows");
    s.tables.push_back(std::move(ops));

    ResultTable runs = makeTable("Runs", {"Target", "Op", "Kind", "Rep", "Outcome", "ms", "Error"});
    leftOut = 0;
    for (const json& run : arrayAt(r, "runs"))
        addRow(runs,
               {text(run, "target"), text(run, "op_index"), text(run, "op"), text(run, "rep"),
                text(run, "outcome"), text(run, "ms"), text(run, "error")},
               leftOut);
    noteLeftOut(runs, leftOut, "runs");
    const uint64_t total = count(r, "runs_total");
    if (runs.note.empty() && total > arrayAt(r, "runs").size())
        runs.note = std::to_string(arrayAt(r, "runs").size()) + " of " + std::to_string(total) +
                    " runs listed in the file (the notable ones)";
    s.tables.push_back(std::move(runs));
}

void summarizeFleet(const ResultDocument& doc, ResultSummary& s)
{
    const json& fleet = at(doc.report, "fleet");
    s.title = "Fleet " + fileName(doc.path);
    s.lines.push_back("Fleet campaign of " + text(doc.report, "trace") + ": " + text(fleet, "node_count") +
                      " node(s), " + text(fleet, "gpu_count") + " GPU(s)");
    s.tables.push_back(verdictTable(doc.report));
}

void summarizeCompare(const ResultDocument& doc, ResultSummary& s)
{
    const json& r = doc.report;
    s.title = "Compare " + fileName(doc.path);
    s.lines.push_back("Suspect " + text(r, "suspect") + " against reference " + text(r, "reference"));
    ResultTable t = makeTable("Tensors", {"Name", "Dtype", "Shape", "Mismatches", "Beyond tolerance",
                                          "Max |err|", "Max ULP", "Signature"});
    size_t leftOut = 0, diverged = 0;
    for (const json& d : arrayAt(r, "tensors")) {
        if (count(d, "beyond_tolerance") > 0) ++diverged;
        addRow(t,
               {text(d, "name"), text(d, "dtype"), text(d, "shape"), text(d, "mismatches"),
                text(d, "beyond_tolerance"),
                text(d, "max_error_note").empty() ? text(d, "max_abs_error") : text(d, "max_error_note"),
                text(d, "max_ulp"), text(at(d, "signature"), "kind")},
               leftOut);
    }
    s.lines.push_back(std::to_string(arrayAt(r, "tensors").size()) + " tensor(s) compared, " +
                      std::to_string(diverged) + " beyond tolerance");
    noteLeftOut(t, leftOut, "tensors");
    s.tables.push_back(std::move(t));
}

void summarizeLinks(const ResultDocument& doc, ResultSummary& s)
{
    const json& r = doc.report;
    const bool sweep = doc.kind == ResultKind::Sweep;
    s.title = (sweep ? "Sweep " : "Collective ") + fileName(doc.path);
    const size_t faultyGpus = arrayAt(r, "faulty_gpus").size(),
                 faultyLinks = arrayAt(r, "faulty_links").size();
    s.lines.push_back(std::to_string(arrayAt(r, "gpus").size()) + " GPU(s): " + std::to_string(faultyGpus) +
                      " faulty GPU(s), " + std::to_string(faultyLinks) + " faulty link(s)");
    ResultTable gpus = makeTable("GPUs", {"Rank", "Target", "Faulty", "Failures/transfers", "Rate (95% CI)"});
    size_t leftOut = 0;
    for (const json& g : arrayAt(r, "gpus"))
        addRow(
            gpus,
            {text(g, "index"), text(g, "target"), text(g, "faulty"),
             std::to_string(count(g, "failures")) + "/" + std::to_string(count(g, "transfers")), rateCell(g)},
            leftOut);
    s.tables.push_back(std::move(gpus));
    ResultTable links =
        makeTable("Links", {"Source", "Destination", "Failures", "Rate (95% CI)", "Signature"});
    for (const json& l : arrayAt(r, "links"))
        addRow(links,
               {text(l, "src"), text(l, "dst"), text(l, "failures"), rateCell(l), text(l, "signature")},
               leftOut);
    s.tables.push_back(std::move(links));
}

std::string xidSummaryText(const json& summary)
{
    std::vector<std::string> parts;
    if (summary.is_object())
        for (auto it = summary.begin(); it != summary.end(); ++it)
            parts.push_back("Xid " + printableText(it.key()) + " ×" + textOf(*it));
    return joinText(parts);
}

void summarizeHealth(const ResultDocument& doc, ResultSummary& s)
{
    const json& r = doc.report;
    s.title = "Health " + fileName(doc.path);
    const bool found = at(r, "something_found").is_boolean() && at(r, "something_found").get<bool>();
    s.lines.push_back(std::to_string(arrayAt(r, "gpus").size()) + " GPU(s); " +
                      (found ? "something was found" : "nothing was found"));
    std::vector<std::string> sources;
    for (const json& src : arrayAt(r, "sources")) sources.push_back(textOf(src));
    if (!sources.empty()) s.lines.push_back("Sources: " + joinText(sources));
    for (const json& w : arrayAt(r, "warnings")) s.lines.push_back("Warning: " + textOf(w));
    ResultTable gpus =
        makeTable("GPUs", {"Bus id", "UUID", "Serial", "Product", "Recommendation", "Xids", "Reasons"});
    ResultTable events = makeTable("Events", {"Bus id", "Kind", "Xid", "Name", "Time", "Message", "Source"});
    size_t leftOut = 0, eventsLeftOut = 0;
    for (const json& g : arrayAt(r, "gpus")) {
        std::vector<std::string> reasons;
        for (const json& reason : arrayAt(g, "recommendation_reasons"))
            reasons.push_back(text(reason, "reason"));
        addRow(gpus,
               {text(g, "bus_id"), text(g, "uuid"), text(g, "serial"), text(g, "product"),
                text(g, "recommendation"), xidSummaryText(at(g, "xid_summary")), joinText(reasons, "; ")},
               leftOut);
        for (const json& e : arrayAt(g, "events"))
            addRow(events,
                   {text(e, "bus_id"), text(e, "kind"), text(e, "xid"), text(e, "name"), text(e, "time"),
                    text(e, "message"), text(e, "source")},
                   eventsLeftOut);
    }
    noteLeftOut(events, eventsLeftOut, "events");
    s.tables.push_back(std::move(gpus));
    s.tables.push_back(std::move(events));
}

void summarizeEvidence(const ResultDocument& doc, ResultSummary& s)
{
    const json& c = doc.report;
    s.title = "Evidence " + fileName(doc.path);
    ResultTable check = makeTable("Check", {"Path", "Problem"});
    size_t leftOut = 0;
    if (doc.check) {
        const BundleCheck& k = *doc.check;
        std::string signature = k.signature == BundleCheck::Signature::Valid
                                    ? "signature valid (key " + k.keyId + ")"
                                : k.signature == BundleCheck::Signature::Invalid ? "signature INVALID"
                                                                                 : "unsigned";
        s.lines.push_back(
            k.intact()
                ? "Intact: " + std::to_string(k.filesChecked) + " file(s) match the manifest; " + signature
                : "NOT intact: " + std::to_string(k.problems.size()) + " problem(s); " + signature);
        for (const BundleProblem& p : k.problems)
            addRow(check, {printableText(p.path), printableText(p.what)}, leftOut);
    }
    const json& suspect = at(c, "suspect");
    s.lines.push_back("Case " + text(at(c, "case"), "id") + ": suspect serial " + text(suspect, "serial") +
                      ", UUID " + text(suspect, "uuid") + ", bus " + text(suspect, "bus_id"));
    for (const json& reason : arrayAt(c, "rma_reasons")) s.lines.push_back("RMA reason: " + textOf(reason));
    for (const json& w : arrayAt(c, "warnings")) s.lines.push_back("Warning: " + textOf(w));
    s.tables.push_back(std::move(check));

    ResultTable targets =
        makeTable("Targets", {"Target", "Role", "Verdict", "Failures/runs", "Rate (95% CI)", "Reason"});
    for (const json& t : arrayAt(at(c, "replay"), "targets")) {
        json rate = t;
        if (at(t, "ci95").is_array()) rate["ci"] = at(t, "ci95");
        addRow(targets,
               {text(t, "target"), text(t, "role"), text(t, "verdict"), failuresCell(t), rateCell(rate),
                text(t, "explanation")},
               leftOut);
    }
    s.tables.push_back(std::move(targets));
    ResultTable others = makeTable("Other targets", {"Context only, not evidence about the suspect"});
    for (const json& o : arrayAt(c, "other_targets")) addRow(others, {textOf(o)}, leftOut);
    s.tables.push_back(std::move(others));
    ResultTable checklist = makeTable("Checklist", {"Item", "Present", "Required", "Detail"});
    for (const json& item : arrayAt(c, "checklist"))
        addRow(checklist,
               {text(item, "item"), text(item, "present"), text(item, "required"), text(item, "detail")},
               leftOut);
    s.tables.push_back(std::move(checklist));
    ResultTable files = makeTable("Files", {"Path", "Role", "Source"});
    for (const json& f : arrayAt(c, "files"))
        addRow(files, {text(f, "path"), text(f, "role"), text(f, "source")}, leftOut);
    s.tables.push_back(std::move(files));
}

void summarizeExplore(const ResultDocument& doc, ResultSummary& s)
{
    s.title = "Explore " + fileName(doc.path);
    auto rates = rateByCondition(doc.report, doc.path);
    if (!rates) {
        s.lines.push_back(rates.message());
        return;
    }
    const RateByCondition& r = *rates;
    size_t fired = 0;
    for (const ConditionRate& p : r.rates) fired += p.fired() ? 1 : 0;
    s.lines.push_back(r.op + ": " + std::to_string(r.conditions.size()) + " condition(s) x " +
                      std::to_string(r.targets.size()) + " target(s), " + std::to_string(r.runsPerCondition) +
                      " runs each; fired in " + std::to_string(fired) + " of " +
                      std::to_string(r.rates.size()));
    if (r.cancelled) s.lines.push_back("Cancelled: the conditions listed are those that finished");
    for (const std::string& f : r.findings) s.lines.push_back(f);
    for (const std::string& w : r.warnings) s.lines.push_back("Warning: " + w);
    ResultTable t = makeTable("Conditions", {"Target", "Kind", "Condition", "Max |x|", "Failures/runs",
                                             "Rate (" + confidenceText(r.confidence) + ")", "Fired"});
    size_t leftOut = 0;
    for (const ConditionRate& p : r.rates) {
        const ExploreConditionInfo& c = r.conditions[p.condition];
        const std::string rate = !p.replayable ? std::string("not replayable")
                                 : p.fired()   ? rateText({p.rate, p.low, p.high})
                                               : cleanRateText(p.runs, r.confidence);
        addRow(t,
               {p.target, c.kind, c.label + (c.recorded ? " (recorded)" : ""), numberText(c.maxAbs),
                std::to_string(p.failures) + "/" + std::to_string(p.runs), rate,
                !p.replayable ? "not replayable"
                : p.fired()   ? "fired"
                              : "never"},
               leftOut);
    }
    noteLeftOut(t, leftOut, "cells");
    s.tables.push_back(std::move(t));
}

}  // namespace

ResultSummary summarizeResult(const ResultDocument& doc)
{
    ResultSummary s;
    switch (doc.kind) {
        case ResultKind::Campaign:
            summarizeCampaign(doc, s);
            break;
        case ResultKind::Fleet:
            summarizeFleet(doc, s);
            break;
        case ResultKind::Compare:
            summarizeCompare(doc, s);
            break;
        case ResultKind::Sweep:
        case ResultKind::Collective:
            summarizeLinks(doc, s);
            break;
        case ResultKind::Health:
            summarizeHealth(doc, s);
            break;
        case ResultKind::Evidence:
            summarizeEvidence(doc, s);
            break;
        case ResultKind::Explore:
            summarizeExplore(doc, s);
            break;
        case ResultKind::Incident:
            s.title = fileName(doc.path);
            break;
    }
    return s;
}

}  // namespace faultline
