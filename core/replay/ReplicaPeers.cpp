#include "ReplicaPeers.h"

#include <set>

#include "../golden/CollectiveGolden.h"
#include "TensorLoad.h"

namespace faultline {

namespace {

// Op kind, every parameter and the input ids: equal keys, equal computations.
std::string replicaKey(const TraceOp& op)
{
    std::string key = op.op;
    key += '\n';
    for (const auto& [name, value] : op.params) key += name + '=' + attrValueToString(value) + '\n';
    for (const std::string& id : op.inputs) key += "<" + id + ">";
    return key;
}

// How many devices recorded the op (rerun devices not counted): a rank's op in a merged trace has
// one; an op that holds several recordings is a multi-device recording whose devices may run
// other kernels, never a replica.
size_t recordingDevices(const Trace& trace, const TraceOp& op)
{
    size_t n = 0;
    for (const auto& entry : op.outputs) {
        const TraceDevice* d = findTraceDevice(trace, entry.first);
        n += !d || d->source() != "rerun";
    }
    return n;
}

std::string labelList(const std::vector<ReplicaOutputs>& replicas)
{
    std::string text;
    for (const ReplicaOutputs& r : replicas) text += (text.empty() ? "" : ", ") + r.label;
    return text;
}

Result<std::string> digestOf(const Trace& trace, const std::vector<std::string>& names, size_t count)
{
    std::vector<HostTensor> tensors;
    for (size_t k = 0; k < count && k < names.size(); ++k) {
        auto t = loadTensor(*trace.file, names[k]);
        if (!t) return t.error();
        tensors.push_back(std::move(t).value());
    }
    return outputDigest(tensors);
}

}  // namespace

ReplicaIndex::ReplicaIndex(const Trace& trace) : m_trace(trace)
{
    for (size_t i = 0; i < trace.ops.size(); ++i)
        if (!golden::isCollectiveOp(trace.ops[i].op) && !trace.ops[i].outputs.empty())
            m_byKey.emplace(replicaKey(trace.ops[i]), i);
}

std::vector<ReplicaOutputs> ReplicaIndex::replicasOf(const TraceOp& op, const std::string& suspect) const
{
    std::vector<ReplicaOutputs> out;
    const auto mine = op.outputs.find(suspect);
    if (mine == op.outputs.end() || golden::isCollectiveOp(op.op)) return out;
    const TraceDevice* suspectDevice = findTraceDevice(m_trace, suspect);
    std::set<std::string> seen = {suspect};
    const auto [begin, end] = m_byKey.equal_range(replicaKey(op));
    for (auto it = begin; it != end; ++it) {
        const TraceOp& other = m_trace.ops[it->second];
        // Other devices' outputs of the op itself are not replicas: a recording that holds a
        // healthy device's answer beside the suspect's may come from other kernels (a rerun is
        // the peer above; collectives are judged by their invariants).
        if (&other == &op || recordingDevices(m_trace, other) != 1) continue;
        for (const auto& [label, names] : other.outputs) {
            if (seen.count(label) || names.size() < mine->second.size()) continue;
            const TraceDevice* device = findTraceDevice(m_trace, label);
            if (!device || device->source() == "rerun") continue;
            // Another GPU model may legitimately run other kernels.
            const auto type = device->extra.find("device_type");
            if (type != device->extra.end() && type->second == "cuda" && suspectDevice &&
                device->name != suspectDevice->name)
                continue;
            seen.insert(label);
            out.push_back({label, other.index, names});
        }
    }
    return out;
}

Result<ReplicaDecision> decideReplicas(const Trace& trace, const std::vector<ReplicaOutputs>& replicas,
                                       const std::vector<std::string>& suspectOutputs)
{
    ReplicaDecision d;
    if (replicas.empty()) return d;
    const size_t count = suspectOutputs.size();
    std::vector<std::string> digests;
    for (const ReplicaOutputs& r : replicas) {
        auto digest = digestOf(trace, r.outputs, count);
        if (!digest) return digest.error();
        digests.push_back(std::move(digest).value());
    }
    if (std::set<std::string>(digests.begin(), digests.end()).size() > 1) {
        d.reason = "replicas " + labelList(replicas) + " differ bit for bit from each other";
        return d;
    }
    if (replicas.size() == 1) {
        auto mine = digestOf(trace, suspectOutputs, count);
        if (!mine) return mine.error();
        if (*mine != digests.front()) {
            d.reason = "the one replica, " + replicas.front().label +
                       ", differs bit for bit and no other replica decides which is right";
            d.loneReplicaDiffers = true;
            return d;
        }
    }
    d.judges = replicas;
    return d;
}

}  // namespace faultline
