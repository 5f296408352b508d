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

// The options a campaign cannot start with: user mistakes, all of them Usage.
Status checkOptions(const CampaignOptions& o)
{
    if (o.targets.empty()) return Error{"no targets given", ErrorCode::Usage};
    if (o.stopping.adaptive()) {
        if (Status st = checkStoppingRule(o.stopping); !st) return st.error();
    } else if (o.reps == 0) {
        return Error{"--reps must be at least 1", ErrorCode::Usage};
    }
    if (o.workerProgram.empty() || !std::filesystem::exists(o.workerProgram))
        return Error{"faultline-worker not found at '" + o.workerProgram + "'", ErrorCode::Usage};
    std::set<std::string> seen;
    for (const TargetSpec& t : o.targets)
        if (!seen.insert(t.text).second)
            return Error{"target '" + t.text + "' is given twice", ErrorCode::Usage};
    if (!o.reference.empty() && !seen.count(o.reference))
        return Error{"reference '" + o.reference + "' is not one of the targets", ErrorCode::Usage};
    if (!o.outPath.empty()) {
        // Evidence is never overwritten by the command that reads it.
        std::error_code ec;
        for (const std::string& out : {o.outPath, Campaign::journalPath(o.outPath)})
            if (std::filesystem::equivalent(out, o.tracePath, ec))
                return fileError(out, "is the trace this campaign replays; write the results elsewhere",
                                 ErrorCode::Usage);
    }
    return {};
}

JournalHeader makeHeader(const CampaignOptions& o, const std::vector<size_t>& ops)
{
    JournalHeader header;
    header.targets.reserve(o.targets.size());
    for (const TargetSpec& t : o.targets) header.targets.push_back(t.text);
    header.ops = ops;
    header.reps = o.stopping.adaptive() ? 0 : o.reps;
    header.untilRate = o.stopping.untilRate;
    header.seed = o.seed;
    return header;
}

using JournaledCounts = std::map<std::pair<std::string, size_t>, std::pair<uint64_t, uint64_t>>;

// What an earlier run of this campaign journaled (--resume): its runs are tallied and not run again.
// A journal found without --resume is refused: it belongs to an earlier campaign.
struct Resumed {
    CampaignTally tally;  // runs are added up as they finish; memory is bounded by ops x targets
    RunKeySet done;
    JournaledCounts journaled;
};

Status resumeJournal(const CampaignOptions& o, JournalHeader& header, Resumed& resumed,
                     std::vector<std::string>& warnings)
{
    if (o.outPath.empty()) return {};
    auto digest = traceContentDigest(o.tracePath);
    if (!digest) return digest.error();
    header.traceDigest = *digest;
    const std::string jp = Campaign::journalPath(o.outPath);
    if (!std::filesystem::exists(jp)) return {};
    if (!o.resume)
        return fileError(
            jp, "a journal from an earlier campaign exists: use --resume to continue it, or remove it",
            ErrorCode::Usage);
    const auto onHeader = [&](const std::optional<JournalHeader>& h) {
        return checkJournalHeader(jp, h, header, warnings);
    };
    const auto onRun = [&](RunRecord r) -> Status {
        if (Status fits = checkRunFits(r, header); !fits) return journalRefusal(jp, fits.message());
        resumed.done.insert(r.target, r.opIndex, r.rep);
        if (!r.setupError) {
            auto& [runs, failures] = resumed.journaled[{r.target, r.opIndex}];
            ++runs;
            failures += r.failed() ? 1 : 0;
        }
        resumed.tally.add(std::move(r));
        return {};
    };
    return readCampaignJournal(jp, warnings, {.header = onHeader, .run = onRun});
}

// Where workers write their outputs: a private directory that goes with the campaign, also when
// the campaign is killed with -9 (ScratchDirectory's guardian), unless the caller named one.
Result<std::string> scratchFor(const CampaignOptions& o, std::optional<ScratchDirectory>& own)
{
    if (!o.scratchDir.empty()) {
        std::error_code made;
        std::filesystem::create_directories(o.scratchDir, made);
        return o.scratchDir;
    }
    const std::string tmp = ScratchDirectory::systemTemp();
    removeOrphanedScratchDirs(tmp);
    auto made = ScratchDirectory::create(tmp, std::string(kScratchPrefix) + std::to_string(::getpid()) + "-");
    if (!made)
        return Error{"cannot create a scratch directory for worker outputs: " + made.error().message,
                     ErrorCode::Io};
    own = std::move(*made);
    return own->path();
}

// Each target's runner on its own thread. Returns a setup error as it is (nothing counted against
// any target), and an error that stopped a started campaign with what is kept.
Status runTargets(const CampaignOptions& o, const CampaignProgress& progress, const std::atomic<bool>* cancel,
                  const Trace& trace, const JournalHeader& header, Resumed& resumed,
                  std::map<std::string, TargetInfo>& info, std::vector<std::string>& labels)
{
    const StoppingRule& rule = o.stopping;
    std::optional<ScratchDirectory> ownScratch;
    auto scratch = scratchFor(o, ownScratch);
    if (!scratch) return scratch.error();

    // Adaptive campaigns count the runs a clean target needs: a failure or the budget ends sooner.
    const uint64_t repsPerOp = rule.adaptive() ? runsToRuleOut(rule.untilRate, rule.confidence) : o.reps;
    const uint64_t total = uint64_t(header.ops.size()) * repsPerOp * o.targets.size();
    uint64_t finished = resumed.done.size();
    std::mutex recordMutex;
    std::atomic<bool> stop{false};
    std::optional<Error> failure;
    ReferenceCache refs(trace, o.targets.size());
    CampaignJournal journal;

    const auto record = [&](RunRecord r) {
        std::lock_guard lock(recordMutex);
        ++finished;
        const std::string what = r.target + " op " + std::to_string(r.opIndex) + " rep " +
                                 std::to_string(r.rep) + ": " + nameOf(r.outcome);
        resumed.tally.add(std::move(r));
        if (progress) progress(finished, total, what);
    };
    const auto fail = [&](const Error& e) {
        std::lock_guard lock(recordMutex);
        if (!failure) failure = e;
        stop = true;
    };
    const TargetRunnerShared shared{.options = o,
                                    .trace = trace,
                                    .ops = header.ops,
                                    .refs = refs,
                                    .journal = journal,
                                    .done = resumed.done,
                                    .journaled = resumed.journaled,
                                    .deadline = rule.adaptive() && rule.budget.count() > 0
                                                    ? std::chrono::steady_clock::now() + rule.budget
                                                    : std::chrono::steady_clock::time_point::max(),
                                    .record = record,
                                    .fail = fail,
                                    .stop = stop,
                                    .cancel = cancel};
    std::vector<std::unique_ptr<TargetRunner>> runners;
    for (const TargetSpec& spec : o.targets) runners.push_back(std::make_unique<TargetRunner>(shared, spec));
    // Every target starts before anything is journaled: one that cannot start is a setup error
    // (exit 2), never a run that counts against it.
    for (const auto& runner : runners)
        if (Status st = runner->start(); !st) return st.error();
    if (!o.outPath.empty())
        if (Status st = journal.open(Campaign::journalPath(o.outPath), header); !st) return st.error();
    std::vector<std::thread> threads;
    for (size_t i = 0; i < runners.size(); ++i) {
        const std::string out = *scratch + "/target-" + std::to_string(i) + ".safetensors";
        threads.emplace_back([&runner = *runners[i], out] { runner.runAll(out); });
    }
    for (std::thread& t : threads) t.join();
    ownScratch.reset();
    if (Status st = journal.sync(); !st && !failure) failure = st.error();
    if (failure)
        return Error{failure->message +
                         " (the campaign stopped; every run journaled before it is kept: --resume "
                         "continues once there is room)",
                     failure->code};
    for (const auto& r : runners) {
        labels.push_back(r->spec().text);
        info[r->spec().text] = r->info();
    }
    return {};
}

}  // namespace

Result<CampaignReport> Campaign::run()
{
    if (Status st = checkOptions(m_options); !st) return st.error();
    OpenOptions open;
    open.allowExternal = m_options.allowExternal;
    auto traceResult = readTrace(m_options.tracePath, open);
    if (!traceResult) return traceResult.error();
    const Trace& trace = *traceResult;

    std::vector<std::string> warnings = trace.warnings;
    auto ops = selectOps(trace, m_options.ops, warnings);
    if (!ops) return ops.error();
    JournalHeader header = makeHeader(m_options, *ops);
    Resumed resumed;
    if (Status st = resumeJournal(m_options, header, resumed, warnings); !st) return st.error();
    std::map<std::string, TargetInfo> info;
    std::vector<std::string> labels;
    if (Status st = runTargets(m_options, m_progress, m_cancel, trace, header, resumed, info, labels); !st)
        return st.error();
    const bool cancelled = m_cancel && m_cancel->load();

    // Ops that cannot be replayed at all (a malformed trace) are errors of the trace, not of any
    // target: said once per op, and a campaign with nothing else to judge has no verdict.
    const std::map<size_t, std::string>& unreplayable = resumed.tally.unreplayable();
    for (const auto& [op, why] : unreplayable) warnings.push_back(why);
    if (resumed.tally.executedRuns() == 0 && !unreplayable.empty() && !cancelled) {
        // The journal holds nothing but these: a fixed trace starts afresh.
        std::error_code ec;
        if (!m_options.resume && !m_options.outPath.empty())
            std::filesystem::remove(journalPath(m_options.outPath), ec);
        return fileError(m_options.tracePath,
                         "no selected op can be replayed: " + unreplayable.begin()->second);
    }
    CampaignReport report = resumed.tally.finish(labels, info, m_options.reference);
    report.trace = m_options.tracePath;
    report.traceDigest =
        header.traceDigest;  // with --out: which bytes were replayed (fleet merges vote per trace)
    report.reps = header.reps;
    report.seed = m_options.seed;
    report.ops = *ops;
    report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
    report.cancelled = cancelled;
    report.stopping = m_options.stopping;
    if (m_options.stopping.adaptive())
        for (OpTargetStats& s : report.stats)
            s.stoppedBy = stoppedBy(s.runs, s.failures, m_options.stopping, report.cancelled);
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
