#include "TargetRunner.h"

#include <filesystem>

#include "../golden/OpRegistry.h"
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
    auto b = golden::goldenErrorBound(op.op, *inputs, op.params, *g);
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
    std::vector<std::string> args = {"--target", spec.text, "--trace", options.tracePath};
    if (options.allowExternal) args.push_back("--allow-external");
    Status st = worker.start(options.workerProgram, args);
    if (!st) {
        startError = st.message();
        return false;
    }
    std::string line;
    const auto outcome = worker.readLine(line, std::chrono::milliseconds(30000));
    auto hello = outcome == WorkerProcess::ReadOutcome::Line ? nlohmann::json::parse(line, nullptr, false)
                                                             : nlohmann::json();
    if (!hello.is_object() || !hello.contains("hello")) {
        worker.kill();
        startError = "worker for " + spec.text + " did not start (" + worker.describeExit() +
                     "): " + tail(worker.stderrText(), 1000);
        return false;
    }
    description = hello.value("description", spec.text);
    bitwiseStable = hello.value("bitwise_stable", true);
    peerKey = hello.value("peer_key", std::string());
    return true;
}

void TargetRunner::runAll(const std::string& outputPath)
{
    uint64_t requestId = 0;
    for (size_t opIndex : ops) {
        const TraceOp* op = nullptr;
        for (const TraceOp& o : trace.ops)
            if (o.index == opIndex) op = &o;
        for (uint32_t rep = 0; rep < options.reps; ++rep) {
            if (cancel && cancel->load()) return;
            if (done.count({spec.text, opIndex, rep})) continue;
            RunRecord r;
            r.target = spec.text;
            r.opIndex = opIndex;
            r.op = op->op;
            r.name = op->name;
            r.rep = rep;
            try {
                runOne(*op, r, ++requestId, outputPath);
            } catch (const nlohmann::json::exception& e) {
                // A reply or hello whose fields have the wrong types.
                worker.kill();
                r.outcome = "error";
                r.error = std::string("worker answered out of protocol: ") + e.what();
            }
            journal.append(r);
            record(std::move(r));
        }
        refs.release(opIndex);
    }
    worker.finish(std::chrono::milliseconds(2000));
}

void TargetRunner::runOne(const TraceOp& op, RunRecord& r, uint64_t id, const std::string& outputPath)
{
    if (!worker.running()) {
        if (restarts > options.maxRestartsPerTarget) {
            r.outcome = "error";
            r.error = "worker restarted too often; giving up on this target";
            return;
        }
        if (worker.state() != WorkerProcess::State::NotStarted) ++restarts;
        judged.clear();  // a new process keeps no repetition
        if (!startWorker()) {
            r.outcome = "error";
            r.error = startError;
            return;
        }
    }
    std::filesystem::remove(outputPath);
    nlohmann::json req = {
        {"id", id}, {"op", op.index}, {"rep", r.rep}, {"seed", options.seed}, {"out", outputPath}};
    const auto reference = judged.find(op.index);
    if (!options.copyAll && reference != judged.end()) req["skip_if_identical_to"] = reference->second.rep;
    const auto started = std::chrono::steady_clock::now();
    Status st = worker.send(req.dump());
    std::string line;
    auto outcome = st ? worker.readLine(line, options.timeout) : WorkerProcess::ReadOutcome::Closed;
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    if (outcome == WorkerProcess::ReadOutcome::Timeout) {
        worker.kill();
        r.outcome = "hang";
        r.error = "no answer within " + std::to_string(options.timeout.count()) + " ms; worker killed";
        r.stderrTail = tail(worker.stderrText());
        return;
    }
    if (outcome == WorkerProcess::ReadOutcome::Closed) {
        worker.finish(std::chrono::milliseconds(2000));
        r.outcome = "crash";
        r.error = "worker " + worker.describeExit();
        r.stderrTail = tail(worker.stderrText());
        return;
    }
    auto reply = nlohmann::json::parse(line, nullptr, false);
    if (!reply.is_object() || !reply.contains("id") || !isJsonCount(reply["id"]) ||
        reply["id"].get<uint64_t>() != id ||
        (reply.contains("injected") && !isJsonCount(reply["injected"]))) {
        worker.kill();
        r.outcome = "error";
        r.error = "worker answered out of protocol: " + tail(line, 200);
        return;
    }
    if (!reply.value("ok", false)) {
        r.outcome = "error";
        r.error = reply.value("error", std::string("worker error"));
        if (reply.value("fatal", false)) {
            // A sticky device error (illegal address, uncorrectable ECC, a contained fault): the
            // worker exits and the next run starts a new one. Evidence of a device fault.
            r.deviceFault = true;
            worker.finish(std::chrono::milliseconds(2000));
        }
        return;
    }
    r.injected = reply.value("injected", uint64_t(0));
    r.goldenExact = reply.value("golden_exact", false);
    r.peerKey = peerKey;
    if (reply.contains("vs_rep")) {
        if (!isRepeatCheckJson(reply["vs_rep"])) {
            worker.kill();
            r.outcome = "error";
            r.error = "worker answered out of protocol: vs_rep is not a repetition check";
            return;
        }
        r.vsRep = reply["vs_rep"];
    }
    if (reply.contains("identical_to_rep")) {
        if (reference == judged.end() || !req.contains("skip_if_identical_to") ||
            reply["identical_to_rep"] != req["skip_if_identical_to"]) {
            worker.kill();
            r.outcome = "error";
            r.error =
                "worker answered out of protocol: identical_to_rep names a repetition the orchestrator "
                "did not offer";
            return;
        }
        // Bitwise identical to a judged run: its digest and judgement hold for this one.
        const RunRecord& same = reference->second;
        r.hostCopy = false;
        r.digest = same.digest;
        r.outcome = same.outcome;
        r.error = same.error;
        r.vsGolden = same.vsGolden;
        r.vsRecorded = same.vsRecorded;
        return;
    }
    judge(op, r, outputPath, reply.value("outputs", size_t(1)));
    if (!r.digest.empty() && (r.outcome == "ok" || r.outcome == "mismatch")) judged.emplace(op.index, r);
}

void TargetRunner::judge(const TraceOp& op, RunRecord& r, const std::string& outputPath, size_t outputCount)
{
    auto file = openSafetensors(outputPath);
    if (!file) {
        r.outcome = "error";
        r.error = file.message();
        return;
    }
    std::vector<HostTensor> outputs;
    for (size_t i = 0; i < outputCount; ++i) {
        auto t = loadTensor(**file, "output/" + std::to_string(i));
        if (!t) {
            r.outcome = "error";
            r.error = t.message();
            return;
        }
        outputs.push_back(std::move(t).value());
    }
    r.digest = outputDigest(outputs);
    if (!mappedOps.count(op.index) && !outputs.empty()) {
        r.smMap = readTileSmMap(**file, outputs[0]);
        if (r.smMap.valid()) mappedOps.insert(op.index);
    }
    auto ref = refs.get(op);
    if (!ref->error.empty()) {
        r.outcome = "error";
        r.error = ref->error;
        return;
    }
    if (outputs.empty()) {
        r.outcome = "error";
        r.error = "worker returned no output";
        return;
    }
    const std::string what = "op " + std::to_string(op.index) + " (" + op.op + ") on " + spec.text;
    auto vsGolden = compareWithinBound(outputs[0], ref->golden, ref->bound, 1.0, what, 1, 4);
    if (!vsGolden) {
        r.outcome = "mismatch";
        r.error = vsGolden.message();
        r.vsGolden = {{"error", vsGolden.message()}};
    } else if (r.goldenExact) {
        // Defined to be the golden model's bits: any differing element is a defect.
        const uint64_t differing = goldenDifferingElements(outputs[0], ref->golden);
        r.vsGolden = divergenceSummary(*vsGolden);
        r.vsGolden["judged"] = "bitwise";
        r.vsGolden["differing"] = differing;
        r.outcome = differing > 0 ? "mismatch" : "ok";
    } else {
        r.vsGolden = divergenceSummary(*vsGolden);
        r.vsGolden["judged"] = "bound";
        r.outcome = vsGolden->beyondTolerance > 0 ? "mismatch" : "ok";
    }
    r.vsRecorded = nlohmann::json::object();
    for (const auto& [label, recorded] : ref->recorded) {
        // Both sides carry their own rounding error against the golden: twice the bound.
        auto d = compareWithinBound(outputs[0], recorded, ref->bound, 2.0, what + " vs " + label, 1, 4);
        r.vsRecorded[label] = d ? divergenceSummary(*d) : nlohmann::json{{"error", d.message()}};
    }
}

}  // namespace faultline
