#include "BitwiseEvidence.h"

#include "../Text.h"
#include "JsonFields.h"

namespace faultline {
namespace {

}  // namespace

bool peerJudged(const RunRecord& r)
{
    return !r.peerKey.empty() && !r.goldenExact && !r.digest.empty();
}

std::map<std::pair<size_t, std::string>, PeerDecision> judgePeers(const PeerDigests& groups,
                                                                  CampaignReport& report)
{
    std::map<std::pair<size_t, std::string>, PeerDecision> decided;
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
            undecided[joinText(g.targets) + " (" + g.peerKey + ")"].push_back(g.opIndex);
        decided[key] = {g.basis, g.digest, byTarget.size()};
        report.peers.push_back(std::move(g));
    }
    for (const auto& [peers, ops] : undecided) {
        std::string list;
        for (size_t i = 0; i < ops.size(); ++i) list += (i ? ", " : "") + std::to_string(ops[i]);
        report.warnings.push_back("peers " + peers + " gave different bits on op(s) " + list +
                                  " and neither a majority nor a reference target decides which are right "
                                  "(replay --reference TARGET)");
    }
    return decided;
}

bool isRepeatCheckJson(const nlohmann::json& v)
{
    if (!v.is_object()) return false;
    for (const char* key : {"rep", "mismatched", "flipped_bits"})
        if (v.contains(key) && !isJsonCount(v[key])) return false;
    return true;
}

std::string repeatContradiction(size_t opIndex, const std::string& target, uint32_t rep, uint32_t against,
                                uint64_t mismatched, bool hostSame)
{
    const std::string what =
        "op " + std::to_string(opIndex) + " rep " + std::to_string(rep) + " on " + target + ": ";
    if (hostSame)
        return what + "the device found " + std::to_string(mismatched) + " element(s) different from rep " +
               std::to_string(against) +
               ", but the copies on the host are identical: the device-side comparison is suspect";
    return what + "identical to rep " + std::to_string(against) +
           " on the device, but the copy on the host differs: the bits changed between the device and "
           "the host (copy path, PCIe, host memory)";
}

}  // namespace faultline
