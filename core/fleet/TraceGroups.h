#pragma once
// Which trace a fleet campaign is of. Nodes vote on op indices, and an op index means something
// only within one trace: nodes are grouped by the content digest of the trace they replayed
// (by its path for files of an older Faultline, which carry no digest), and only the group the
// campaign is of is merged. That trace is the one the user names (`merge --trace`), else the one
// most nodes replayed; nodes of any other trace are listed with it, never merged, never voting.
// A group without a digest joins the campaign's when it names the same trace path (the same
// file, as far as anyone can tell), with a warning.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../Result.h"
#include "FleetNode.h"

namespace faultline {

struct TraceGroup {
    std::string trace;   // the path the nodes replayed
    std::string digest;  // its content digest ("" none recorded)
    uint64_t reps = 0, seed = 0;
    size_t nodes = 0;
    bool cancelled = false;
    std::map<uint32_t, FleetOpInfo> ops;  // by op index, from the group's nodes
};

// The trace the user names: its digest (traceContentDigest) and path, as given.
struct NamedTrace {
    std::string path, digest;
};

class TraceGroups {
public:
    // The group of `node` (created with its first node); adds the node's ops to it.
    uint32_t add(const FleetNode& node);
    const std::vector<TraceGroup>& groups() const { return m_groups; }

    struct Choice {
        uint32_t campaign = 0;     // the group the campaign is of
        std::vector<bool> merged;  // per group: merged into the campaign
        std::vector<std::string> warnings;
    };
    // Chooses the campaign's trace (there is at least one group). A named trace no group
    // replayed is an error (Usage) naming it.
    Result<Choice> choose(const std::optional<NamedTrace>& named) const;

private:
    std::vector<TraceGroup> m_groups;
    std::map<std::string, uint32_t> m_byKey;  // digest, or "path:" + trace without one
};

// "PATH (digest D)" or "PATH (no digest)", for messages.
std::string traceText(const TraceGroup& g);

}  // namespace faultline
