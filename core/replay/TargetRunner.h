#pragma once
// One campaign target's side of a replay (Campaign.h): its faultline-worker process (started,
// and restarted after a hang, a crash or a fatal error), a request per op and repetition, and the
// judgement of each output against the golden model (by bits for golden-exact outputs, within
// the op's bound otherwise), the trace's recorded outputs, and, for a repetition the worker found
// identical to one already judged, that run's judgement. Campaign::run runs one per target, each
// on its own thread, sharing the ReferenceCache and the journal.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "../HostTensor.h"
#include "Campaign.h"
#include "CampaignJournal.h"
#include "WorkerProcess.h"

namespace faultline {

// What every target's outputs of one op are judged against, computed once per op.
struct OpReference {
    std::string error;  // golden could not run: every run of the op is an `error`
    HostTensor golden;
    std::vector<double> bound;
    std::map<std::string, HostTensor> recorded;  // device label -> its output 0
};

// Each op's references are built by the first target that needs them and dropped once every
// target has finished the op (targets run the ops in the same order), so a campaign holds the
// references of the ops in flight, not of the whole trace.
class ReferenceCache {
public:
    ReferenceCache(const Trace& trace, size_t consumers) : m_trace(trace), m_consumers(consumers) {}

    std::shared_ptr<const OpReference> get(const TraceOp& op)
    {
        std::lock_guard lock(m_mutex);
        auto& slot = m_entries[op.index];
        if (!slot) slot = build(op);
        return slot;
    }

    // One target is done with the op.
    void release(size_t opIndex)
    {
        std::lock_guard lock(m_mutex);
        if (++m_released[opIndex] >= m_consumers) m_entries.erase(opIndex);
    }

private:
    std::shared_ptr<OpReference> build(const TraceOp& op);

    const Trace& m_trace;
    const size_t m_consumers;
    std::mutex m_mutex;
    std::map<size_t, std::shared_ptr<OpReference>> m_entries;
    std::map<size_t, size_t> m_released;
};

// One target's runs. The references are Campaign::run's and outlive the runner; `record` is
// called for each finished run (already journaled), serialised by the campaign.
struct TargetRunner {
    const CampaignOptions& options;
    const Trace& trace;
    const std::vector<size_t>& ops;
    const TargetSpec& spec;
    size_t targetIndex;
    ReferenceCache& refs;
    CampaignJournal& journal;
    const std::set<std::tuple<std::string, size_t, uint32_t>>& done;
    std::function<void(RunRecord)> record;
    const std::atomic<bool>* cancel;

    std::string description{};
    bool bitwiseStable = true;
    std::string peerKey{};
    WorkerProcess worker{};
    unsigned restarts = 0;
    std::string startError{};
    std::set<size_t> mappedOps{};  // ops whose tile->SM map a run of this campaign kept
    // Per op, the first run this worker process completed and the host judged: the repetition
    // the worker keeps for its repetition check, so one found identical to it need not be copied.
    std::map<size_t, RunRecord> judged{};

    // Every op and repetition not in `done`, in order; worker outputs go to `outputPath`.
    void runAll(const std::string& outputPath);

private:
    bool startWorker();
    void runOne(const TraceOp& op, RunRecord& r, uint64_t id, const std::string& outputPath);
    void judge(const TraceOp& op, RunRecord& r, const std::string& outputPath, size_t outputCount);
};

}  // namespace faultline
