#include "EvidenceReport.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <sstream>

#include "../replay/Statistics.h"
#include "../replay/StoppingRule.h"
#include "DeviceHistorySection.h"
#include "ReportText.h"

namespace faultline {
namespace {

using json = nlohmann::json;

using report_text::cell;
using report_text::field;
using report_text::text;

uint64_t countOf(const json& j, const char* key)
{
    const auto it = j.is_object() ? j.find(key) : j.end();
    if (!j.is_object() || it == j.end()) return 0;
    if (it->is_number_unsigned()) return it->get<uint64_t>();
    if (it->is_number_integer() && it->get<int64_t>() > 0) return uint64_t(it->get<int64_t>());
    return 0;
}

double numberOf(const json& j, const char* key, double fallback)
{
    const auto it = j.is_object() ? j.find(key) : j.end();
    return j.is_object() && it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

// What runs of one target (or one op on it) say: a rate with its interval where some failed,
// else what the clean runs rule out ("no failure in 2995 runs: rate < 0.1% at 95%").
std::string runsResultText(const json& t, double confidence)
{
    const uint64_t runs = countOf(t, "runs"), failures = countOf(t, "failures");
    if (runs == 0) return "no runs";
    if (failures == 0) return cleanRateText(runs, confidence);
    const json ci = t.value("ci95", json::array({0, 1}));
    RateInterval r{numberOf(t, "rate", double(failures) / double(runs)), 0, 1};
    if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number()) {
        r.low = ci[0].get<double>();
        r.high = ci[1].get<double>();
    }
    return rateText(r);
}

// The adaptive campaign's op and target lines: what stopped each, and what each result means.
void adaptiveOpsSection(std::ostringstream& out, const json& replay)
{
    const json& rule = replay.value("until_rate", json());
    const json ops = replay.value("adaptive_ops", json::array());
    if (!rule.is_object() || !ops.is_array()) return;
    const double rate = numberOf(rule, "rate", 0), confidence = numberOf(rule, "confidence", 0.95);
    const std::string goal = "rate < " + rateNumberText(rate) + " at " + confidenceText(confidence);
    out << "### What stopped each op\n\n"
        << "Adaptive campaign (`replay --until-rate " << rateNumberText(rate)
        << "`): each op was repeated on "
        << "each target until a run failed, until the clean runs ruled out a " << goal
        << (rule.value("budget_s", json()).is_number()
                ? ", or until the budget of " + field(rule, "budget_s") + " s was spent"
                : std::string())
        << ".\n\n| op | target | runs | failed | stopped by | result |\n|---|---|---|---|---|---|\n";
    for (const json& o : ops) {
        const std::string stopped = field(o, "stopped_by");
        std::string result = runsResultText(o, confidence);
        if (countOf(o, "failures") == 0 && (stopped == "budget" || stopped == "cancelled"))
            result += stopped == "budget" ? " (the budget ran out before " + goal + ")"
                                          : " (cancelled before " + goal + ")";
        out << "| " << field(o, "index") << " " << cell(field(o, "op")) << " | " << cell(field(o, "target"))
            << " | " << field(o, "runs") << " | " << field(o, "failures") << " | " << cell(stopped) << " | "
            << cell(result) << " |\n";
    }
    if (const uint64_t more = countOf(replay, "adaptive_ops_left_out"))
        out << "\n" << more << " more op/target line(s) are in the campaign's results file (`replay/`).\n";
    out << "\n";
}

void countersTable(std::ostringstream& out, const json& before, const json& after)
{
    // Flattened leaves of both snapshots, side by side.
    std::map<std::string, std::pair<std::string, std::string>> rows;
    std::function<void(const json&, const std::string&, bool)> walk =
        [&](const json& j, const std::string& prefix, bool isAfter) {
            if (!j.is_object()) return;
            for (auto it = j.begin(); it != j.end(); ++it) {
                const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
                if (it->is_object())
                    walk(*it, key, isAfter);
                else
                    (isAfter ? rows[key].second : rows[key].first) = text(*it);
            }
        };
    walk(before, "", false);
    walk(after, "", true);
    if (rows.empty()) return;
    out << "| counter | before | after |\n|---|---|---|\n";
    for (const auto& [k, v] : rows)
        out << "| " << cell(k) << " | " << cell(v.first.empty() ? "—" : v.first) << " | "
            << cell(v.second.empty() ? "—" : v.second) << " |\n";
    out << "\n";
}

// What a campaign target ran on, for the reproduction table.
std::string roleText(const json& t)
{
    const std::string role = t.value("role", "");
    const json gpu = t.value("gpu", json());
    const std::string serial = gpu.is_object() ? field(gpu, "serial") : "—";
    if (role == "suspect") return "**the suspect GPU**";
    if (role == "simulated_stand_in") return "a simulation standing in for the suspect (simulated evidence)";
    if (role == "other_gpu")
        return "another GPU" + (serial == "—" ? std::string() : " (serial " + serial + ")");
    if (role == "simulated") return "a simulated device, not the suspect";
    if (role == "golden") return "the golden model (CPU)";
    if (role == "untied") return "no GPU it can be tied to";
    return "—";
}

}  // namespace

std::string evidenceReportMarkdown(const json& c)
{
    std::ostringstream out;
    const json& cs = c.value("case", json::object());
    const json& s = c.value("suspect", json::object());
    out << "# GPU RMA evidence — case " << field(cs, "id") << "\n\n";
    out << "Created " << field(cs, "created") << " by faultline "
        << field(c.value("software", json::object()), "faultline") << " on host "
        << field(c.value("host", json::object()), "hostname") << ". Machine-readable: `case.json` (schema "
        << text(c.value("schema_version", json())) << ").\n\n";

    out << "## Summary\n\n";
    out << "Suspect GPU: **" << field(s, "product") << "**, serial **" << field(s, "serial") << "**, UUID `"
        << field(s, "uuid") << "`, bus id `" << field(s, "bus_id") << "` (identified by "
        << field(s, "identified_by") << ").\n\n";
    const json reasons = c.value("rma_reasons", json::array());
    if (reasons.empty())
        out << "No candidate RMA reason was found.\n\n";
    else {
        out << "Candidate RMA reasons:\n\n";
        for (const json& r : reasons) out << "- " << text(r) << "\n";
        out << "\n";
    }

    const json others = c.value("other_targets", json::array());
    if (!others.empty()) {
        out << "Other targets of the campaign (context only: none of this is evidence about the suspect "
               "GPU):\n\n";
        for (const json& r : others) out << "- " << text(r) << "\n";
        out << "\n";
    }

    out << "## Checklist\n\n| needed by the vendor | present | detail |\n|---|---|---|\n";
    for (const json& i : c.value("checklist", json::array()))
        out << "| " << cell(field(i, "item")) << " | " << (i.value("present", false) ? "yes" : "**missing**")
            << " | " << cell(field(i, "detail")) << " |\n";
    out << "\n";

    const json warnings = c.value("warnings", json::array());
    if (!warnings.empty()) {
        out << "## Warnings\n\n";
        for (const json& w : warnings) out << "- " << text(w) << "\n";
        out << "\n";
    }

    const json& sym = c.value("symptom", json());
    out << "## Symptom\n\n";
    if (sym.is_object()) {
        out << "Op " << field(sym, "op_index") << " `" << field(sym, "op") << "` (" << field(sym, "name")
            << ") as recorded on device `" << field(sym, "device") << "`, compared with "
            << field(sym, "compared_with") << ": " << field(sym, "beyond_tolerance") << " of "
            << field(sym, "elements") << " elements beyond the op's error bound (" << field(sym, "mismatches")
            << " differ), max " << field(sym, "max_ulp") << " ulp, max |error| "
            << field(sym, "max_abs_error") << ".\n\n";
        out << "Signature: **" << field(sym, "signature") << "** — " << field(sym, "signature_detail")
            << "\n\n";
        if (sym.contains("region") && sym["region"].is_object())
            out << "Region beyond the bound: rows " << text(sym["region"]["rows"]) << ", columns "
                << text(sym["region"]["cols"]) << ".\n\n";
        const json flips = sym.value("bit_flips", json::array());
        std::string bits;
        for (size_t b = 0; b < flips.size(); ++b)
            if (flips[b].is_number() && flips[b].get<uint64_t>() > 0)
                bits += (bits.empty() ? "" : ", ") + std::string("bit ") + std::to_string(b) + ": " +
                        flips[b].dump();
        if (!bits.empty())
            out << "Flipped bits (elements per bit position, 0 = least significant): " << bits << ".\n\n";
    } else {
        out << "No divergent op was compared (no reproduction).\n\n";
    }

    out << "## Timeline and decoded events\n\n";
    bool anyEvents = false;
    for (const json& g : c.value("gpus", json::array())) {
        const json summary = g.value("xid_summary", json::array());
        if (summary.empty()) continue;
        anyEvents = true;
        out << "GPU `" << field(g, "bus_id") << "` (" << field(g, "role") << ", serial " << field(g, "serial")
            << "), " << field(g, "events")
            << " event(s):\n\n| Xid | count | first | last | meaning |\n|---|---|---|---|---|\n";
        for (const json& x : summary)
            out << "| " << field(x, "xid") << (field(x, "kind") == "sxid" ? " (SXid)" : "") << " | "
                << field(x, "count") << " | " << cell(field(x, "first")) << " | " << cell(field(x, "last"))
                << " | "
                << cell(field(x, "name") == "—" ? field(x, "meaning")
                                                : field(x, "name") + ": " + field(x, "meaning"))
                << " |\n";
        out << "\n";
    }
    if (!anyEvents) out << "No Xid or SXid event was found in the logs given.\n\n";
    out << "Every decoded event, one JSON object per line: `health/events.jsonl`; the full health report: "
           "`health/health.json`.\n\n";

    out << "## Health: flags and counters\n\n";
    for (const json& g : c.value("gpus", json::array())) {
        out << "### GPU `" << field(g, "bus_id") << "` (" << field(g, "role") << ")\n\n";
        out << "Serial " << field(g, "serial") << ", UUID `" << field(g, "uuid") << "`, "
            << field(g, "product") << ". Recommendation: **" << field(g, "recommendation") << "**.\n\n";
        const json flags = g.value("flags", json::object());
        if (!flags.empty()) {
            out << "Flags:";
            for (auto it = flags.begin(); it != flags.end(); ++it)
                out << " " << it.key() << " = " << text(*it) << ";";
            out << "\n\n";
        }
        for (const json& r : g.value("recommendation_reasons", json::array()))
            out << "- " << field(r, "action") << ": " << field(r, "reason") << "\n";
        if (!g.value("recommendation_reasons", json::array()).empty()) out << "\n";
        countersTable(out, g.value("counters_before", json()), g.value("counters_after", json()));
    }

    out << deviceHistoryMarkdown(c);

    out << "## Reproduction\n\n";
    const json& replay = c.value("replay", json());
    if (replay.is_object()) {
        const json& rule = replay.value("until_rate", json());
        if (rule.is_object())
            out << "Adaptive replay campaign over trace `" << field(replay, "trace") << "` (until rate "
                << field(rule, "rate") << "), seed " << field(replay, "seed");
        else
            out << "Replay campaign over trace `" << field(replay, "trace") << "`, " << field(replay, "reps")
                << " repetitions per op, seed " << field(replay, "seed");
        out << ". Rates with 95% Wilson score intervals; a target without a failure says what its runs "
               "rule out.\n\n";
        out << "| target | ran on | verdict | failed runs | rate (95% CI) | failing ops |\n"
               "|---|---|---|---|---|---|\n";
        for (const json& t : replay.value("targets", json::array())) {
            out << "| " << cell(field(t, "target")) << " | " << cell(roleText(t)) << " | "
                << field(t, "verdict") << " | " << field(t, "failures") << "/" << field(t, "runs") << " | "
                << cell(runsResultText(t, 0.95)) << " | " << text(t.value("failing_ops", json())) << " |\n";
        }
        out << "\n";
        for (const json& t : replay.value("targets", json::array()))
            out << "- `" << field(t, "target") << "`: " << field(t, "explanation")
                << (t.contains("tied_by") ? " (" + field(t, "tied_by") + ")" : std::string()) << "\n";
        out << "\n";
        adaptiveOpsSection(out, replay);
        if (replay.contains("suspect_targets") && replay["suspect_targets"].empty())
            out << "**No target of this campaign ran on the suspect GPU: its results are no evidence about "
                   "it.**\n\n";
    } else {
        out << "No replay campaign was given.\n\n";
    }
    const json& repro = c.value("reproducer", json());
    if (repro.is_object() && !repro.value("replayable", true)) {
        out << "Minimal reproducer: `reproducer/trace.h5` holds only op(s) " << text(repro["ops"])
            << " and their inputs, but `reproducer/reproduce.sh` cannot replay them automatically (it exits "
               "2 "
               "saying so): "
            << field(repro, "not_replayable") << ".\n\n";
    } else if (repro.is_object()) {
        if (repro.value("shrunk_from", json()).is_string())
            out << "Minimal reproducer: `reproducer/trace.h5` (" << field(repro, "shrunk_from")
                << ", made by `faultline shrink`) holds op " << text(repro["ops"])
                << ", one of the suspect's divergent ops, with its inputs cut down to the fewest elements "
                   "that still fail at the rate the incident's inputs did. Run `sh reproducer/reproduce.sh` "
                   "(needs faultline), which runs\n\n    "
                << field(repro, "command") << "\n\n";
        else
            out << "Minimal reproducer: `reproducer/trace.h5` holds only op(s) " << text(repro["ops"])
                << ", the suspect's divergent ops, and their inputs. Run `sh reproducer/reproduce.sh` (needs "
                   "faultline), which runs\n\n    "
                << field(repro, "command") << "\n\n";
        if (const json reps = repro.value("reps", json()); reps.is_object())
            out << "Repetitions sized to the suspect's measured rate on these ops ("
                << field(reps, "failures") << " of " << field(reps, "runs")
                << " runs failed): " << field(reps, "reps") << " repetitions of " << field(reps, "ops")
                << " op(s) fail at least once with probability "
                << percentText(reps.value("probability", 0.0)) << " (reps = " << field(reps, "formula")
                << (reps.value("capped", false) ? "; capped" : "") << ").\n\n";
        if (!repro.value("fleet_gpu", json()).is_null())
            out << "(the fleet's " << field(repro, "fleet_gpu")
                << " alone, on the target it ran as on its own node) ";
        out << "and expects:";
        const json exp = repro.value("expected", json::object());
        const json verdicts = exp.value("verdicts", json::object());
        const json mustFail = exp.value("must_fail", json::array());
        for (auto it = verdicts.begin(); it != verdicts.end(); ++it) {
            const bool fails = std::find(mustFail.begin(), mustFail.end(), json(it.key())) != mustFail.end();
            out << " `" << it.key() << "` "
                << (fails ? "fails again (the campaign found " + text(*it) + ")" : text(*it)) << ";";
        }
        out << " exit code " << field(exp, "exit_code") << ".\n\n";
    }

    const json figures = c.value("figures", json::array());
    if (!figures.empty()) {
        out << "## Figures\n\n";
        for (const json& f : figures) out << "![" << text(f) << "](" << text(f) << ")\n\n";
    }

    out << "## Ruled out\n\n";
    const json ruled = c.value("ruled_out", json::array());
    if (ruled.empty()) out << "Nothing could be ruled out from the evidence given.\n";
    for (const json& r : ruled) out << "- " << text(r) << "\n";
    out << "\n";

    out << "## Files\n\n| file | what | copied from |\n|---|---|---|\n";
    for (const json& f : c.value("files", json::array()))
        out << "| `" << cell(field(f, "path")) << "` | " << field(f, "role") << " | "
            << cell(field(f, "source")) << " |\n";
    out << "\n## Checking this bundle\n\n"
           "Without Faultline: `sha256sum -c MANIFEST.sha256` in the bundle's folder checks every file; "
           "`minisign -V "
           "-p KEY.pub -m MANIFEST.sha256` checks the signature of the manifest (KEY.pub: the signer's "
           "public key, "
           "obtained from the signer; `signing-key.pub` in the bundle is a copy).";
    if (!cs.value("signed_by", json()).is_null())
        out << " Signed with key " << field(cs, "signed_by") << ".";
    else
        out << " This bundle is not signed.";
    out << " With Faultline: `faultline verify DIR --pubkey KEY.pub` also finds added files.\n";
    return out.str();
}

}  // namespace faultline
