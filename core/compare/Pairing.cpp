#include "Pairing.h"

#include <functional>
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

namespace {

// Pairs `suspect` and `reference` names by key; `mismatch(i, r)` says why a pair is not
// comparable ("" when it is). `what` names the kind in messages ("tensor", "dataset").
Pairing pairNames(const std::vector<std::string>& suspect, const std::vector<std::string>& reference,
                  const PairingOptions& options, const std::string& what,
                  const std::function<std::string(size_t, size_t)>& mismatch)
{
    Pairing out;
    // Reference keys -> first index; later duplicates are errors.
    std::unordered_map<std::string, size_t> refByKey;
    std::vector<std::string> refKeys(reference.size());
    std::vector<bool> refIncluded(reference.size(), false);
    std::vector<bool> refDuplicate(reference.size(), false);
    for (size_t i = 0; i < reference.size(); ++i) {
        bool inc = false;
        refKeys[i] = pairingKey(reference[i], options.reference, &inc);
        refIncluded[i] = inc;
        if (!inc) continue;
        if (!refByKey.emplace(refKeys[i], i).second) refDuplicate[i] = true;
    }

    std::unordered_set<std::string> seenSuspect;
    std::vector<bool> refUsed(reference.size(), false);
    std::vector<UnpairedTensor> unpairedSuspect;
    for (size_t i = 0; i < suspect.size(); ++i) {
        bool inc = false;
        const std::string key = pairingKey(suspect[i], options.suspect, &inc);
        if (!inc) continue;
        if (!seenSuspect.insert(key).second) {
            out.errors.push_back({key, "suspect " + what + " '" + suspect[i] +
                                           "' has the same pairing key as an earlier one; skipped"});
            continue;
        }
        const auto it = refByKey.find(key);
        if (it == refByKey.end()) {
            unpairedSuspect.push_back({"suspect", suspect[i]});
            continue;
        }
        const size_t r = it->second;
        refUsed[r] = true;
        if (std::string why = mismatch(i, r); !why.empty()) {
            out.mismatched.push_back({key, why});
            continue;
        }
        out.pairs.push_back({key, i, r});
    }

    out.unpaired = std::move(unpairedSuspect);
    for (size_t r = 0; r < reference.size(); ++r) {
        if (!refIncluded[r]) continue;
        if (refDuplicate[r]) {
            out.errors.push_back({refKeys[r], "reference " + what + " '" + reference[r] +
                                                  "' has the same pairing key as an earlier one; skipped"});
            continue;
        }
        if (!refUsed[r]) out.unpaired.push_back({"reference", reference[r]});
    }
    return out;
}

template <class Info>
std::vector<std::string> namesOf(const std::vector<Info>& items)
{
    std::vector<std::string> names;
    names.reserve(items.size());
    for (const Info& i : items) names.push_back(i.name);
    return names;
}

std::string shapeText(const RecordInfo& r)
{
    return r.nullSpace ? std::string("null dataspace") : shapeToString(r.shape);
}

}  // namespace

Pairing pairTensors(const std::vector<TensorInfo>& suspect, const std::vector<TensorInfo>& reference,
                    const PairingOptions& options)
{
    return pairNames(namesOf(suspect), namesOf(reference), options, "tensor", [&](size_t i, size_t r) {
        const TensorInfo& s = suspect[i];
        const TensorInfo& ref = reference[r];
        if (s.dtype != ref.dtype) {
            std::string msg = "dtype " + std::string(dtypeName(s.dtype)) + " (suspect) vs " +
                              std::string(dtypeName(ref.dtype)) +
                              " (reference): bitwise comparison is meaningless";
            if (s.shape != ref.shape)
                msg += "; shape " + shapeToString(s.shape) + " vs " + shapeToString(ref.shape);
            return msg;
        }
        if (s.shape != ref.shape)
            return "shape " + shapeToString(s.shape) + " (suspect) vs " + shapeToString(ref.shape) +
                   " (reference)";
        return std::string();
    });
}

std::string recordsComparable(const RecordInfo& s, const RecordInfo& r)
{
    if (!s.notComparable.empty() || !r.notComparable.empty()) return {};  // the caller decides
    if (s.fields != r.fields) return s.type + " (suspect) vs " + r.type + " (reference)";
    if (s.nullSpace != r.nullSpace || s.shape != r.shape)
        return "shape " + shapeText(s) + " (suspect) vs " + shapeText(r) + " (reference)";
    return {};
}

Pairing pairRecords(const std::vector<RecordInfo>& suspect, const std::vector<RecordInfo>& reference,
                    const PairingOptions& options)
{
    return pairNames(namesOf(suspect), namesOf(reference), options, "dataset",
                     [&](size_t i, size_t r) { return recordsComparable(suspect[i], reference[r]); });
}

}  // namespace faultline
