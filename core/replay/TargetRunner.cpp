#include "TargetRunner.h"

#include <algorithm>

#include <filesystem>
#include <tuple>

#include "../Text.h"
#include "../golden/CollectiveGolden.h"
#include "../golden/OpRegistry.h"
#include "../golden/RecordedNumerics.h"
#include "../io/SafetensorsFile.h"
#include "BitwiseEvidence.h"
#include "BoundCompare.h"
#include "GoldenExact.h"
#include "JsonFields.h"
#include "TensorLoad.h"

namespace faultline {
namespace {

nlohmann::json divergenceSummary(const Divergence& d)
{
    return {{"mismatches", d.mismatches},
            {"beyond_tolerance", d.beyondTolerance},
            {"max_ulp", d.maxUlp},
            {"max_abs_error", d.absError.max},
            {"nan_introduced", d.nanIntroduced},
            {"inf_introduced", d.infIntroduced},
            {"signature", std::string(signatureKindName(d.signature.kind))}};
}

// The SMs whose tiles hold the elements of `candidate` that differ from `golden` under the golden
// contract (GoldenExact.h), ascending; empty when nothing differs or the map does not fit.
std::vector<int32_t> differingSms(const HostTensor& candidate, const HostTensor& golden, const TileSmMap& map)
{
    std::set<int32_t> sms;
    const uint64_t n = golden.elementCount();
    if (!map.valid() || candidate.dtype != golden.dtype || candidate.elementCount() != n ||
        map.rows * map.cols != n)
        return {};
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t a = elementBits(candidate, i), b = elementBits(golden, i);
        if (a != b && !(isNanBits(golden.dtype, a) && isNanBits(golden.dtype, b)))
            sms.insert(map.smOf(i / map.cols, i % map.cols));
    }
    sms.erase(-1);
    return {sms.begin(), sms.end()};
}

// The worker's "tile_sm" tensor and "sm_tile" metadata (WorkerProtocol.h) for output 0; an
// empty map when the target records none or it does not fit the output.
TileSmMap readTileSmMap(const TensorFile& file, const HostTensor& output0)
{
    TileSmMap map;
    const auto tile = file.attributes().find("sm_tile");
    if (!file.find("tile_sm") || tile == file.attributes().end()) return map;
    auto t = loadTensor(file, "tile_sm");
    if (!t || t->dtype != DType::Int32) return map;
    try {
        map.tile = uint32_t(std::stoul(tile->second));
    } catch (...) {
        return {};
    }
    map.cols = output0.shape.empty() ? 1 : output0.shape.back();
    map.rows = map.cols ? output0.elementCount() / map.cols : 0;
    map.sm.assign(t->as<int32_t>(), t->as<int32_t>() + t->elementCount());
    if (!map.valid()) return {};
    return map;
}

std::string tail(const std::string& s, size_t maxBytes = 4000)
{
    return s.size() <= maxBytes ? s : s.substr(s.size() - maxBytes);
}

}  // namespace

std::shared_ptr<OpReference> ReferenceCache::build(const TraceOp& op)
{
    auto ref = std::make_shared<OpReference>();
    auto inputs = loadOpInputs(m_trace, op);
    if (!inputs) {
        ref->error = inputs.message();
        return ref;
    }
    auto g = golden::runGolden(op.op, *inputs, op.params);
    if (!g) {
        ref->error = g.message();
        return ref;
    }
    // The bound covers every implementation the trace's recorded numerics allow (a capture's
    // device type, dtype, TF32 and reduced-precision switches), as bisect judges it.
    const golden::RecordedJudgement judgement = golden::recordedJudgement(op.op, op.params, *inputs);
    auto b = golden::goldenErrorBound(op.op, *inputs, op.params, *g, judgement.options);
    if (!b) {
        ref->error = b.message();
        return ref;
    }
    ref->golden = std::move(g).value();
    ref->bound = std::move(b).value();
    for (const auto& [label, names] : op.outputs) {
        if (names.empty()) continue;
        auto t = loadTensor(*m_trace.file, names.front());
        if (t) ref->recorded[label] = std::move(t).value();
    }
    return ref;
}

bool TargetRunner::startWorker()
{
    const CampaignOptions& options = m_shared.options;
    std::vector<std::string> args = {"--target", m_spec.text, "--trace", options.tracePath};
    if (options.allowExternal) args.push_back("--allow-external");
    Status st = m_worker.start(options.workerProgram, args);
    if (!st) {
        m_startError = st.message();
        return false;
    }
    std::string line;
    const auto outcome = m_worker.readLine(line, std::chrono::milliseconds(30000));
    auto parsed = outcome == WorkerProcess::ReadOutcome::Line
                      ? parseProtocolLine(line)
                      : Result<nlohmann::json>(Error{"no hello", ErrorCode::Protocol});
    auto hello = parsed ? WorkerHello::fromJson(*parsed) : Result<WorkerHello>(parsed.error());
    if (!hello) {
        m_worker.kill();
        const std::string why = trimmed(tail(m_worker.stderrText(), 1000));
        m_startError =
            "worker for " + m_spec.text + " did not start (" + m_worker.describeExit() + "): " + why;
        return false;
    }
    if (hello->protocol != kWorkerProtocolVersion) {
        m_worker.kill();
        m_startError = options.workerProgram + " speaks worker protocol " + std::to_string(hello->protocol) +
                       ", this faultline speaks " + std::to_string(kWorkerProtocolVersion) +
                       ": install faultline and faultline-worker of the same version";
        return false;
    }
    m_description = hello->description.empty() ? m_spec.text : hello->description;
    m_bitwiseStable = hello->bitwiseStable;
    m_peerKey = hello->peerKey;
    return true;
}

Status TargetRunner::start()
{
    if (startWorker()) return {};
    return Error{"target " + m_spec.text + ": " + m_startError, ErrorCode::Device};
}

void TargetRunner::runAll(const std::string& outputPath)
{
    uint64_t requestId = 0;
    const StoppingRule& rule = m_shared.options.stopping;
    size_t opsLeft = m_shared.ops.size();
    for (size_t opIndex : m_shared.ops) {
        const TraceOp* op = nullptr;
        for (const TraceOp& o : m_shared.trace.ops)
            if (o.index == opIndex) op = &o;
        // Adaptive: the runs and failures so far, and this op's share of the budget left.
        uint64_t runs = 0, failures = 0;
        if (const auto it = m_shared.journaled.find({m_spec.text, opIndex}); it != m_shared.journaled.end())
            std::tie(runs, failures) = it->second;
        auto opDeadline = m_shared.deadline;
        if (const auto now = std::chrono::steady_clock::now();
            rule.adaptive() && m_shared.deadline != std::chrono::steady_clock::time_point::max())
            opDeadline = now + (m_shared.deadline > now ? (m_shared.deadline - now) / int64_t(opsLeft)
                                                        : std::chrono::steady_clock::duration::zero());
        --opsLeft;
        const uint32_t reps = rule.adaptive() ? UINT32_MAX : m_shared.options.reps;
        for (uint32_t rep = 0; rep < reps; ++rep) {
            if ((m_shared.cancel && m_shared.cancel->load()) || m_shared.stop.load()) break;
            if (rule.adaptive() &&
                (stopReached(runs, failures, rule) || std::chrono::steady_clock::now() >= opDeadline))
                break;
            if (m_shared.done.contains(m_spec.text, opIndex, rep)) continue;
            RunRecord r;
            r.target = m_spec.text;
            r.opIndex = opIndex;
            r.op = op->op;
            r.name = op->name;
            r.rep = rep;
            if (!runOne(*op, r, ++requestId, outputPath)) break;
            if (Status st = m_shared.journal.append(r); !st) {
                m_shared.fail(st.error());
                break;
            }
            // An op that cannot be replayed at all says nothing however often it is repeated.
            const bool setupError = r.setupError;
            if (!setupError) {
                ++runs;
                failures += r.failed() ? 1 : 0;
            }
            m_shared.record(std::move(r));
            if (setupError && rule.adaptive()) break;
        }
        m_shared.refs.release(opIndex);
        if ((m_shared.cancel && m_shared.cancel->load()) || m_shared.stop.load()) break;
    }
    m_worker.finish(std::chrono::milliseconds(2000));
}

void TargetRunner::outOfProtocol(RunRecord& r, const std::string& why)
{
    m_worker.kill();
    r.outcome = RunOutcome::Error;
    r.error = "worker answered out of protocol: " + why;
}

bool TargetRunner::runOne(const TraceOp& op, RunRecord& r, uint64_t id, const std::string& outputPath)
{
    const CampaignOptions& options = m_shared.options;
    // An op the golden model cannot run (a malformed trace) says nothing about the target.
    if (auto ref = m_shared.refs.get(op); !ref->error.empty()) {
        r.outcome = RunOutcome::Error;
        r.setupError = true;
        r.error = "op " + std::to_string(op.index) + " cannot be replayed: " + ref->error;
        return true;
    }
    if (!m_worker.running()) {
        if (m_restarts > options.maxRestartsPerTarget) {
            r.outcome = RunOutcome::Error;
            r.error = "worker restarted too often; giving up on this target";
            return true;
        }
        if (m_worker.state() != WorkerProcess::State::NotStarted) ++m_restarts;
        m_judged.clear();  // a new process keeps no repetition
        if (!startWorker()) {
            r.outcome = RunOutcome::Error;
            r.error = m_startError;
            return true;
        }
    }
    std::filesystem::remove(outputPath);
    WorkerRequest req;
    req.id = id;
    req.op = op.index;
    req.rep = r.rep;
    req.seed = options.seed;
    req.out = outputPath;
    const auto reference = m_judged.find(op.index);
    if (!options.copyAll && reference != m_judged.end()) req.skipIfIdenticalTo = reference->second.rep;
    const auto started = std::chrono::steady_clock::now();
    Status st = m_worker.send(req.toJson().dump());
    std::string line;
    auto outcome =
        st ? m_worker.readLine(line, options.timeout, m_shared.cancel) : WorkerProcess::ReadOutcome::Closed;
    if (outcome == WorkerProcess::ReadOutcome::Cancelled) {
        m_worker.kill();  // Ctrl-C stops within the poll interval, not after the run's timeout
        return false;
    }
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    if (outcome == WorkerProcess::ReadOutcome::Timeout) {
        m_worker.kill();
        r.outcome = RunOutcome::Hang;
        r.error = "no answer within " + std::to_string(options.timeout.count()) + " ms; worker killed";
        r.stderrTail = tail(m_worker.stderrText());
        return true;
    }
    if (outcome == WorkerProcess::ReadOutcome::Closed) {
        m_worker.finish(std::chrono::milliseconds(2000));
        r.outcome = RunOutcome::Crash;
        r.error = "worker " + m_worker.describeExit();
        r.stderrTail = tail(m_worker.stderrText());
        return true;
    }
    WorkerReply reply;
    if (!acceptReply(req, line, r, reply)) return true;
    if (!reply.ok) {
        r.outcome = RunOutcome::Error;
        r.error = reply.error;
        if (reply.fatal) {
            // A sticky device error (illegal address, uncorrectable ECC, a contained fault): the
            // worker exits and the next run starts a new one. Evidence of a device fault.
            r.deviceFault = true;
            m_worker.finish(std::chrono::milliseconds(2000));
        }
        return true;
    }
    r.injected = reply.injected;
    r.goldenExact = reply.goldenExact;
    r.peerKey = m_peerKey;
    if (reply.vsRep) r.vsRep = repeatCheckJson(*reply.vsRep);
    if (reply.identicalToRep) {
        // Bitwise identical to a judged run: its digest and judgement hold for this one.
        const RunRecord& same = reference->second;
        r.hostCopy = false;
        r.digest = same.digest;
        r.outcome = same.outcome;
        r.error = same.error;
        r.vsGolden = same.vsGolden;
        r.vsRecorded = same.vsRecorded;
        return true;
    }
    judge(op, r, outputPath, reply.outputs);
    if (!r.digest.empty() && (r.outcome == RunOutcome::Ok || r.outcome == RunOutcome::Mismatch))
        m_judged.emplace(op.index, r);
    return true;
}

bool TargetRunner::acceptReply(const WorkerRequest& request, const std::string& line, RunRecord& r,
                               WorkerReply& reply)
{
    auto parsed = parseProtocolLine(line);
    auto typed = parsed ? WorkerReply::fromJson(*parsed) : Result<WorkerReply>(parsed.error());
    if (!typed) {
        outOfProtocol(r, typed.message() + " (" + tail(line, 200) + ")");
        return false;
    }
    if (typed->id != request.id) {
        outOfProtocol(r, "a reply to another request (" + tail(line, 200) + ")");
        return false;
    }
    if (typed->identicalToRep &&
        (!request.skipIfIdenticalTo || *typed->identicalToRep != *request.skipIfIdenticalTo)) {
        outOfProtocol(r, "identical_to_rep names a repetition the orchestrator did not offer");
        return false;
    }
    reply = std::move(typed).value();
    return true;
}

namespace {

bool isReproducibleRerun(const Trace& trace, const TraceOp& op, const std::string& label)
{
    const TraceDevice* device = findTraceDevice(trace, label);
    if (!device || device->source() != "rerun") return false;
    const OutputReproducibility r = outputReproducibility(op, label);
    return r.reproducible.value_or(false) && r.repeats.value_or(0) >= 2;
}

}  // namespace

void TargetRunner::judge(const TraceOp& op, RunRecord& r, const std::string& outputPath, size_t outputCount)
{
    auto file = openSafetensors(outputPath);
    if (!file) {
        r.outcome = RunOutcome::Error;
        r.error = file.message();
        return;
    }
    std::vector<HostTensor> outputs;
    for (size_t i = 0; i < outputCount; ++i) {
        auto t = loadTensor(**file, "output/" + std::to_string(i));
        if (!t) {
            r.outcome = RunOutcome::Error;
            r.error = t.message();
            return;
        }
        outputs.push_back(std::move(t).value());
    }
    r.digest = outputDigest(outputs);
    if (!m_mappedOps.count(op.index) && !outputs.empty()) {
        r.smMap = readTileSmMap(**file, outputs[0]);
        if (r.smMap.valid()) m_mappedOps.insert(op.index);
    }
    auto ref = m_shared.refs.get(op);
    if (!ref->error.empty()) {
        r.outcome = RunOutcome::Error;
        r.error = ref->error;
        return;
    }
    if (outputs.empty()) {
        r.outcome = RunOutcome::Error;
        r.error = "worker returned no output";
        return;
    }
    const std::string what = "op " + std::to_string(op.index) + " (" + op.op + ") on " + m_spec.text;
    auto vsGolden = compareWithinBound(outputs[0], ref->golden, ref->bound, 1.0, what, 1, 4);
    if (!vsGolden) {
        r.outcome = RunOutcome::Mismatch;
        r.error = vsGolden.message();
        r.vsGolden = {{"error", vsGolden.message()}};
    } else if (r.goldenExact) {
        // Defined to be the golden model's bits: any differing element is a defect.
        const uint64_t differing = goldenDifferingElements(outputs[0], ref->golden);
        r.vsGolden = divergenceSummary(*vsGolden);
        r.vsGolden["judged"] = "bitwise";
        r.vsGolden["differing"] = differing;
        r.outcome = differing > 0 ? RunOutcome::Mismatch : RunOutcome::Ok;
        // Where the target records its SMs: which SMs' tiles the differing elements are in.
        if (differing > 0) {
            const TileSmMap map = r.smMap.valid() ? r.smMap : readTileSmMap(**file, outputs[0]);
            if (const std::vector<int32_t> sms = differingSms(outputs[0], ref->golden, map); !sms.empty())
                r.vsGolden["sms"] = sms;
        }
    } else {
        r.vsGolden = divergenceSummary(*vsGolden);
        r.vsGolden["judged"] = "bound";
        r.outcome = vsGolden->beyondTolerance > 0 ? RunOutcome::Mismatch : RunOutcome::Ok;
    }
    r.vsRecorded = nlohmann::json::object();
    for (const auto& [label, recorded] : ref->recorded) {
        // Both sides carry their own rounding error against the golden: twice the bound.
        // reduce_scatter: each device recorded its own block of the reduction.
        auto rows = golden::recordedRowsOf(op.op, op.params, label, outputs[0].shape);
        if (!rows) {
            r.vsRecorded[label] = {{"error", rows.message()}};
            continue;
        }
        auto d = *rows
                     ? compareWithinBound(golden::rowsOf(outputs[0], **rows), recorded,
                                          golden::rowsOf(ref->bound, outputs[0].shape, **rows), 2.0,
                                          what + " vs " + label, 1, 4)
                     : compareWithinBound(outputs[0], recorded, ref->bound, 2.0, what + " vs " + label, 1, 4);
        r.vsRecorded[label] = d ? divergenceSummary(*d) : nlohmann::json{{"error", d.message()}};
        // A rerun peer that reproduced itself (faultline_capture's rerun on a healthy device):
        // whether this run's output 0 has its bits. CampaignTally fails the runs that differ on a
        // target that reproduced them in other runs (it runs the peer's kernel).
        if (isReproducibleRerun(m_shared.trace, op, label))
            r.vsRecorded[label]["bitwise_equal"] = outputs[0].dtype == recorded.dtype &&
                                                   outputs[0].shape == recorded.shape &&
                                                   outputs[0].data == recorded.data;
    }
}

}  // namespace faultline
