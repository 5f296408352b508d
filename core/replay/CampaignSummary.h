#pragma once
// What a campaign's runs add up to: per op and target statistics with Wilson intervals,
// determinism certificates, peer judgements and a verdict per target; and the report's JSON and
// text forms. Pure functions of the run records (added up by CampaignTally.h), so a resumed or
// merged campaign is summarised the same way.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ReplayVocabulary.h"
#include "RunRecord.h"
#include "Statistics.h"
#include "StoppingRule.h"

namespace faultline {

struct OpTargetStats {
    size_t opIndex = 0;
    std::string op, name, target;
    uint64_t runs = 0, failures = 0, mismatches = 0, hangs = 0, crashes = 0, errors = 0;
    uint64_t deviceFaults = 0;  // errors that were sticky device errors (RunRecord::deviceFault)
    RateInterval rate;
    uint64_t distinctDigests = 0;         // among completed runs; 1 = bitwise reproducible
    bool distinctDigestsAtLeast = false;  // more than CampaignTally counts exactly: a lower bound
    std::string firstDigest;  // the digest of the first completed run ("" none): what fleet peers vote on
    uint64_t maxUlp = 0;
    std::string signature;        // most frequent signature kind among mismatches
    uint64_t peerMismatches = 0;  // runs whose bits differ from the peers' reference (counted in failures)
    // Runs inside the golden bound whose bits differ from a rerun peer's recorded output that
    // this target reproduced bit for bit in other runs (counted in failures; not added to
    // peerMismatches' runs twice: failures take the larger of the two).
    uint64_t rerunMismatches = 0;
    std::string rerunPeer;      // the rerun device those runs were held against
    uint64_t repDiffering = 0;  // runs the target's on-device check found different from an earlier rep
    uint64_t repMaxFlippedBits = 0;
    // Runs where the on-device repetition check and the host's digests disagree: the bits changed
    // between the device and the host, or the device-side comparison is wrong.
    uint64_t transferMismatches = 0;
    // Adaptive campaigns (replay --until-rate): what ended these runs (Campaign::run sets it).
    std::optional<StoppedBy> stoppedBy;
};

struct TargetSummary {
    std::string target, description;
    bool bitwiseStable = true;
    uint64_t runs = 0, failures = 0;
    RateInterval rate;
    // Runs of ops that cannot be replayed at all (RunRecord::setupError): not in runs/failures.
    uint64_t notReplayable = 0;
    // Determinism certificate: every op's completed runs on this target gave identical bits.
    bool deterministic = true;
    std::vector<size_t> failingOps, reproducingOps;
    std::string peerKey;
    std::vector<size_t> peerSplitOps;  // ops where it and its peers differ and nothing decides who is right
    // How the runs add up (summarizeCampaign in CampaignSummary.cpp decides).
    Verdict verdict = Verdict::Healthy;
    std::string explanation;
};

// Targets with the same peer key that ran an op (not golden-exact runs: those are judged by
// bits against the golden model already). Their outputs must be bitwise identical; the bits
// they must reproduce are the reference target's when it is among them and deterministic, else
// the digest a strict majority of them produced.
struct PeerGroup {
    size_t opIndex = 0;
    std::string peerKey;
    std::vector<std::string> targets;
    PeerBasis basis = PeerBasis::None;
    std::string digest;                            // the reference bits' digest ("" with basis none)
    std::vector<std::string> agreeing, differing;  // targets whose runs all match / do not all match
};

// What the campaign knows of a target from its worker's hello.
struct TargetInfo {
    std::string description;
    bool bitwiseStable = true;
    std::string peerKey;
};

struct CampaignReport {
    std::string trace;
    std::string traceDigest;  // the trace file's content digest (traceContentDigest; "" unknown)
    uint32_t reps = 0;        // 0 in an adaptive campaign
    StoppingRule stopping;    // adaptive: --until-rate, --confidence, --budget
    uint64_t seed = 0;
    std::vector<size_t> ops;
    std::vector<TargetSummary> targets;
    std::vector<OpTargetStats> stats;
    // Per op: groups of targets whose first completed runs gave identical bits.
    std::vector<std::pair<size_t, std::vector<std::vector<std::string>>>> agreement;
    std::vector<PeerGroup> peers;
    std::string reference;
    // The runs listed: all of them, or past CampaignTally::kRunsKeptInFull the notable ones
    // (CampaignTally.h); runsTotal counts every run (the journal holds them all).
    std::vector<RunRecord> runs;
    uint64_t runsTotal = 0;
    std::vector<std::string> warnings;
    bool cancelled = false;
    // Where the campaign ran (CampaignOptions::node): host, scheduler task, GPU inventory; null unknown.
    nlohmann::json node;
};

// Builds statistics, certificates and verdicts from run records (CampaignTally over `runs`, in
// order of op, target and repetition; pure).
// `info` maps target labels to what their workers said of them; `reference` is
// CampaignOptions::reference.
CampaignReport summarizeCampaign(const std::vector<RunRecord>& runs, const std::vector<std::string>& targets,
                                 const std::map<std::string, TargetInfo>& info,
                                 const std::string& reference = {});

// What ended an adaptive campaign's runs of one op on one target, with what a clean run rules
// out: "no failure in 2995 runs: rate < 1e-3 at 95% (stopped by rate: rate < 1e-3 at 95%
// reached)", "stopped by a failure after 4 run(s) (1 failed)". The one wording of the CLI's text,
// the GUI's replay panel and a results file's tables.
std::string stoppedByText(StoppedBy stopped, uint64_t runs, uint64_t failures, const StoppingRule& rule);

nlohmann::json campaignJson(const CampaignReport& report);
std::string campaignText(const CampaignReport& report);

}  // namespace faultline
