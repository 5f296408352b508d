#include "Campaign.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <thread>

#include "../io/ScratchDirectory.h"
#include "CampaignJournal.h"
#include "CampaignTally.h"
#include "RunKeySet.h"
#include "TargetRunner.h"

namespace faultline {
namespace {

constexpr std::string_view kScratchPrefix = "faultline-replay-";

// Scratch directories are named faultline-replay-<pid>-XXXXXX after the orchestrator that made
// them, and removed by their guardian when the orchestrator ends however it ends. One left by an
// orchestrator whose guardian could not run (or by an older version) is removed by the next
// campaign once that orchestrator is gone.
void removeOrphanedScratchDirs(const std::filesystem::path& tmp)
{
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(tmp, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(kScratchPrefix, 0) != 0 || !entry.is_directory(ec)) continue;
        const std::string rest = name.substr(kScratchPrefix.size());
        const size_t dash = rest.find('-');
        if (dash == std::string::npos || dash == 0 || rest.find_first_not_of("0123456789") != dash) continue;
        const long pid = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
        if (pid <= 0 || pid == long(::getpid())) continue;
        if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
        std::filesystem::remove_all(entry.path(), ec);
    }
}

}  // namespace

Result<CampaignReport> Campaign::run()
{
    if (m_options.targets.empty()) return Error{"no targets given", ErrorCode::Usage};
    const StoppingRule& rule = m_options.stopping;
    if (rule.adaptive()) {
        if (Status st = checkStoppingRule(rule); !st) return st.error();
    } else if (m_options.reps == 0) {
        return Error{"--reps must be at least 1", ErrorCode::Usage};
    }
    if (m_options.workerProgram.empty() || !std::filesystem::exists(m_options.workerProgram))
        return Error{"faultline-worker not found at '" + m_options.workerProgram + "'", ErrorCode::Usage};
    {
        std::set<std::string> seen;
        for (const TargetSpec& t : m_options.targets)
            if (!seen.insert(t.text).second)
                return Error{"target '" + t.text + "' is given twice", ErrorCode::Usage};
        if (!m_options.reference.empty() && !seen.count(m_options.reference))
            return Error{"reference '" + m_options.reference + "' is not one of the targets",
                         ErrorCode::Usage};
    }
    if (!m_options.outPath.empty()) {
        // Evidence is never overwritten by the command that reads it.
        std::error_code ec;
        for (const std::string& out : {m_options.outPath, journalPath(m_options.outPath)})
            if (std::filesystem::equivalent(out, m_options.tracePath, ec))
                return fileError(out, "is the trace this campaign replays; write the results elsewhere",
                                 ErrorCode::Usage);
    }
    OpenOptions open;
    open.allowExternal = m_options.allowExternal;
    auto traceResult = readTrace(m_options.tracePath, open);
    if (!traceResult) return traceResult.error();
    const Trace& trace = *traceResult;

    std::vector<std::string> warnings = trace.warnings;
    auto ops = selectOps(trace, m_options.ops, warnings);
    if (!ops) return ops.error();

    JournalHeader header;
    header.targets.reserve(m_options.targets.size());
    for (const TargetSpec& t : m_options.targets) header.targets.push_back(t.text);
    header.ops = *ops;
    header.reps = rule.adaptive() ? 0 : m_options.reps;
    header.untilRate = rule.untilRate;
    header.seed = m_options.seed;
    // Runs are added up as they finish; memory is bounded by ops x targets (CampaignTally.h).
    CampaignTally tally;
    RunKeySet done;
    std::map<std::pair<std::string, size_t>, std::pair<uint64_t, uint64_t>> journaled;
    CampaignJournal journal;
    if (!m_options.outPath.empty()) {
        auto digest = traceContentDigest(m_options.tracePath);
        if (!digest) return digest.error();
        header.traceDigest = *digest;
        const std::string jp = journalPath(m_options.outPath);
        if (m_options.resume) {
            if (std::filesystem::exists(jp)) {
                Status read =
                    readCampaignJournal(jp, warnings,
                                        {.header =
                                             [&](const std::optional<JournalHeader>& h) {
                                                 return checkJournalHeader(jp, h, header, warnings);
                                             },
                                         .run = [&](RunRecord r) -> Status {
                                             if (Status fits = checkRunFits(r, header); !fits)
                                                 return journalRefusal(jp, fits.message());
                                             done.insert(r.target, r.opIndex, r.rep);
                                             if (!r.setupError) {
                                                 auto& [runs, failures] = journaled[{r.target, r.opIndex}];
                                                 ++runs;
                                                 failures += r.failed() ? 1 : 0;
                                             }
                                             tally.add(std::move(r));
                                             return {};
                                         }});
                if (!read) return read.error();
            }
        } else if (std::filesystem::exists(jp)) {
            return fileError(
                jp, "a journal from an earlier campaign exists: use --resume to continue it, or remove it",
                ErrorCode::Usage);
        }
    }

    // Where workers write their outputs: a private directory that goes with the campaign, also
    // when the campaign is killed with -9 (ScratchDirectory's guardian), unless the caller
    // named one.
    std::optional<ScratchDirectory> ownScratch;
    std::string scratch = m_options.scratchDir;
    if (scratch.empty()) {
        const std::string tmp = ScratchDirectory::systemTemp();
        removeOrphanedScratchDirs(tmp);
        auto made =
            ScratchDirectory::create(tmp, std::string(kScratchPrefix) + std::to_string(::getpid()) + "-");
        if (!made)
            return Error{"cannot create a scratch directory for worker outputs: " + made.error().message,
                         ErrorCode::Io};
        ownScratch = std::move(*made);
        scratch = ownScratch->path();
    } else {
        std::error_code made;
        std::filesystem::create_directories(scratch, made);
    }

    // Adaptive campaigns count the runs a clean target needs: a failure or the budget ends sooner.
    const uint64_t repsPerOp =
        rule.adaptive() ? runsToRuleOut(rule.untilRate, rule.confidence) : m_options.reps;
    uint64_t total = uint64_t(ops->size()) * repsPerOp * m_options.targets.size();
    uint64_t finished = done.size();
    std::mutex recordMutex;
    std::atomic<bool> stop{false};
    std::optional<Error> failure;
    std::map<std::string, TargetInfo> info;
    ReferenceCache refs(trace, m_options.targets.size());

    const TargetRunnerShared shared{.options = m_options,
                                    .trace = trace,
                                    .ops = *ops,
                                    .refs = refs,
                                    .journal = journal,
                                    .done = done,
                                    .journaled = journaled,
                                    .deadline = rule.adaptive() && rule.budget.count() > 0
                                                    ? std::chrono::steady_clock::now() + rule.budget
                                                    : std::chrono::steady_clock::time_point::max(),
                                    .record =
                                        [&](RunRecord r) {
                                            std::lock_guard lock(recordMutex);
                                            ++finished;
                                            const std::string what =
                                                r.target + " op " + std::to_string(r.opIndex) + " rep " +
                                                std::to_string(r.rep) + ": " + nameOf(r.outcome);
                                            tally.add(std::move(r));
                                            if (m_progress) m_progress(finished, total, what);
                                        },
                                    .fail =
                                        [&](const Error& e) {
                                            std::lock_guard lock(recordMutex);
                                            if (!failure) failure = e;
                                            stop = true;
                                        },
                                    .stop = stop,
                                    .cancel = m_cancel};
    std::vector<std::unique_ptr<TargetRunner>> runners;
    for (const TargetSpec& spec : m_options.targets)
        runners.push_back(std::make_unique<TargetRunner>(shared, spec));
    // Every target starts before anything is journaled: one that cannot start is a setup error
    // (exit 2), never a run that counts against it.
    for (const auto& runner : runners) {
        if (Status st = runner->start(); !st) return st.error();
    }
    if (!m_options.outPath.empty()) {
        Status st = journal.open(journalPath(m_options.outPath), header);
        if (!st) return st.error();
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < runners.size(); ++i) {
        const std::string out = scratch + "/target-" + std::to_string(i) + ".safetensors";
        threads.emplace_back([&runner = *runners[i], out] { runner.runAll(out); });
    }
    for (std::thread& t : threads) t.join();
    ownScratch.reset();
    if (Status st = journal.sync(); !st && !failure) failure = st.error();
    std::error_code ec;

    if (failure) {
        return Error{failure->message +
                         " (the campaign stopped; every run journaled before it is kept: --resume "
                         "continues once there is room)",
                     failure->code};
    }
    std::vector<std::string> labels;
    for (const auto& r : runners) {
        labels.push_back(r->spec().text);
        info[r->spec().text] = r->info();
    }
    // Ops that cannot be replayed at all (a malformed trace) are errors of the trace, not of any
    // target: said once per op, and a campaign with nothing else to judge has no verdict.
    const std::map<size_t, std::string>& unreplayable = tally.unreplayable();
    for (const auto& [op, why] : unreplayable) warnings.push_back(why);
    if (tally.executedRuns() == 0 && !unreplayable.empty() && !(m_cancel && m_cancel->load())) {
        // The journal holds nothing but these: a fixed trace starts afresh.
        if (!m_options.resume && !m_options.outPath.empty())
            std::filesystem::remove(journalPath(m_options.outPath), ec);
        return fileError(m_options.tracePath,
                         "no selected op can be replayed: " + unreplayable.begin()->second);
    }
    CampaignReport report = tally.finish(labels, info, m_options.reference);
    report.trace = m_options.tracePath;
    report.traceDigest =
        header.traceDigest;  // with --out: which bytes were replayed (fleet merges vote per trace)
    report.reps = rule.adaptive() ? 0 : m_options.reps;
    report.seed = m_options.seed;
    report.ops = *ops;
    report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
    report.cancelled = m_cancel && m_cancel->load();
    report.stopping = rule;
    if (rule.adaptive())
        for (OpTargetStats& s : report.stats)
            s.stoppedBy = stoppedBy(s.runs, s.failures, rule, report.cancelled);
    report.node = m_options.node;
    if (!m_options.outPath.empty()) {
        Status st = writeCampaignResults(m_options.outPath, report);
        if (!st)
            return Error{st.message() +
                             " (every run is in the journal beside it: --resume writes the results "
                             "once there is room)",
                         st.error().code};
    }
    return report;
}

}  // namespace faultline
