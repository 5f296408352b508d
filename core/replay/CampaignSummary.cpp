// Campaign statistics, verdicts, and their JSON and text forms.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "BitwiseEvidence.h"
#include "CampaignSummary.h"

namespace faultline {
namespace {

nlohmann::json rateJson(const RateInterval& r)
{
    return {{"rate", r.rate}, {"ci", {r.low, r.high}}};
}

std::string joinOps(const std::vector<size_t>& ops)
{
    std::string s;
    for (size_t i = 0; i < ops.size() && i < 12; ++i) s += (i ? ", " : "") + std::to_string(ops[i]);
    if (ops.size() > 12) s += ", …";
    return s;
}

}  // namespace

CampaignReport summarizeCampaign(const std::vector<RunRecord>& runs, const std::vector<std::string>& targets,
                                 const std::map<std::string, TargetInfo>& info, const std::string& reference)
{
    CampaignReport report;
    report.runs = runs;
    report.reference = reference;
    std::sort(report.runs.begin(), report.runs.end(), [](const RunRecord& a, const RunRecord& b) {
        return std::tie(a.opIndex, a.target, a.rep) < std::tie(b.opIndex, b.target, b.rep);
    });
    // A journal of an earlier session lacks nothing a summary needs but the peer keys of targets
    // whose workers did not start this time: those come from the runs.
    std::map<std::string, std::string> peerKeys;
    for (const RunRecord& r : report.runs)
        if (!r.peerKey.empty()) peerKeys.emplace(r.target, r.peerKey);
    for (const auto& [label, i] : info)
        if (!i.peerKey.empty()) peerKeys[label] = i.peerKey;
    judgePeers(report);
    const auto repeats = checkRepeatEvidence(report.runs, report.warnings);

    // Per op × target.
    std::map<std::pair<size_t, std::string>, OpTargetStats> stats;
    std::map<std::pair<size_t, std::string>, std::set<std::string>> digests;
    std::map<std::pair<size_t, std::string>, std::map<std::string, uint64_t>> signatures;
    std::map<std::pair<size_t, std::string>, std::string> firstDigest;
    std::map<std::string, uint64_t> setupErrors;
    for (const RunRecord& r : report.runs) {
        if (r.setupError) {
            // Not the target's: the op cannot be replayed (Campaign::run says why, once per op).
            ++setupErrors[r.target];
            continue;
        }
        OpTargetStats& s = stats[{r.opIndex, r.target}];
        s.opIndex = r.opIndex;
        s.op = r.op;
        s.name = r.name;
        s.target = r.target;
        ++s.runs;
        if (r.failedOrPeerMismatch()) ++s.failures;
        if (!r.failed() && r.failedOrPeerMismatch()) ++s.peerMismatches;
        if (r.outcome == RunOutcome::Mismatch) {
            ++s.mismatches;
            if (r.vsGolden.is_object() && r.vsGolden.contains("signature"))
                ++signatures[{r.opIndex, r.target}][r.vsGolden.value("signature", std::string())];
        }
        if (r.outcome == RunOutcome::Hang) ++s.hangs;
        if (r.outcome == RunOutcome::Crash) ++s.crashes;
        if (r.outcome == RunOutcome::Error) ++s.errors;
        if (r.outcome == RunOutcome::Error && r.deviceFault) ++s.deviceFaults;
        if (!r.digest.empty()) {
            digests[{r.opIndex, r.target}].insert(r.digest);
            firstDigest.emplace(std::make_pair(r.opIndex, r.target), r.digest);
        }
        if (r.vsGolden.is_object())
            s.maxUlp = std::max<uint64_t>(s.maxUlp, r.vsGolden.value("max_ulp", uint64_t(0)));
    }
    for (auto& [key, s] : stats) {
        if (const auto e = repeats.find(key); e != repeats.end()) {
            s.repDiffering = e->second.differing;
            s.repMaxFlippedBits = e->second.maxFlippedBits;
            s.transferMismatches = e->second.transferMismatches;
        }
        s.rate = wilsonInterval(s.failures, s.runs);
        s.distinctDigests = digests[key].size();
        if (const auto f = firstDigest.find(key); f != firstDigest.end()) s.firstDigest = f->second;
        uint64_t best = 0;
        for (const auto& [kind, n] : signatures[key])
            if (n > best) {
                best = n;
                s.signature = kind;
            }
        report.stats.push_back(s);
    }

    // Agreement across targets, per op, by the digest of each target's first completed run.
    std::map<size_t, std::map<std::string, std::vector<std::string>>> groups;
    for (const auto& [key, digest] : firstDigest) groups[key.first][digest].push_back(key.second);
    for (auto& [op, byDigest] : groups) {
        std::vector<std::vector<std::string>> g;
        for (auto& [d, labels] : byDigest) g.push_back(labels);
        std::sort(g.begin(), g.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
        report.agreement.emplace_back(op, std::move(g));
    }

    // Per target: rates, certificate, verdict.
    for (const std::string& label : targets) {
        TargetSummary t;
        t.target = label;
        auto d = info.find(label);
        if (d != info.end()) {
            t.description = d->second.description;
            t.bitwiseStable = d->second.bitwiseStable;
        }
        if (auto k = peerKeys.find(label); k != peerKeys.end()) t.peerKey = k->second;
        for (const PeerGroup& g : report.peers)
            if (g.basis == PeerBasis::None && std::count(g.targets.begin(), g.targets.end(), label))
                t.peerSplitOps.push_back(g.opIndex);
        uint64_t peerMismatches = 0, deviceFaults = 0;
        for (const OpTargetStats& s : report.stats) {
            if (s.target != label) continue;
            t.runs += s.runs;
            t.failures += s.failures;
            peerMismatches += s.peerMismatches;
            deviceFaults += s.deviceFaults;
            if (s.distinctDigests > 1 || s.repDiffering > 0) t.deterministic = false;
            if (s.failures > 0) t.failingOps.push_back(s.opIndex);
            if (s.failures >= 2) t.reproducingOps.push_back(s.opIndex);
        }
        t.rate = wilsonInterval(t.failures, t.runs);
        t.notReplayable = setupErrors[label];
        if (t.runs == 0) {
            t.verdict = Verdict::NoVerdict;
            t.explanation = "no run executed on this target: nothing to judge it by";
        } else if (t.failures == 0) {
            t.verdict = Verdict::Healthy;
            uint64_t exact = 0;
            for (const RunRecord& r : report.runs)
                if (r.target == label && r.goldenExact) ++exact;
            t.explanation =
                exact == t.runs ? "all " + std::to_string(t.runs) + " runs bit-identical to the golden model"
                : exact == 0    ? "all " + std::to_string(t.runs) + " runs within the golden model's bounds"
                             : "all " + std::to_string(t.runs) + " runs within the golden model's bounds (" +
                                   std::to_string(exact) + " bit-identical to it)";
        } else if (t.reproducingOps.empty()) {
            t.verdict = Verdict::Transient;
            t.explanation = std::to_string(t.failures) + " failure(s) on op(s) " + joinOps(t.failingOps) +
                            ", none reproduced on the same op";
        } else {
            bool othersFail = false;
            for (const OpTargetStats& s : report.stats)
                if (s.target != label && s.failures > 0 &&
                    std::count(t.reproducingOps.begin(), t.reproducingOps.end(), s.opIndex))
                    othersFail = true;
            const bool alone = targets.size() > 1 && !othersFail;
            t.verdict = alone ? Verdict::DeviceSpecific : Verdict::Persistent;
            t.explanation = "reproduces on op(s) " + joinOps(t.reproducingOps) + " (" +
                            std::to_string(t.failures) + " of " + std::to_string(t.runs) + " runs failed)" +
                            (alone ? "; no other target fails them" : "");
        }
        if (deviceFaults > 0)
            t.explanation +=
                "; " + std::to_string(deviceFaults) +
                " device fault(s): sticky CUDA errors that poisoned the context (worker restarted)";
        if (peerMismatches > 0)
            t.explanation +=
                "; " + std::to_string(peerMismatches) +
                " run(s) inside the golden bound but bitwise different from its peers' reference";
        if (!t.peerSplitOps.empty())
            t.explanation += "; differs bitwise from its peers on op(s) " + joinOps(t.peerSplitOps) +
                             " with nothing to decide which is right";
        if (!t.deterministic && t.bitwiseStable)
            t.explanation += "; NOT bitwise deterministic across repetitions";
        report.targets.push_back(std::move(t));
    }
    return report;
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
        nlohmann::json t = {{"runs", s.runs},
                            {"failures", s.failures},
                            {"mismatches", s.mismatches},
                            {"hangs", s.hangs},
                            {"crashes", s.crashes},
                            {"errors", s.errors},
                            {"device_faults", s.deviceFaults},
                            {"distinct_outputs", s.distinctDigests},
                            {"max_ulp", s.maxUlp},
                            {"signature", s.signature},
                            {"peer_mismatches", s.peerMismatches}};
        if (!s.firstDigest.empty()) t["first_digest"] = s.firstDigest;
        if (s.repDiffering || s.transferMismatches || s.repMaxFlippedBits)
            t["on_device_repeat"] = {{"differing", s.repDiffering},
                                     {"max_flipped_bits", s.repMaxFlippedBits},
                                     {"transfer_mismatches", s.transferMismatches}};
        t.update(rateJson(s.rate));
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
        {"warnings", report.warnings},
        {"cancelled", report.cancelled},
        {"reference", report.reference.empty() ? nlohmann::json() : nlohmann::json(report.reference)}};
    if (!report.node.is_null()) doc["node"] = report.node;
    return doc;
}

std::string campaignText(const CampaignReport& report)
{
    std::ostringstream out;
    out << "replay of " << report.trace << ": " << report.ops.size() << " op(s) x " << report.targets.size()
        << " target(s) x " << report.reps << " rep(s)" << (report.cancelled ? " (cancelled)" : "") << "\n";
    char line[512];
    std::snprintf(line, sizeof line, "  %-34s %-16s %9s  %-22s %s\n", "target", "verdict", "failures",
                  "rate (95% CI)", "deterministic");
    out << line;
    for (const TargetSummary& t : report.targets) {
        const std::string rate =
            percentText(t.rate.rate) + " [" + percentText(t.rate.low) + ", " + percentText(t.rate.high) + "]";
        std::snprintf(line, sizeof line, "  %-34s %-16s %4llu/%-4llu  %-22s %s\n", t.target.c_str(),
                      nameOf(t.verdict).c_str(), static_cast<unsigned long long>(t.failures),
                      static_cast<unsigned long long>(t.runs), rate.c_str(), t.deterministic ? "yes" : "no");
        out << line;
        out << "      " << t.explanation << "\n";
    }
    for (const OpTargetStats& s : report.stats) {
        if (s.failures == 0) continue;
        out << "  op " << s.opIndex << " " << s.op << " (" << s.name << ") on " << s.target << ": "
            << s.failures << "/" << s.runs << " failed";
        if (s.mismatches)
            out << ", " << s.mismatches << " mismatch (max " << s.maxUlp << " ulp, " << s.signature << ")";
        if (s.peerMismatches) out << ", " << s.peerMismatches << " bitwise different from its peers";
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
    for (const auto& [what, ops] : peerLines) out << "  " << what << " (op " << joinOps(ops) << ")\n";
    for (const std::string& w : report.warnings) out << "warning: " << w << "\n";
    return out.str();
}

}  // namespace faultline
