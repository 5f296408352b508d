#pragma once
// One node, one vote: a fleet merge counts each node once however often its results arrive (the
// same file named twice, a copy of it under another name, two files from one host and task).
// The first file given is kept; each later one is a repeat, reported with the file it repeats
// and why, and merged nowhere (docs/formats.md "Fleet campaign"). Identical content from another
// path is a repeat like the others, not an error: a copied results file is an operator's slip
// that the merge can undo without guessing, and refusing it would stop the whole merge.
//
// Likewise one physical GPU, one vote: a GPU whose UUID already voted in an earlier node (one
// machine in several tasks) is judged with the others but does not vote again.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "FleetNode.h"

namespace faultline {

struct RepeatedNode {
    std::string file;               // the file not merged
    std::string sameAs;             // the file merged in its place
    std::string reason;             // "the same file" | "identical content" | "the same host and task"
    nlohmann::json toJson() const;  // the paths as printable text
};

// The SHA-256 (hex) of a campaign document's canonical form (CBOR, keys sorted): equal for two
// copies of one results file.
std::string campaignContentDigest(const nlohmann::json& campaign);

class RepeatedNodes {
public:
    // The repeat `node` is (nullopt: it is new, and remembered from now on). `contentDigest` is
    // campaignContentDigest of the document it was read from.
    std::optional<RepeatedNode> check(const FleetNode& node, const std::string& contentDigest);
    // Marks the GPUs of `node` whose UUID voted in an earlier node (FleetGpu::votedBefore) and
    // remembers the others; returns how many it marked.
    size_t markGpusVotedBefore(FleetNode& node);
    const std::vector<RepeatedNode>& repeats() const { return m_repeats; }

private:
    std::vector<std::string> m_files;  // of the nodes kept, in order
    std::unordered_map<std::string, uint32_t> m_byContent, m_byHostTask;
    std::set<std::string> m_uuids;
    std::vector<RepeatedNode> m_repeats;
};

}  // namespace faultline
