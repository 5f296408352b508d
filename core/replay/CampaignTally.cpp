// Campaign statistics, peer judgements and verdicts, added up run by run.
#include "CampaignTally.h"

#include <algorithm>
#include <tuple>

#include "../Text.h"

namespace faultline {
namespace {

}  // namespace

const std::string* CampaignTally::RepDigests::find(uint32_t rep) const
{
    if (auto f = first.find(rep); f != first.end()) return &f->second;
    if (auto l = latest.find(rep); l != latest.end()) return &l->second;
    return nullptr;
}

void CampaignTally::RepDigests::remember(uint32_t rep, const std::string& digest)
{
    if (first.size() < kRepDigestsKept || first.count(rep)) {
        first[rep] = digest;
        return;
    }
    if (latest.emplace(rep, digest).second) latestOrder.push_back(rep);
    if (latestOrder.size() > kRepDigestsKept) {
        latest.erase(latestOrder.front());
        latestOrder.pop_front();
    }
}

void CampaignTally::checkRepeat(Cell& cell, size_t op, const std::string& target, uint32_t rep,
                                uint32_t against, bool hostSame, uint64_t mismatched)
{
    if (hostSame == (mismatched == 0)) return;
    ++cell.repeats.transferMismatches;
    if (cell.warnings.size() < kWarningsPerCell)
        cell.warnings.push_back(repeatContradiction(op, target, rep, against, mismatched, hostSame));
    else
        ++cell.warningsDropped;
}

void CampaignTally::addRepeatCheck(Cell& cell, const RunRecord& r)
{
    // Checks that waited for this repetition's digest.
    if (!r.digest.empty()) {
        const auto [begin, end] = cell.repDigests.pending.equal_range(r.rep);
        for (auto p = begin; p != end; ++p)
            checkRepeat(cell, r.opIndex, r.target, p->second.rep, r.rep, p->second.digest == r.digest,
                        p->second.mismatched);
        cell.repDigests.pending.erase(begin, end);
    }
    if (!r.vsRep.is_object()) return;
    const uint64_t mismatched = r.vsRep.value("mismatched", uint64_t(0));
    if (mismatched > 0) ++cell.repeats.differing;
    cell.repeats.maxFlippedBits =
        std::max(cell.repeats.maxFlippedBits, r.vsRep.value("flipped_bits", uint64_t(0)));
    const uint32_t against = r.vsRep.value("rep", uint32_t(0));
    if (r.digest.empty()) return;
    if (const std::string* earlier = cell.repDigests.find(against)) {
        if (!earlier->empty())
            checkRepeat(cell, r.opIndex, r.target, r.rep, against, *earlier == r.digest, mismatched);
    } else if (cell.repDigests.pending.size() < kRepDigestsKept) {
        cell.repDigests.pending.emplace(against, RepDigests::Pending{r.rep, r.digest, mismatched});
    } else {
        ++cell.repDigests.pendingDropped;
    }
}

void CampaignTally::add(RunRecord r)
{
    ++m_total;
    r.vsPeers = nullptr;  // derived in finish, never taken from a journal
    if (!r.peerKey.empty()) m_peerKeys.emplace(r.target, r.peerKey);
    bool keep = false;
    if (r.setupError) {
        // Not the target's: the op cannot be replayed (Campaign::run says why, once per op).
        ++m_setupErrorRuns;
        ++m_setupErrors[r.target];
        keep = m_unreplayable.emplace(r.opIndex, r.error).second;
    } else {
        Cell& c = m_cells[{r.opIndex, r.target}];
        OpTargetStats& s = c.stats;
        s.opIndex = r.opIndex;
        s.op = r.op;
        s.name = r.name;
        s.target = r.target;
        ++s.runs;
        if (r.failed()) ++c.failed;
        if (r.outcome == RunOutcome::Mismatch) {
            ++s.mismatches;
            if (r.vsGolden.is_object() && r.vsGolden.contains("signature"))
                ++c.signatures[r.vsGolden.value("signature", std::string())];
        }
        if (r.outcome == RunOutcome::Hang) ++s.hangs;
        if (r.outcome == RunOutcome::Crash) ++s.crashes;
        if (r.outcome == RunOutcome::Error) ++s.errors;
        if (r.outcome == RunOutcome::Error && r.deviceFault) ++s.deviceFaults;
        if (r.goldenExact) ++c.goldenExact;
        if (r.vsGolden.is_object())
            s.maxUlp = std::max<uint64_t>(s.maxUlp, r.vsGolden.value("max_ulp", uint64_t(0)));
        bool firstOutput = false, newDigest = false;
        if (!r.digest.empty()) {
            firstOutput = !c.firstDigest;
            if (!c.firstDigest || r.rep < c.firstDigest->first) c.firstDigest = {r.rep, r.digest};
            DigestCounts* counts = nullptr;
            if (auto d = c.digests.find(r.digest); d != c.digests.end()) {
                counts = &d->second;
            } else if (c.digests.size() < kDistinctOutputsKept) {
                counts = &c.digests[r.digest];
                newDigest = true;
            } else {
                c.distinctOverflow = true;
                counts = &c.overflow;
            }
            ++counts->runs;
            if (peerJudged(r)) {
                if (c.peerKey.empty()) c.peerKey = r.peerKey;
                ++counts->peerJudged;
                if (!r.failed()) {
                    ++counts->peerJudgedOk;
                    ++c.peerJudgedOk;
                }
            }
            c.repDigests.remember(r.rep, r.digest);
        }
        if (r.vsRecorded.is_object())
            for (const auto& [label, v] : r.vsRecorded.items())
                if (v.is_object() && v.contains("bitwise_equal")) {
                    auto& bits = c.rerunBits[label];
                    if (v["bitwise_equal"].get<bool>())
                        ++bits.first;
                    else if (!r.failed())
                        ++bits.second;
                }
        addRepeatCheck(c, r);
        keep = firstOutput || r.smMap.valid() || (newDigest && c.digests.size() <= kDistinctRunsKept);
        if (r.failed() && c.keptFailed < kFailedRunsKept) {
            ++c.keptFailed;
            keep = true;
        }
    }
    if (keep)
        m_notable.push_back(std::move(r));
    else if (!m_sampling)
        m_rest.push_back(std::move(r));
    if (!m_sampling && m_notable.size() + m_rest.size() > kRunsKeptInFull) {
        m_sampling = true;
        std::vector<RunRecord>().swap(m_rest);
    }
}

CampaignReport CampaignTally::finish(const std::vector<std::string>& targets,
                                     const std::map<std::string, TargetInfo>& info,
                                     const std::string& reference) const
{
    CampaignReport report;
    report.reference = reference;
    report.runsTotal = m_total;
    report.runs = m_notable;
    report.runs.insert(report.runs.end(), m_rest.begin(), m_rest.end());
    std::sort(report.runs.begin(), report.runs.end(), [](const RunRecord& a, const RunRecord& b) {
        return std::tie(a.opIndex, a.target, a.rep) < std::tie(b.opIndex, b.target, b.rep);
    });
    // A journal of an earlier session lacks nothing a summary needs but the peer keys of targets
    // whose workers did not start this time: those come from the runs.
    std::map<std::string, std::string> peerKeys = m_peerKeys;
    for (const auto& [label, i] : info)
        if (!i.peerKey.empty()) peerKeys[label] = i.peerKey;

    // Peers, by the distinct digests of each target's peer-judged runs. A target with more
    // distinct outputs than are kept has one more, of its own, standing for the rest.
    PeerDigests groups;
    for (const auto& [key, c] : m_cells) {
        if (c.peerKey.empty()) continue;
        std::set<std::string>& digests = groups[{key.first, c.peerKey}][key.second];
        for (const auto& [d, counts] : c.digests)
            if (counts.peerJudged > 0) digests.insert(d);
        if (c.overflow.peerJudged > 0) digests.insert("more-outputs-of:" + key.second);
    }
    const auto decided = judgePeers(groups, report);
    for (RunRecord& r : report.runs) {
        if (!peerJudged(r)) continue;
        const auto d = decided.find({r.opIndex, r.peerKey});
        if (d == decided.end()) continue;
        r.vsPeers = {{"basis", nameOf(d->second.basis)}, {"peers", d->second.peers}};
        if (d->second.basis != PeerBasis::None) r.vsPeers["equal"] = r.digest == d->second.digest;
    }

    // Per op × target.
    std::map<size_t, std::map<std::string, std::vector<std::string>>> agreement;
    uint64_t uncheckedRepeats = 0;
    for (const auto& [key, c] : m_cells) {
        OpTargetStats s = c.stats;
        if (!c.peerKey.empty()) {
            const auto d = decided.find({key.first, c.peerKey});
            if (d != decided.end() && d->second.basis != PeerBasis::None) {
                const auto same = c.digests.find(d->second.digest);
                s.peerMismatches = c.peerJudgedOk - (same == c.digests.end() ? 0 : same->second.peerJudgedOk);
                if (same == c.digests.end() && c.overflow.peerJudgedOk > 0)
                    report.warnings.push_back(
                        "op " + std::to_string(key.first) + " on " + key.second + ": more than " +
                        std::to_string(kDistinctOutputsKept) +
                        " distinct outputs; runs beyond those are counted as different from its peers");
            }
        }
        // A target that reproduced a rerun peer's bits runs its kernel: its other runs must too.
        for (const auto& [label, bits] : c.rerunBits)
            if (bits.first > 0 && bits.second > s.rerunMismatches) {
                s.rerunMismatches = bits.second;
                s.rerunPeer = label;
            }
        s.failures = c.failed + std::max(s.peerMismatches, s.rerunMismatches);
        s.repDiffering = c.repeats.differing;
        s.repMaxFlippedBits = c.repeats.maxFlippedBits;
        s.transferMismatches = c.repeats.transferMismatches;
        s.rate = wilsonInterval(s.failures, s.runs);
        s.distinctDigests = c.digests.size();
        s.distinctDigestsAtLeast = c.distinctOverflow;
        if (c.firstDigest) s.firstDigest = c.firstDigest->second;
        uint64_t best = 0;
        for (const auto& [kind, n] : c.signatures)
            if (n > best) {
                best = n;
                s.signature = kind;
            }
        report.warnings.insert(report.warnings.end(), c.warnings.begin(), c.warnings.end());
        if (c.warningsDropped)
            report.warnings.push_back("op " + std::to_string(key.first) + " on " + key.second + ": " +
                                      std::to_string(c.warningsDropped) +
                                      " more repetition check(s) contradict the host's digests");
        uncheckedRepeats += c.repDigests.pendingDropped;
        if (c.firstDigest) agreement[key.first][c.firstDigest->second].push_back(key.second);
        report.stats.push_back(std::move(s));
    }
    if (uncheckedRepeats)
        report.warnings.push_back(std::to_string(uncheckedRepeats) +
                                  " on-device repetition check(s) not held against the host's digests: the "
                                  "repetition compared with is not among those kept");

    // Agreement across targets, per op, by the digest of each target's first completed run.
    for (auto& [op, byDigest] : agreement) {
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
        uint64_t peerMismatches = 0, rerunMismatches = 0, deviceFaults = 0, exact = 0;
        std::set<std::string> rerunPeers;
        for (const OpTargetStats& s : report.stats) {
            if (s.target != label) continue;
            t.runs += s.runs;
            t.failures += s.failures;
            peerMismatches += s.peerMismatches;
            rerunMismatches += s.rerunMismatches;
            if (s.rerunMismatches) rerunPeers.insert(s.rerunPeer);
            deviceFaults += s.deviceFaults;
            if (s.distinctDigests > 1 || s.repDiffering > 0) t.deterministic = false;
            if (s.failures > 0) t.failingOps.push_back(s.opIndex);
            if (s.failures >= 2) t.reproducingOps.push_back(s.opIndex);
        }
        for (const auto& [key, c] : m_cells)
            if (key.second == label) exact += c.goldenExact;
        t.rate = wilsonInterval(t.failures, t.runs);
        if (auto n = m_setupErrors.find(label); n != m_setupErrors.end()) t.notReplayable = n->second;
        if (t.runs == 0) {
            t.verdict = Verdict::NoVerdict;
            t.explanation = "no run executed on this target: nothing to judge it by";
        } else if (t.failures == 0) {
            t.verdict = Verdict::Healthy;
            t.explanation =
                exact == t.runs ? "all " + std::to_string(t.runs) + " runs bit-identical to the golden model"
                : exact == 0    ? "all " + std::to_string(t.runs) + " runs within the golden model's bounds"
                             : "all " + std::to_string(t.runs) + " runs within the golden model's bounds (" +
                                   std::to_string(exact) + " bit-identical to it)";
            t.explanation += "; " + cleanRateText(t.runs);
        } else if (t.reproducingOps.empty()) {
            t.verdict = Verdict::Transient;
            t.explanation = std::to_string(t.failures) + " failure(s) on op(s) " + opListText(t.failingOps) +
                            ", none reproduced on the same op";
        } else {
            bool othersFail = false;
            for (const OpTargetStats& s : report.stats)
                if (s.target != label && s.failures > 0 &&
                    std::count(t.reproducingOps.begin(), t.reproducingOps.end(), s.opIndex))
                    othersFail = true;
            const bool alone = targets.size() > 1 && !othersFail;
            t.verdict = alone ? Verdict::DeviceSpecific : Verdict::Persistent;
            t.explanation = "reproduces on op(s) " + opListText(t.reproducingOps) + " (" +
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
        if (rerunMismatches > 0)
            t.explanation += "; " + std::to_string(rerunMismatches) +
                             " run(s) inside the golden bound but bitwise different from rerun peer " +
                             joinText(std::vector<std::string>(rerunPeers.begin(), rerunPeers.end())) +
                             "'s recorded output, which its other runs reproduced";
        if (!t.peerSplitOps.empty())
            t.explanation += "; differs bitwise from its peers on op(s) " + opListText(t.peerSplitOps) +
                             " with nothing to decide which is right";
        if (!t.deterministic && t.bitwiseStable)
            t.explanation += "; NOT bitwise deterministic across repetitions";
        report.targets.push_back(std::move(t));
    }
    return report;
}

}  // namespace faultline
