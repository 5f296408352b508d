#pragma once
// Data-parallel replicas as peers: ranks that computed the same op from the same inputs (the
// optimizer step after the gradients' all-reduce, any op of ranks that saw the same batch) must
// produce the same bits on the same kind of device. In a merged trace (merge-traces stores
// identical tensors once, so equal inputs have equal ids) each rank's op is its own op with its
// own device's outputs; a replica of the suspect's op is another device's op with the same op
// kind, the same parameters and the same input ids.
//
// Determinism is checked, not assumed: two or more replicas that agree bit for bit among
// themselves judge the suspect bit for bit; one replica judges it only where the two agree (two
// devices gave the same bits); replicas that differ from each other, or a lone replica that
// differs from the suspect, leave the op to the golden model with the reason.
#include <map>
#include <string>
#include <vector>

#include "../Result.h"
#include "../trace/Trace.h"

namespace faultline {

struct ReplicaOutputs {
    std::string label;                 // the replica's device
    size_t opIndex = 0;                // its op in the trace
    std::vector<std::string> outputs;  // its recorded outputs, k order
};

class ReplicaIndex {
public:
    explicit ReplicaIndex(const Trace& trace);

    // The replicas of the suspect's `op` (an op of `trace`): other ops, each recorded by one
    // device (as merge-traces keeps a rank's ops), one per device other than the suspect (the
    // first in trace order), recorded by that device (not a rerun device's), with at least as many
    // outputs as the suspect recorded; CUDA devices only of the suspect's GPU model.
    // Collectives have none (their invariants judge every rank's block).
    std::vector<ReplicaOutputs> replicasOf(const TraceOp& op, const std::string& suspect) const;

private:
    const Trace& m_trace;
    std::multimap<std::string, size_t> m_byKey;  // replica key -> position in trace.ops
};

// What the replicas decide about the suspect's op.
struct ReplicaDecision {
    // The replicas that judge the suspect bit for bit (they agree among themselves); empty when
    // they cannot, with `reason` saying why ("" when the op has no replicas at all).
    std::vector<ReplicaOutputs> judges;
    std::string reason;
    bool loneReplicaDiffers = false;  // one replica, and its bits are not the suspect's
};

// Loads the replicas' outputs (and the suspect's, where there is only one replica) and decides
// as the header says. Errors: a recorded tensor that cannot be read.
Result<ReplicaDecision> decideReplicas(const Trace& trace, const std::vector<ReplicaOutputs>& replicas,
                                       const std::vector<std::string>& suspectOutputs);

}  // namespace faultline
