#include "Pairing.h"

#include <unordered_map>
#include <unordered_set>

namespace faultline {

std::string pairingKey(const std::string& name, const PairingSide& side, bool* included)
{
    std::string key = name;
    if (!side.group.empty()) {
        if (key.compare(0, side.group.size(), side.group) != 0) {
            if (included) *included = false;
            return {};
        }
        key.erase(0, side.group.size());
    }
    if (!side.strip.empty() && key.compare(0, side.strip.size(), side.strip) == 0)
        key.erase(0, side.strip.size());
    if (included) *included = true;
    return side.add + key;
}

Pairing pairTensors(const std::vector<TensorInfo>& suspect, const std::vector<TensorInfo>& reference,
                    const PairingOptions& options)
{
    Pairing out;
    // Reference keys -> first index; later duplicates are errors.
    std::unordered_map<std::string, size_t> refByKey;
    std::vector<std::string> refKeys(reference.size());
    std::vector<bool> refIncluded(reference.size(), false);
    std::vector<bool> refDuplicate(reference.size(), false);
    for (size_t i = 0; i < reference.size(); ++i) {
        bool inc = false;
        refKeys[i] = pairingKey(reference[i].name, options.reference, &inc);
        refIncluded[i] = inc;
        if (!inc) continue;
        if (!refByKey.emplace(refKeys[i], i).second) refDuplicate[i] = true;
    }

    std::unordered_set<std::string> seenSuspect;
    std::vector<bool> refUsed(reference.size(), false);
    std::vector<UnpairedTensor> unpairedSuspect;
    for (size_t i = 0; i < suspect.size(); ++i) {
        bool inc = false;
        const std::string key = pairingKey(suspect[i].name, options.suspect, &inc);
        if (!inc) continue;
        if (!seenSuspect.insert(key).second) {
            out.errors.push_back({key, "suspect tensor '" + suspect[i].name +
                                           "' has the same pairing key as an earlier one; skipped"});
            continue;
        }
        const auto it = refByKey.find(key);
        if (it == refByKey.end()) {
            unpairedSuspect.push_back({"suspect", suspect[i].name});
            continue;
        }
        const size_t r = it->second;
        refUsed[r] = true;
        const TensorInfo& s = suspect[i];
        const TensorInfo& ref = reference[r];
        if (s.dtype != ref.dtype) {
            std::string msg = "dtype " + std::string(dtypeName(s.dtype)) + " (suspect) vs " +
                              std::string(dtypeName(ref.dtype)) +
                              " (reference): bitwise comparison is meaningless";
            if (s.shape != ref.shape)
                msg += "; shape " + shapeToString(s.shape) + " vs " + shapeToString(ref.shape);
            out.errors.push_back({key, msg});
            continue;
        }
        if (s.shape != ref.shape) {
            out.errors.push_back({key, "shape " + shapeToString(s.shape) + " (suspect) vs " +
                                           shapeToString(ref.shape) + " (reference)"});
            continue;
        }
        out.pairs.push_back({key, i, r});
    }

    out.unpaired = std::move(unpairedSuspect);
    for (size_t r = 0; r < reference.size(); ++r) {
        if (!refIncluded[r]) continue;
        if (refDuplicate[r]) {
            out.errors.push_back({refKeys[r], "reference tensor '" + reference[r].name +
                                                  "' has the same pairing key as an earlier one; skipped"});
            continue;
        }
        if (!refUsed[r]) out.unpaired.push_back({"reference", reference[r].name});
    }
    return out;
}

}  // namespace faultline
