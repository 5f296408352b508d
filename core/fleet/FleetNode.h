#pragma once
// One node's campaign as the fleet merge reads it (FleetMerge.h): who the node is, and one
// compact row per GPU with its per-op cells and first digests. The merge reads each node file
// once, tallies its votes and spools these rows (as CBOR) to a scratch file, which its second
// pass streams; it never holds the rows of the whole fleet.
//
// Everything in a node file is untrusted: every text field (host, task, labels, UUIDs, verdicts,
// digests, op names) that is not printable UTF-8 is replaced by printableText's escaped form
// (injective: distinct texts stay distinct) and named in `escaped`, so that no control character
// reaches a terminal, a report or a reproducer built from the merged campaign.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"
#include "../replay/VocabularyJson.h"

namespace faultline {

struct FleetOpCell {
    uint32_t opIndex = 0;
    uint64_t runs = 0, failures = 0, mismatches = 0, hangs = 0, crashes = 0, errors = 0;
    uint64_t distinct = 0, maxUlp = 0, peerMismatches = 0;
    double rate = 0, low = 0, high = 0;
    std::string signature;
    std::string digest;  // the first completed run's output digest ("" none)
    // A GPU with peers votes with this cell: it has a peer key and a digest.
    bool votes(const std::string& peerKey) const { return !peerKey.empty() && !digest.empty(); }
};

struct FleetGpu {
    std::string target, description, explanation, peerKey, uuid, serial, name, pciBusId;
    Verdict verdict = Verdict::NoVerdict;  // its node's (`none` where the node file has none)
    int64_t index = -1;                    // N of cuda:N, else -1
    uint64_t runs = 0, failures = 0;
    double rate = 0, low = 0, high = 0;
    bool deterministic = false;
    // The same GPU (UUID) voted in an earlier node of the merge: judged, but it does not vote again.
    bool votedBefore = false;
    std::vector<uint64_t> failingOps;
    std::vector<FleetOpCell> ops;
};

struct FleetOpInfo {
    uint32_t index = 0;
    std::string op, name;
};

struct FleetNode {
    std::string file, host, task, jobId, scheduler;
    std::string trace;
    std::string traceDigest;  // the replayed trace's content digest ("" from an older Faultline)
    uint64_t reps = 0, seed = 0;
    bool cancelled = false;
    bool named = true;  // false: no node identity, so it is named by its file
    std::vector<FleetGpu> gpus;
    std::vector<FleetOpInfo> ops;
    // Completed op results of GPUs with peers that carry no first_digest (an older Faultline).
    uint64_t unvoted = 0;
    // Which kinds of field held text that is not printable (shown escaped); not spooled.
    std::vector<std::string> escaped;
};

// Reads one node's campaign report (readCampaignResults' document of `path`). A document
// without the fields of a campaign report, or a merged fleet campaign, is an error naming the file.
Result<FleetNode> parseFleetNode(const std::string& path, const nlohmann::json& campaign);

// The rows as JSON and back (how the merge spools them).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FleetOpCell, opIndex, runs, failures, mismatches, hangs, crashes, errors,
                                   distinct, maxUlp, peerMismatches, rate, low, high, signature, digest)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FleetGpu, target, description, verdict, explanation, peerKey, uuid, serial,
                                   name, pciBusId, index, runs, failures, rate, low, high, deterministic,
                                   votedBefore, failingOps, ops)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FleetOpInfo, index, op, name)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FleetNode, file, host, task, jobId, scheduler, trace, traceDigest, reps,
                                   seed, cancelled, named, gpus, ops, unvoted)

}  // namespace faultline
