#pragma once
// Merging the campaigns of many nodes into one fleet campaign (`faultline merge`): every GPU
// (host, task, target, index, UUID, serial, peer key) with its node's verdict, failures, rate and
// interval, and a fleet-wide vote of peers. GPUs with the same peer key (GPU model, SM count,
// driver and library versions) owe each other identical bits on production-library ops: per op
// and peer key, the digest a strict majority of them produced is the reference, and a GPU whose
// first completed run differs is an outlier, named with how many peers agreed.
//
// Files are read one at a time and dropped: what stays is one compact row per GPU (and op) and
// one digest tally per (op, peer key), so memory does not grow with the size of the inputs. The
// result is a campaign report's JSON (targets, ops) plus "fleet" (docs/formats.md).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

class FleetMerger {
public:
    // Adds one node's campaign (readCampaignResults' document of `path`). A document without the
    // fields of a campaign report is an error naming the file; nothing is added then.
    Status add(const std::string& path, const nlohmann::json& campaign);
    // Reads `path` with readCampaignResults and adds it.
    Status addFile(const std::string& path);
    // Tasks the fleet job had (0..n-1): those no file came from are listed as missing.
    void expectTasks(uint32_t n) { m_expectedTasks = n; }
    // A task known to have failed (its exit code, its scheduler state): listed with the reason.
    void taskFailed(const std::string& task, const std::string& reason) { m_failedTasks[task] = reason; }

    // Writes the merged campaign results file (never holding the merged document in memory).
    Status write(const std::string& path) const;
    // The merged report's JSON text (campaign report fields plus "fleet"), written piece by piece.
    void writeJson(std::ostream& out) const;
    // The merged report as one JSON tree: for small fleets and tests.
    nlohmann::json result() const;
    // What a person reads first: counts, missing tasks, GPUs not healthy, outliers, warnings.
    nlohmann::json summary() const;
    size_t nodeCount() const { return m_nodes.size(); }

private:
    struct Node {
        std::string file, host, task, jobId, scheduler;
        size_t targets = 0;
        bool cancelled = false;
    };
    struct OpCell {
        uint32_t opIndex = 0;
        uint64_t runs = 0, failures = 0, mismatches = 0, hangs = 0, crashes = 0, errors = 0;
        uint64_t distinct = 0, maxUlp = 0, peerMismatches = 0;
        double rate = 0, low = 0, high = 0;
        std::string signature;
        int32_t vote = -1;  // index into m_votes, or -1 (no peers)
        uint32_t digest = 0;
    };
    struct Gpu {
        uint32_t node = 0;
        std::string target, description, verdict, explanation, peerKey, uuid, serial, name, pciBusId;
        int64_t index = -1;
        uint64_t runs = 0, failures = 0;
        double rate = 0, low = 0, high = 0;
        bool deterministic = false;
        std::vector<uint64_t> failingOps;
        std::vector<OpCell> ops;
    };
    struct Vote {
        uint32_t opIndex = 0;
        std::string peerKey;
        std::vector<std::string> digests;
        std::vector<uint32_t> counts;
    };
    struct OpInfo {
        std::string op, name;
    };

    struct Decision {
        int64_t majority = -1;  // the digest index a strict majority produced, or -1
        uint32_t total = 0, agreeing = 0;
    };
    struct Verdicts {
        std::vector<std::string> labels;  // per GPU: host/target (host#task/target for a shared host)
        std::vector<Decision> votes;      // per m_votes entry
    };
    std::vector<std::string> labels() const;
    Verdicts decide() const;
    std::vector<uint32_t> outlierOps(const Verdicts& v, size_t gpu) const;
    nlohmann::json outlierJson(const Verdicts& v, size_t gpu) const;
    std::pair<std::string, std::string> verdictOf(const Verdicts& v, size_t gpu) const;
    nlohmann::json targetJson(const Verdicts& v, size_t gpu) const;
    nlohmann::json gpuRow(const Verdicts& v, size_t gpu) const;
    nlohmann::json cellJson(const Verdicts& v, const OpCell& cell) const;
    std::pair<nlohmann::json, std::vector<std::string>> missingTasks() const;
    nlohmann::json header() const;

    std::vector<Node> m_nodes;
    std::vector<Gpu> m_gpus;
    std::vector<Vote> m_votes;
    std::map<std::pair<uint32_t, std::string>, uint32_t> m_voteIndex;
    std::map<uint32_t, OpInfo> m_ops;
    std::vector<std::string> m_warnings;
    std::string m_trace;
    uint64_t m_reps = 0, m_seed = 0;
    std::optional<uint32_t> m_expectedTasks;
    std::map<std::string, std::string> m_failedTasks;
};

}  // namespace faultline
