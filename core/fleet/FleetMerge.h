#pragma once
// Merging the campaigns of many nodes into one fleet campaign (`faultline merge`): every GPU
// (host, task, target, index, UUID, serial, peer key) with its node's verdict, failures, rate and
// interval, and a fleet-wide vote of peers. GPUs with the same peer key (GPU model, SM count,
// driver and library versions) owe each other identical bits on production-library ops: per op
// and peer key, the digest a strict majority of them produced is the reference, and a GPU whose
// first completed run differs is an outlier, named with how many peers agreed.
//
// Two passes, so memory depends not on the size of the files and on the fleet's size only by a
// few hundred bytes per node: the first reads each node file once, keeps one digest tally per
// (trace, op, peer key) and per node its file's path, host, task, trace group, content digest and
// GPU UUIDs, and spools the node's compact rows to a scratch directory; the second streams the
// spool, judges every GPU against the decided votes and writes its rows into section files
// there, which are then joined into the merged report. The result is
// a campaign report's JSON (targets, ops) plus "fleet" (docs/formats.md).
//
// Node files are untrusted, and none may sway a vote it does not own: a node given twice (the
// same file, a copy, two files of one host and task) counts once (RepeatedNodes.h); a GPU votes
// once however many nodes list its UUID; votes are counted per trace, and only the nodes of the
// campaign's trace are merged (TraceGroups.h); text fields are printable (FleetNode.h).
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "../Result.h"
#include "FleetNode.h"
#include "RepeatedNodes.h"
#include "TraceGroups.h"

namespace faultline {

class FleetMerger {
public:
    // Scratch files go to a private directory under `scratchParent` (the temporary directory
    // when empty), created on the first add and removed with the merger.
    explicit FleetMerger(std::string scratchParent = {});
    FleetMerger(const FleetMerger&) = delete;
    FleetMerger& operator=(const FleetMerger&) = delete;
    ~FleetMerger();

    // Pass one: checks one node's campaign (readCampaignResults' document of `path`), adds it to
    // the tally and spools its rows. A document without the fields of a campaign report is an
    // error naming the file; nothing is added then. A node that repeats one added before is not
    // added either: it is listed (fleet.repeated_nodes) with a warning naming both files.
    Status add(const std::string& path, const nlohmann::json& campaign);
    // Reads `path` with readCampaignResults and adds it.
    Status addFile(const std::string& path);
    // Tasks the fleet job had (0..n-1): those no file came from are listed as missing.
    void expectTasks(uint32_t n) { m_expectedTasks = n; }
    // A task known to have failed (its exit code, its scheduler state): listed with the reason.
    void taskFailed(const std::string& task, const std::string& reason) { m_failedTasks[task] = reason; }
    // The trace the campaign is of (default: the one most nodes replayed).
    void nameTrace(NamedTrace trace) { m_namedTrace = std::move(trace); }

    // Pass two: reads every node again and writes the merged report: the campaign results file
    // `path` unless it is empty, and the report's JSON text to `json` unless it is null. Returns
    // the summary: what a person reads first (counts, missing tasks, GPUs not healthy, outliers,
    // repeated nodes, nodes of another trace, warnings). A named trace no node replayed is an
    // error.
    Result<nlohmann::json> finish(const std::string& path, std::ostream* json) const;
    Status write(const std::string& path) const { return finish(path, nullptr).status(); }
    Status writeJson(std::ostream& out) const { return finish({}, &out).status(); }
    Result<nlohmann::json> summary() const { return finish({}, nullptr); }
    // The merged report as one JSON tree: for small fleets and tests.
    Result<nlohmann::json> result() const;
    // Nodes added (repeats are not), of any trace.
    size_t nodeCount() const { return m_nodeCount; }

private:
    struct Spool;  // the scratch directory and the spooled rows (FleetMerge.cpp)
    struct Vote {
        uint32_t group = 0;  // the trace group (TraceGroups) of the GPUs that voted
        uint32_t opIndex = 0;
        std::string peerKey;
        std::vector<std::string> digests;
        std::vector<uint32_t> counts;
    };
    class Pass;  // the second pass (FleetMerge.cpp)

    void tally(const FleetNode& node, uint32_t group);
    void warn(std::string warning);
    std::pair<nlohmann::json, std::vector<std::string>> missingTasks(const TraceGroups::Choice& choice) const;
    nlohmann::json header(const TraceGroups::Choice& choice) const;

    std::string m_scratchParent;
    std::unique_ptr<Spool> m_spool;
    size_t m_nodeCount = 0;
    std::vector<uint32_t> m_nodeGroups;  // per node added: its trace group
    std::vector<Vote> m_votes;
    std::map<std::tuple<uint32_t, uint32_t, std::string>, uint32_t> m_voteIndex;  // group, op, peer key
    TraceGroups m_groups;
    RepeatedNodes m_repeated;
    std::unordered_map<std::string, uint32_t> m_hostUses;                 // nodes per host
    std::unordered_map<std::string, std::vector<uint32_t>> m_taskGroups;  // per task: its nodes' groups
    std::map<std::string, uint32_t> m_repeatedTasks;                      // tasks with more than one file
    std::vector<std::string> m_warnings;
    uint64_t m_warningsLeftOut = 0;
    std::optional<uint32_t> m_expectedTasks;
    std::map<std::string, std::string> m_failedTasks;
    std::optional<NamedTrace> m_namedTrace;
};

}  // namespace faultline
