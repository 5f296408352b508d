#include "Campaign.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "../golden/OpRegistry.h"
#include "CampaignJournal.h"
#include "TargetRunner.h"

namespace faultline {
namespace {

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
        warnings.push_back("skipped " + std::to_string(n) + " '" + name +
                           "' op(s): the golden model cannot run them");
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
    CampaignJournal journal;
    if (!m_options.outPath.empty()) {
        const std::string jp = journalPath(m_options.outPath);
        if (m_options.resume) {
            for (RunRecord& r : readCampaignJournal(jp, warnings)) {
                done.insert({r.target, r.opIndex, r.rep});
                runs.push_back(std::move(r));
            }
        } else if (std::filesystem::exists(jp)) {
            return fileError(
                jp, "a journal from an earlier campaign exists: use --resume to continue it, or remove it");
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
        runners.push_back(std::unique_ptr<TargetRunner>(
            new TargetRunner{m_options, trace, *ops, m_options.targets[i], i, refs, journal, done,
                             [&](RunRecord r) {
                                 std::lock_guard lock(recordMutex);
                                 ++finished;
                                 const std::string what = r.target + " op " + std::to_string(r.opIndex) +
                                                          " rep " + std::to_string(r.rep) + ": " + r.outcome;
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
        info[r->spec.text] = {r->description.empty() ? r->spec.text : r->description, r->bitwiseStable,
                              r->peerKey};
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
