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
// a pair whose dtypes or shapes differ is an "error" for that key (bitwise comparison of
// different dtypes is meaningless), as is a second tensor with the same key on one side.
#include <cstddef>
#include <string>
#include <vector>

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
    std::vector<PairError> errors;
};

// The key of `name` on one side, or "" when the group excludes it.
std::string pairingKey(const std::string& name, const PairingSide& side, bool* included);

Pairing pairTensors(const std::vector<TensorInfo>& suspect, const std::vector<TensorInfo>& reference,
                    const PairingOptions& options = {});

}  // namespace faultline
