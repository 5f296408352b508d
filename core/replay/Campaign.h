#pragma once
// A replay campaign: ops × targets × repetitions. Each target runs in its own faultline-worker
// process under a watchdog (a hang becomes a `hang` outcome, a crash a `crash` outcome with its
// stderr, and the worker is restarted). Every finished run is appended to a journal and flushed
// before the next starts, so a killed orchestrator loses at most the run in flight, and a
// resumed campaign skips what the journal holds. Outputs are compared with the golden model
// (within the op's error bound), with what the trace's devices recorded, and across targets by
// digest; summaries give rates with Wilson intervals, determinism certificates and verdicts.
//
// The pieces live in headers of their own, included here for the campaign's users:
// CampaignOptions.h (what to run), RunRecord.h (one run), CampaignSummary.h (statistics and
// verdicts), CampaignJournal.h, CampaignResultsFile.h, OpSelection.h. TargetRunner.h is one
// target's side of the run.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "../Result.h"
#include "CampaignJournal.h"
#include "CampaignOptions.h"
#include "CampaignResultsFile.h"
#include "CampaignSummary.h"
#include "OpSelection.h"
#include "RunRecord.h"

namespace faultline {

using CampaignProgress = std::function<void(uint64_t done, uint64_t total, const std::string& what)>;

class Campaign {
public:
    explicit Campaign(CampaignOptions options) : m_options(std::move(options)) {}
    // Called from the target threads (serialised by the campaign).
    void setProgress(CampaignProgress progress) { m_progress = std::move(progress); }
    // Checked between runs; a cancelled campaign keeps what finished (report.cancelled).
    void setCancelFlag(const std::atomic<bool>* cancel) { m_cancel = cancel; }
    // Runs every target in parallel, one worker process each.
    Result<CampaignReport> run();

    // The journal that goes with a results file.
    static std::string journalPath(const std::string& outPath) { return outPath + ".journal.jsonl"; }

private:
    CampaignOptions m_options;
    CampaignProgress m_progress;
    const std::atomic<bool>* m_cancel = nullptr;
};

}  // namespace faultline
