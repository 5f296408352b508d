#include "BitwiseEvidence.h"

#include "JsonFields.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace faultline {
namespace {

bool peerJudged(const RunRecord& r)
{
    return !r.peerKey.empty() && !r.goldenExact && !r.digest.empty();
}

std::string joinLabels(const std::vector<std::string>& labels)
{
    std::string s;
    for (const std::string& l : labels) s += (s.empty() ? "" : ", ") + l;
    return s;
}

}  // namespace

void judgePeers(CampaignReport& report)
{
    for (RunRecord& r : report.runs) r.vsPeers = nullptr;  // derived here, never taken from a journal
    // (op, peer key) -> target -> the digests of its completed runs.
    std::map<std::pair<size_t, std::string>, std::map<std::string, std::set<std::string>>> groups;
    for (const RunRecord& r : report.runs)
        if (peerJudged(r)) groups[{r.opIndex, r.peerKey}][r.target].insert(r.digest);

    std::map<std::pair<size_t, std::string>, std::pair<PeerBasis, std::string>> decided;  // -> basis, digest
    std::map<std::string, std::vector<size_t>> undecided;  // peers -> the ops nothing decided
    for (const auto& [key, byTarget] : groups) {
        if (byTarget.size() < 2) continue;
        PeerGroup g;
        g.opIndex = key.first;
        g.peerKey = key.second;
        for (const auto& [target, digests] : byTarget) g.targets.push_back(target);
        const auto ref = byTarget.find(report.reference);
        if (ref != byTarget.end()) {
            if (ref->second.size() == 1) {
                g.basis = PeerBasis::Reference;
                g.digest = *ref->second.begin();
            } else {
                report.warnings.push_back("op " + std::to_string(g.opIndex) + ": the reference " +
                                          report.reference + " gave " + std::to_string(ref->second.size()) +
                                          " different outputs, so its peers are not judged by its bits");
            }
        } else {
            // The digest the most targets produced at least once, if that is a strict majority.
            std::map<std::string, size_t> votes;
            for (const auto& [target, digests] : byTarget)
                for (const std::string& d : digests) ++votes[d];
            size_t best = 0, bestCount = 0;
            std::string bestDigest;
            for (const auto& [d, n] : votes) {
                if (n > best) {
                    best = n;
                    bestCount = 1;
                    bestDigest = d;
                } else if (n == best) {
                    ++bestCount;
                }
            }
            if (bestCount == 1 && 2 * best > byTarget.size()) {
                g.basis = PeerBasis::Majority;
                g.digest = bestDigest;
            }
        }
        // With nothing to decide, every peer is among the differing (they cannot all agree: a
        // single digest would have been the majority's).
        for (const auto& [target, digests] : byTarget) {
            const bool agrees =
                g.basis != PeerBasis::None && digests.size() == 1 && *digests.begin() == g.digest;
            (agrees ? g.agreeing : g.differing).push_back(target);
        }
        if (g.basis == PeerBasis::None)
            undecided[joinLabels(g.targets) + " (" + g.peerKey + ")"].push_back(g.opIndex);
        decided[key] = {g.basis, g.digest};
        report.peers.push_back(std::move(g));
    }
    for (const auto& [peers, ops] : undecided) {
        std::string list;
        for (size_t i = 0; i < ops.size(); ++i) list += (i ? ", " : "") + std::to_string(ops[i]);
        report.warnings.push_back("peers " + peers + " gave different bits on op(s) " + list +
                                  " and neither a majority nor a reference target decides which are right "
                                  "(replay --reference TARGET)");
    }
    for (RunRecord& r : report.runs) {
        if (!peerJudged(r)) continue;
        const auto d = decided.find({r.opIndex, r.peerKey});
        if (d == decided.end()) continue;
        const auto& byTarget = groups[{r.opIndex, r.peerKey}];
        r.vsPeers = {{"basis", nameOf(d->second.first)}, {"peers", byTarget.size()}};
        if (d->second.first != PeerBasis::None) r.vsPeers["equal"] = r.digest == d->second.second;
    }
}

bool isRepeatCheckJson(const nlohmann::json& v)
{
    if (!v.is_object()) return false;
    for (const char* key : {"rep", "mismatched", "flipped_bits"})
        if (v.contains(key) && !isJsonCount(v[key])) return false;
    return true;
}

std::map<std::pair<size_t, std::string>, RepeatEvidence> checkRepeatEvidence(
    const std::vector<RunRecord>& runs, std::vector<std::string>& warnings)
{
    std::map<std::tuple<size_t, std::string, uint32_t>, const RunRecord*> byRep;
    for (const RunRecord& r : runs) byRep[{r.opIndex, r.target, r.rep}] = &r;
    std::map<std::pair<size_t, std::string>, RepeatEvidence> out;
    for (const RunRecord& r : runs) {
        if (!r.vsRep.is_object()) continue;
        RepeatEvidence& e = out[{r.opIndex, r.target}];
        const uint64_t mismatched = r.vsRep.value("mismatched", uint64_t(0));
        if (mismatched > 0) ++e.differing;
        e.maxFlippedBits = std::max(e.maxFlippedBits, r.vsRep.value("flipped_bits", uint64_t(0)));
        const uint32_t against = r.vsRep.value("rep", uint32_t(0));
        const auto earlier = byRep.find({r.opIndex, r.target, against});
        if (r.digest.empty() || earlier == byRep.end() || earlier->second->digest.empty()) continue;
        const bool hostSame = earlier->second->digest == r.digest;
        if (hostSame == (mismatched == 0)) continue;
        ++e.transferMismatches;
        const std::string what =
            "op " + std::to_string(r.opIndex) + " rep " + std::to_string(r.rep) + " on " + r.target + ": ";
        if (hostSame)
            warnings.push_back(
                what + "the device found " + std::to_string(mismatched) + " element(s) different from rep " +
                std::to_string(against) +
                ", but the copies on the host are identical: the device-side comparison is suspect");
        else
            warnings.push_back(
                what + "identical to rep " + std::to_string(against) +
                " on the device, but the copy on the host differs: the bits changed between the "
                "device and the host (copy path, PCIe, host memory)");
    }
    return out;
}

}  // namespace faultline
