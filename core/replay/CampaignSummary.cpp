// Campaign statistics, verdicts, and their JSON and text forms.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "../Text.h"
#include "CampaignSummary.h"
#include "CampaignTally.h"
#include "RulesOut.h"

namespace faultline {
namespace {

nlohmann::json rateJson(const RateInterval& r)
{
    return {{"rate", r.rate}, {"ci", {r.low, r.high}}};
}

// One op on one target of an adaptive campaign: which op, then what ended its runs.
std::string stoppingText(const OpTargetStats& s, const StoppingRule& rule)
{
    return "op " + std::to_string(s.opIndex) + " " + s.op + " on " + s.target + ": " +
           stoppedByText(*s.stoppedBy, s.runs, s.failures, rule);
}

}  // namespace

std::string stoppedByText(StoppedBy stopped, uint64_t runs, uint64_t failures, const StoppingRule& rule)
{
    const std::string goal =
        "rate < " + rateNumberText(rule.untilRate) + " at " + confidenceText(rule.confidence);
    switch (stopped) {
        case StoppedBy::Failure:
            return "stopped by a failure after " + std::to_string(runs) + " run(s) (" +
                   std::to_string(failures) + " failed)";
        case StoppedBy::Rate:
            return cleanRateText(runs, rule.confidence) + " (stopped by rate: " + goal + " reached)";
        case StoppedBy::Budget:
        case StoppedBy::Cancelled: {
            const std::string why = stopped == StoppedBy::Budget ? "budget spent" : "cancelled";
            return (runs ? cleanRateText(runs, rule.confidence) : std::string("no run")) + " (stopped by " +
                   nameOf(stopped) + ": " + why + " before " + goal + ")";
        }
    }
    return {};
}

CampaignReport summarizeCampaign(const std::vector<RunRecord>& runs, const std::vector<std::string>& targets,
                                 const std::map<std::string, TargetInfo>& info, const std::string& reference)
{
    std::vector<const RunRecord*> ordered;
    ordered.reserve(runs.size());
    for (const RunRecord& r : runs) ordered.push_back(&r);
    std::stable_sort(ordered.begin(), ordered.end(), [](const RunRecord* a, const RunRecord* b) {
        return std::tie(a->opIndex, a->target, a->rep) < std::tie(b->opIndex, b->target, b->rep);
    });
    CampaignTally tally;
    for (const RunRecord* r : ordered) tally.add(*r);
    return tally.finish(targets, info, reference);
}

nlohmann::json campaignJson(const CampaignReport& report)
{
    nlohmann::json targets = nlohmann::json::array();
    for (const TargetSummary& t : report.targets) {
        nlohmann::json j = {
            {"target", t.target},
            {"description", t.description},
            {"verdict", nameOf(t.verdict)},
            {"explanation", t.explanation},
            // What a clean target rules out (null where it failed or ran nothing).
            {"rules_out", rulesOutJson(t.failures, t.runs)},
            {"runs", t.runs},
            {"executed_runs", t.runs},
            {"not_replayable_runs", t.notReplayable},
            {"failures", t.failures},
            {"failing_ops", t.failingOps},
            {"reproducing_ops", t.reproducingOps},
            {"determinism", {{"expected", t.bitwiseStable}, {"certified", t.deterministic && t.runs > 0}}}};
        if (!t.peerKey.empty()) j["peer_key"] = t.peerKey;
        if (!t.peerSplitOps.empty()) j["peer_split_ops"] = t.peerSplitOps;
        j.update(rateJson(t.rate));
        targets.push_back(std::move(j));
    }
    nlohmann::json ops = nlohmann::json::array();
    std::map<size_t, nlohmann::json> byOp;
    for (const OpTargetStats& s : report.stats) {
        nlohmann::json& o = byOp[s.opIndex];
        if (o.is_null())
            o = {{"index", s.opIndex}, {"op", s.op}, {"name", s.name}, {"targets", nlohmann::json::object()}};
        nlohmann::json t = {
            {"runs", s.runs},
            {"failures", s.failures},
            {"mismatches", s.mismatches},
            {"hangs", s.hangs},
            {"crashes", s.crashes},
            {"errors", s.errors},
            {"device_faults", s.deviceFaults},
            {"distinct_outputs", s.distinctDigests},
            {"distinct_outputs_at_least", s.distinctDigestsAtLeast},
            {"max_ulp", s.maxUlp},
            {"signature", s.signature},
            {"peer_mismatches", s.peerMismatches},
            {"rerun_mismatches", s.rerunMismatches},
            {"rerun_peer", s.rerunPeer.empty() ? nlohmann::json() : nlohmann::json(s.rerunPeer)}};
        if (!s.firstDigest.empty()) t["first_digest"] = s.firstDigest;
        if (s.repDiffering || s.transferMismatches || s.repMaxFlippedBits)
            t["on_device_repeat"] = {{"differing", s.repDiffering},
                                     {"max_flipped_bits", s.repMaxFlippedBits},
                                     {"transfer_mismatches", s.transferMismatches}};
        t.update(rateJson(s.rate));
        if (s.stoppedBy) {
            t["stopped_by"] = nameOf(*s.stoppedBy);
            t["rules_out"] = rulesOutJson(s.failures, s.runs, report.stopping.confidence);
        }
        o["targets"][s.target] = std::move(t);
    }
    for (const auto& [op, groups] : report.agreement)
        if (byOp.count(op)) byOp[op]["agreement"] = groups;
    for (const PeerGroup& g : report.peers) {
        if (!byOp.count(g.opIndex)) continue;
        nlohmann::json p = {{"peer_key", g.peerKey},
                            {"targets", g.targets},
                            {"basis", nameOf(g.basis)},
                            {"agreeing", g.agreeing},
                            {"differing", g.differing}};
        if (!g.digest.empty()) p["digest"] = g.digest;
        byOp[g.opIndex]["peers"].push_back(std::move(p));
    }
    for (auto& [i, o] : byOp) ops.push_back(std::move(o));
    nlohmann::json runs = nlohmann::json::array();
    for (const RunRecord& r : report.runs) runs.push_back(r.toJson());
    nlohmann::json doc = {
        {"trace", report.trace},
        {"reps", report.reps},
        {"seed", report.seed},
        {"ops_selected", report.ops},
        {"targets", targets},
        {"ops", ops},
        {"runs", runs},
        {"runs_total", std::max<uint64_t>(report.runsTotal, report.runs.size())},
        {"runs_listed", report.runs.size()},
        {"warnings", report.warnings},
        {"cancelled", report.cancelled},
        {"reference", report.reference.empty() ? nlohmann::json() : nlohmann::json(report.reference)}};
    if (report.stopping.adaptive())
        doc["until_rate"] = {
            {"rate", report.stopping.untilRate},
            {"confidence", report.stopping.confidence},
            {"budget_s", report.stopping.budget.count() > 0
                             ? nlohmann::json(double(report.stopping.budget.count()) / 1000.0)
                             : nlohmann::json()}};
    if (!report.traceDigest.empty()) doc["trace_digest"] = report.traceDigest;
    if (!report.node.is_null()) doc["node"] = report.node;
    return doc;
}

std::string campaignText(const CampaignReport& report)
{
    std::ostringstream out;
    out << "replay of " << report.trace << ": " << report.ops.size() << " op(s) x " << report.targets.size()
        << " target(s) x ";
    if (report.stopping.adaptive())
        out << "runs until a failure or rate < " << rateNumberText(report.stopping.untilRate) << " at "
            << confidenceText(report.stopping.confidence);
    else
        out << report.reps << " rep(s)";
    out << (report.cancelled ? " (cancelled)" : "") << "\n";
    char line[512];
    std::snprintf(line, sizeof line, "  %-34s %-16s %9s  %-22s %s\n", "target", "verdict", "failures",
                  "rate (95% CI)", "deterministic");
    out << line;
    for (const TargetSummary& t : report.targets) {
        // A clean target's rate column says what it rules out, not a bare 0%.
        const std::string rate = t.failures == 0 && t.runs > 0
                                     ? "< " + rateBoundText(cleanRateBound(t.runs)) + " (95%)"
                                     : rateText(t.rate);
        std::snprintf(line, sizeof line, "  %-34s %-16s %4llu/%-4llu  %-22s %s\n", t.target.c_str(),
                      nameOf(t.verdict).c_str(), static_cast<unsigned long long>(t.failures),
                      static_cast<unsigned long long>(t.runs), rate.c_str(), t.deterministic ? "yes" : "no");
        out << line;
        out << "      " << t.explanation << "\n";
    }
    for (const OpTargetStats& s : report.stats)
        if (s.stoppedBy) out << "  " << stoppingText(s, report.stopping) << "\n";
    for (const OpTargetStats& s : report.stats) {
        if (s.failures == 0) continue;
        out << "  op " << s.opIndex << " " << s.op << " (" << s.name << ") on " << s.target << ": "
            << s.failures << "/" << s.runs << " failed";
        if (s.mismatches)
            out << ", " << s.mismatches << " mismatch (max " << s.maxUlp << " ulp, " << s.signature << ")";
        if (s.peerMismatches) out << ", " << s.peerMismatches << " bitwise different from its peers";
        if (s.rerunMismatches)
            out << ", " << s.rerunMismatches << " bitwise different from rerun peer " << s.rerunPeer;
        if (s.hangs) out << ", " << s.hangs << " hang";
        if (s.crashes) out << ", " << s.crashes << " crash";
        if (s.errors) out << ", " << s.errors << " error";
        if (s.deviceFaults)
            out << " (" << s.deviceFaults << " device fault: sticky CUDA error, worker restarted)";
        out << "\n";
    }
    // Peer judgements, one line per outcome with the ops it holds for.
    std::map<std::string, std::vector<size_t>> peerLines;
    for (const PeerGroup& g : report.peers) {
        std::string what = "peers (" + g.peerKey + "): ";
        if (g.basis == PeerBasis::None) {
            what += "undecided between";
            for (size_t i = 0; i < g.targets.size(); ++i) what += (i ? ", " : " ") + g.targets[i];
        } else if (g.differing.empty()) {
            what += "all bitwise identical";
        } else {
            what += "by " + nameOf(g.basis) + ", bitwise different:";
            for (size_t i = 0; i < g.differing.size(); ++i) what += (i ? ", " : " ") + g.differing[i];
        }
        peerLines[what].push_back(g.opIndex);
    }
    for (const auto& [what, ops] : peerLines) out << "  " << what << " (op " << opListText(ops) << ")\n";
    for (const std::string& w : report.warnings) out << "warning: " << w << "\n";
    return out.str();
}

}  // namespace faultline
