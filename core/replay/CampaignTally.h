#pragma once
// A campaign's runs added up one at a time as they finish (or as a journal is read back), then
// summarised: per op and target counts, distinct outputs, signatures, peer digests and on-device
// repetition checks, and the runs themselves. Memory is bounded by the campaign's ops and
// targets, never by its number of runs (`--reps 1000000` holds what `--reps 1000` does):
//   - every run is kept while there are at most kRunsKeptInFull; beyond that only the notable
//     ones: per op and target the first completed run, the first run of each of the first
//     kDistinctRunsKept distinct outputs and the first kFailedRunsKept failed runs (every run is
//     in the journal either way; the report says how many it lists);
//   - distinct outputs are counted exactly up to kDistinctOutputsKept per op and target, and
//     reported as "at least" beyond (a target with that many different answers is not
//     deterministic whatever the exact number);
//   - repetition checks are held against the digests of the first and the latest
//     kRepDigestsKept repetitions (the worker compares with the repetition it kept, which is
//     one of those).
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "BitwiseEvidence.h"
#include "CampaignSummary.h"
#include "RunRecord.h"

namespace faultline {

class CampaignTally {
public:
    static constexpr uint64_t kRunsKeptInFull = 10000;
    static constexpr size_t kDistinctOutputsKept = 1024;
    static constexpr size_t kDistinctRunsKept = 8;
    static constexpr uint64_t kFailedRunsKept = 16;
    static constexpr size_t kRepDigestsKept = 512;
    static constexpr size_t kWarningsPerCell = 8;

    void add(RunRecord r);
    uint64_t runs() const { return m_total; }
    // Runs that executed on their target (not setup errors).
    uint64_t executedRuns() const { return m_total - m_setupErrorRuns; }
    // Ops that cannot be replayed at all, with the first reason given.
    const std::map<size_t, std::string>& unreplayable() const { return m_unreplayable; }

    // Statistics, certificates and verdicts (summarizeCampaign). `info` maps target labels to
    // what their workers said of them; `reference` is CampaignOptions::reference.
    CampaignReport finish(const std::vector<std::string>& targets,
                          const std::map<std::string, TargetInfo>& info, const std::string& reference) const;

private:
    struct DigestCounts {
        uint64_t runs = 0, peerJudged = 0, peerJudgedOk = 0;
    };
    // The digests of recent repetitions, and checks waiting for a repetition not seen yet.
    struct RepDigests {
        std::map<uint32_t, std::string> first, latest;
        std::deque<uint32_t> latestOrder;
        struct Pending {
            uint32_t rep;
            std::string digest;
            uint64_t mismatched;
        };
        std::multimap<uint32_t, Pending> pending;  // by the repetition it was compared with
        uint64_t pendingDropped = 0;
        const std::string* find(uint32_t rep) const;
        void remember(uint32_t rep, const std::string& digest);
    };
    struct Cell {  // one op on one target
        OpTargetStats stats;
        uint64_t failed = 0, goldenExact = 0, keptFailed = 0;
        std::map<std::string, DigestCounts> digests;  // the first kDistinctOutputsKept distinct outputs
        DigestCounts overflow;                        // runs with outputs beyond those
        bool distinctOverflow = false;
        uint64_t peerJudgedOk = 0;
        // Per rerun peer label: runs with its bits, and runs inside the bound without them.
        std::map<std::string, std::pair<uint64_t, uint64_t>> rerunBits;
        std::optional<std::pair<uint32_t, std::string>> firstDigest;  // lowest rep with an output
        std::string peerKey;
        std::map<std::string, uint64_t> signatures;
        RepeatEvidence repeats;
        RepDigests repDigests;
        std::vector<std::string> warnings;
        uint64_t warningsDropped = 0;
    };
    void addRepeatCheck(Cell& cell, const RunRecord& r);
    void checkRepeat(Cell& cell, size_t op, const std::string& target, uint32_t rep, uint32_t against,
                     bool hostSame, uint64_t mismatched);

    std::map<std::pair<size_t, std::string>, Cell> m_cells;
    std::map<std::string, uint64_t> m_setupErrors;  // per target
    std::map<std::string, std::string> m_peerKeys;  // per target, from its runs
    std::map<size_t, std::string> m_unreplayable;
    std::vector<RunRecord> m_notable, m_rest;
    uint64_t m_total = 0, m_setupErrorRuns = 0;
    bool m_sampling = false;
};

}  // namespace faultline
