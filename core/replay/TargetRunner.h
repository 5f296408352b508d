#pragma once
// One campaign target's side of a replay (Campaign.h): its faultline-worker process (started,
// and restarted after a hang, a crash or a fatal error), a request per op and repetition, and the
// judgement of each output against the golden model (by bits for golden-exact outputs, within
// the op's bound otherwise), the trace's recorded outputs, and, for a repetition the worker found
// identical to one already judged, that run's judgement. Campaign::run runs one per target, each
// on its own thread, sharing the ReferenceCache and the journal.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "Campaign.h"
#include "CampaignJournal.h"
#include "RunKeySet.h"
#include "WorkerMessages.h"
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

// What every target's runner in one campaign shares. The references are Campaign::run's and
// outlive the runners; `record` is called for each finished run (already journaled), serialised
// by the campaign.
struct TargetRunnerShared {
    const CampaignOptions& options;
    const Trace& trace;
    const std::vector<size_t>& ops;  // the selected ops, in order
    ReferenceCache& refs;
    CampaignJournal& journal;
    const RunKeySet& done;  // (target, op, rep) already journaled
    // Adaptive campaigns: (target, op) -> runs and failures already journaled (a resumed
    // campaign goes on from them), and when the budget is spent (time_point::max(): never).
    const std::map<std::pair<std::string, size_t>, std::pair<uint64_t, uint64_t>>& journaled;
    std::chrono::steady_clock::time_point deadline;
    std::function<void(RunRecord)> record;
    // A run that cannot be journaled (a full disk) ends the campaign: `fail` keeps the first
    // error and sets `stop`, which every runner checks between runs (as it checks `cancel`).
    std::function<void(const Error&)> fail;
    const std::atomic<bool>& stop;
    const std::atomic<bool>* cancel = nullptr;
};

// One target's runs, on the thread that calls runAll.
class TargetRunner {
public:
    TargetRunner(const TargetRunnerShared& shared, const TargetSpec& spec) : m_shared(shared), m_spec(spec) {}
    TargetRunner(const TargetRunner&) = delete;
    TargetRunner& operator=(const TargetRunner&) = delete;

    // Starts the worker and reads its hello: a target that cannot start (unknown kind or
    // parameter, no driver, a worker of another protocol version) is a setup error, reported
    // before any run (code Device, naming the target).
    Status start();
    // Every op and repetition not in `done`, in order; worker outputs go to `outputPath`.
    void runAll(const std::string& outputPath);

    const TargetSpec& spec() const { return m_spec; }
    // What the worker's hello said of the target (its spec as description before any hello).
    TargetInfo info() const
    {
        return {m_description.empty() ? m_spec.text : m_description, m_bitwiseStable, m_peerKey};
    }

private:
    bool startWorker();
    // False when the campaign was cancelled during the run: the worker was killed and the run is
    // not evidence (not journaled).
    bool runOne(const TraceOp& op, RunRecord& r, uint64_t id, const std::string& outputPath);
    // Takes the reply apart into `r`; false when it breaks the protocol (the worker is killed).
    bool acceptReply(const WorkerRequest& request, const std::string& line, RunRecord& r, WorkerReply& reply);
    void judge(const TraceOp& op, RunRecord& r, const std::string& outputPath, size_t outputCount);
    void outOfProtocol(RunRecord& r, const std::string& why);

    const TargetRunnerShared& m_shared;
    const TargetSpec& m_spec;
    std::string m_description;
    bool m_bitwiseStable = true;
    std::string m_peerKey;
    WorkerProcess m_worker;
    unsigned m_restarts = 0;
    std::string m_startError;
    std::set<size_t> m_mappedOps;  // ops whose tile->SM map a run of this campaign kept
    // Per op, the first run this worker process completed and the host judged: the repetition
    // the worker keeps for its repetition check, so one found identical to it need not be copied.
    std::map<size_t, RunRecord> m_judged;
};

}  // namespace faultline
