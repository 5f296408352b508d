#pragma once
// Which suspect tensor is compared with which reference tensor: by name, after optional prefix
// rewriting on each side. Problems are per tensor, never fatal for the rest.
//
// Per side, a tensor's pairing key is its name rewritten in this order:
//   1. group:  only names starting with `group` take part (others are ignored, not reported),
//              and the group prefix is removed ("A/" vs "B/" compares A/x with B/x);
//   2. strip:  a leading `strip` prefix is removed where present ("module." from DDP);
//   3. add:    `add` is put in front.
// Pairs are reported in suspect file order; tensors whose key has no partner are "unpaired";
// a pair whose dtypes or shapes differ is "mismatched" (not comparable: bitwise comparison of
// different dtypes is meaningless); a second tensor with the same key on one side is an "error".
// Datasets that are not tensors (RecordInfo) pair the same way, by their own keys.
#include <cstddef>
#include <string>
#include <vector>

#include "../RecordInfo.h"
#include "../TensorInfo.h"

namespace faultline {

struct PairingSide {
    std::string group;
    std::string strip;
    std::string add;
};

struct PairingOptions {
    PairingSide suspect;
    PairingSide reference;
};

struct TensorPair {
    std::string key;  // the common key after rewriting
    size_t suspectIndex = 0;
    size_t referenceIndex = 0;
};

struct UnpairedTensor {
    std::string side;  // "suspect" | "reference"
    std::string name;  // name in that file
    bool operator==(const UnpairedTensor&) const = default;
};

struct PairError {
    std::string name;     // the pairing key (or the tensor name when it has none)
    std::string message;  // "dtype float32 (suspect) vs bfloat16 (reference): ..."
    bool operator==(const PairError&) const = default;
};

struct Pairing {
    std::vector<TensorPair> pairs;
    std::vector<UnpairedTensor> unpaired;  // suspect ones first, each side in file order
    std::vector<PairError> mismatched;     // dtype, shape or element type differ: not comparable
    std::vector<PairError> errors;         // a key taken twice on one side
};

// The key of `name` on one side, or "" when the group excludes it.
std::string pairingKey(const std::string& name, const PairingSide& side, bool* included);

Pairing pairTensors(const std::vector<TensorInfo>& suspect, const std::vector<TensorInfo>& reference,
                    const PairingOptions& options = {});

// The same for datasets that are not tensors: a pair is "mismatched" when its shapes or fields
// differ (recordsComparable). Pairs where either side cannot be read at all (notComparable) are
// pairs; the caller decides.
Pairing pairRecords(const std::vector<RecordInfo>& suspect, const std::vector<RecordInfo>& reference,
                    const PairingOptions& options = {});

// "" when the two can be compared value by value (same shape, same fields), else why not.
std::string recordsComparable(const RecordInfo& suspect, const RecordInfo& reference);

}  // namespace faultline
