#include "Campaign.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "BitwiseEvidence.h"
#include "BoundCompare.h"
#include "GoldenExact.h"
#include "../golden/OpRegistry.h"
#include "../io/SafetensorsFile.h"
#include "TensorLoad.h"
#include "WorkerProcess.h"

namespace faultline {
namespace {

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
    std::shared_ptr<OpReference> build(const TraceOp& op)
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

    const Trace& m_trace;
    const size_t m_consumers;
    std::mutex m_mutex;
    std::map<size_t, std::shared_ptr<OpReference>> m_entries;
    std::map<size_t, size_t> m_released;
};

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

// Append-only run journal, flushed to disk after every record.
class Journal {
public:
    Status open(const std::string& path)
    {
        m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (m_fd < 0) return fileError(path, std::string("cannot open journal: ") + std::strerror(errno));
        m_path = path;
        return {};
    }
    ~Journal()
    {
        if (m_fd >= 0) ::close(m_fd);
    }
    Status append(const RunRecord& r)
    {
        if (m_fd < 0) return {};
        std::lock_guard lock(m_mutex);
        const std::string line = r.toJson().dump() + "\n";
        if (::write(m_fd, line.data(), line.size()) != ssize_t(line.size()))
            return fileError(m_path, std::string("cannot append to journal: ") + std::strerror(errno));
        ::fdatasync(m_fd);
        return {};
    }

private:
    int m_fd = -1;
    std::string m_path;
    std::mutex m_mutex;
};

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

struct TargetRunner {
    const CampaignOptions& options;
    const Trace& trace;
    const std::vector<size_t>& ops;
    const TargetSpec& spec;
    size_t targetIndex;
    ReferenceCache& refs;
    Journal& journal;
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

    bool startWorker()
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

    void runAll(const std::string& outputPath)
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

    void runOne(const TraceOp& op, RunRecord& r, uint64_t id, const std::string& outputPath)
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
        nlohmann::json req = {{"id", id}, {"op", op.index}, {"rep", r.rep}, {"seed", options.seed}, {"out", outputPath}};
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
        if (!reply.is_object() || reply.value("id", uint64_t(0)) != id) {
            worker.kill();
            r.outcome = "error";
            r.error = "worker answered out of protocol: " + tail(line, 200);
            return;
        }
        if (!reply.value("ok", false)) {
            r.outcome = "error";
            r.error = reply.value("error", std::string("worker error"));
            if (reply.value("fatal", false)) worker.finish(std::chrono::milliseconds(2000));
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
                r.error = "worker answered out of protocol: identical_to_rep names a repetition the orchestrator "
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

    void judge(const TraceOp& op, RunRecord& r, const std::string& outputPath, size_t outputCount)
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
};

std::string makeScratchDir(const std::string& wanted)
{
    if (!wanted.empty()) {
        std::filesystem::create_directories(wanted);
        return wanted;
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / "faultline-replay-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) return {};
    return tmpl;
}

}  // namespace

// Reads a journal; a torn last line (the orchestrator was killed while writing) is skipped.
std::vector<RunRecord> readCampaignJournal(const std::string& path, std::vector<std::string>& warnings)
{
    std::vector<RunRecord> runs;
    std::ifstream in(path);
    std::string line;
    uint64_t bad = 0;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        auto r = j.is_discarded() ? Result<RunRecord>(Error{"bad"}) : RunRecord::fromJson(j);
        if (r)
            runs.push_back(std::move(r).value());
        else
            ++bad;
    }
    if (bad) warnings.push_back(path + ": skipped " + std::to_string(bad) + " unreadable journal line(s)");
    return runs;
}

Status checkJournalFits(const std::vector<RunRecord>& runs, const std::vector<std::string>& targets,
                        const std::vector<size_t>& ops, uint32_t reps)
{
    const std::set<std::string> targetSet(targets.begin(), targets.end());
    const std::set<size_t> opSet(ops.begin(), ops.end());
    for (const RunRecord& r : runs) {
        const std::string what = "the journal holds a run of op " + std::to_string(r.opIndex) + " rep " +
                                 std::to_string(r.rep) + " on " + r.target + ", ";
        if (!targetSet.count(r.target)) return Error{what + "a target this campaign does not run"};
        if (!opSet.count(r.opIndex)) return Error{what + "an op this campaign does not run"};
        if (r.rep >= reps) return Error{what + "beyond this campaign's " + std::to_string(reps) + " repetitions"};
    }
    return {};
}

Result<std::vector<size_t>> selectOps(const Trace& trace, const std::string& selection,
                                      std::vector<std::string>& warnings)
{
    std::set<size_t> chosen;
    std::set<size_t> indices;
    for (const TraceOp& op : trace.ops) indices.insert(op.index);
    if (selection.empty()) {
        chosen = indices;
    } else {
        size_t pos = 0;
        while (pos <= selection.size()) {
            size_t next = selection.find(',', pos);
            if (next == std::string::npos) next = selection.size();
            const std::string piece = selection.substr(pos, next - pos);
            pos = next + 1;
            if (piece.empty()) continue;
            if (piece.find_first_not_of("0123456789-") == std::string::npos) {
                const size_t dash = piece.find('-');
                try {
                    const size_t lo = std::stoull(piece.substr(0, dash));
                    const size_t hi = dash == std::string::npos ? lo : std::stoull(piece.substr(dash + 1));
                    if (hi < lo) return Error{"op selection '" + piece + "': range ends before it starts"};
                    bool any = false;
                    for (size_t i : indices)
                        if (i >= lo && i <= hi) any = chosen.insert(i).second || true;
                    if (!any) return Error{"op selection '" + piece + "': no such op in the trace"};
                } catch (...) {
                    return Error{"op selection '" + piece + "' is not an index or range"};
                }
            } else {
                bool any = false;
                for (const TraceOp& op : trace.ops)
                    if (op.op == piece) any = chosen.insert(op.index).second || true;
                if (!any) return Error{"op selection '" + piece + "': the trace has no op of that kind"};
            }
        }
    }
    std::vector<size_t> out;
    std::map<std::string, uint64_t> skipped;
    for (size_t i : chosen) {
        const TraceOp* op = nullptr;
        for (const TraceOp& o : trace.ops)
            if (o.index == i) op = &o;
        if (!golden::findGoldenOp(op->op)) {
            ++skipped[op->op];
            continue;
        }
        out.push_back(i);
    }
    for (const auto& [name, n] : skipped)
        warnings.push_back("skipped " + std::to_string(n) + " '" + name + "' op(s): the golden model cannot run them");
    if (out.empty()) return Error{"no replayable ops selected"};
    return out;
}

Result<CampaignReport> Campaign::run()
{
    if (m_options.targets.empty()) return Error{"no targets given"};
    if (m_options.reps == 0) return Error{"--reps must be at least 1"};
    if (m_options.workerProgram.empty() || !std::filesystem::exists(m_options.workerProgram))
        return Error{"faultline-worker not found at '" + m_options.workerProgram + "'"};
    {
        std::set<std::string> seen;
        for (const TargetSpec& t : m_options.targets)
            if (!seen.insert(t.text).second) return Error{"target '" + t.text + "' is given twice"};
        if (!m_options.reference.empty() && !seen.count(m_options.reference))
            return Error{"reference '" + m_options.reference + "' is not one of the targets"};
    }
    OpenOptions open;
    open.allowExternal = m_options.allowExternal;
    auto traceResult = readTrace(m_options.tracePath, open);
    if (!traceResult) return traceResult.error();
    const Trace& trace = *traceResult;

    std::vector<std::string> warnings = trace.warnings;
    auto ops = selectOps(trace, m_options.ops, warnings);
    if (!ops) return ops.error();

    std::vector<RunRecord> runs;
    std::set<std::tuple<std::string, size_t, uint32_t>> done;
    Journal journal;
    if (!m_options.outPath.empty()) {
        const std::string jp = journalPath(m_options.outPath);
        if (m_options.resume) {
            for (RunRecord& r : readCampaignJournal(jp, warnings)) {
                done.insert({r.target, r.opIndex, r.rep});
                runs.push_back(std::move(r));
            }
        } else if (std::filesystem::exists(jp)) {
            return fileError(jp, "a journal from an earlier campaign exists: use --resume to continue it, or remove it");
        }
        Status st = journal.open(jp);
        if (!st) return st.error();
    }

    const std::string scratch = makeScratchDir(m_options.scratchDir);
    if (scratch.empty()) return Error{"cannot create a scratch directory for worker outputs"};

    uint64_t total = uint64_t(ops->size()) * m_options.reps * m_options.targets.size();
    uint64_t finished = done.size();
    std::mutex recordMutex;
    std::map<std::string, TargetInfo> info;
    ReferenceCache refs(trace, m_options.targets.size());

    std::vector<std::unique_ptr<TargetRunner>> runners;
    for (size_t i = 0; i < m_options.targets.size(); ++i) {
        runners.push_back(std::unique_ptr<TargetRunner>(new TargetRunner{
            m_options, trace, *ops, m_options.targets[i], i, refs, journal, done,
            [&](RunRecord r) {
                std::lock_guard lock(recordMutex);
                ++finished;
                const std::string what = r.target + " op " + std::to_string(r.opIndex) + " rep " +
                                         std::to_string(r.rep) + ": " + r.outcome;
                runs.push_back(std::move(r));
                if (m_progress) m_progress(finished, total, what);
            },
            m_cancel}));
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < runners.size(); ++i) {
        const std::string out = scratch + "/target-" + std::to_string(i) + ".safetensors";
        threads.emplace_back([&runner = *runners[i], out] { runner.runAll(out); });
    }
    for (std::thread& t : threads) t.join();
    std::error_code ec;
    if (m_options.scratchDir.empty()) std::filesystem::remove_all(scratch, ec);

    std::vector<std::string> labels;
    for (const auto& r : runners) {
        labels.push_back(r->spec.text);
        info[r->spec.text] = {r->description.empty() ? r->spec.text : r->description, r->bitwiseStable, r->peerKey};
    }
    CampaignReport report = summarizeCampaign(runs, labels, info, m_options.reference);
    report.trace = m_options.tracePath;
    report.reps = m_options.reps;
    report.seed = m_options.seed;
    report.ops = *ops;
    report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
    report.cancelled = m_cancel && m_cancel->load();
    if (!m_options.outPath.empty()) {
        Status st = writeCampaignResults(m_options.outPath, report);
        if (!st) return st.error();
    }
    return report;
}

}  // namespace faultline
