#pragma once
// The bitwise evidence a campaign has beyond each run's judgement against the golden model:
//   - peers: targets with the same peer key (same SKU, SM count and library versions, see
//     Target::peerKey) must produce identical bits for an op even where their library is not
//     the golden model; a run whose bits differ from the peers' reference is a failure, also
//     when it stays inside the op's rounding-error bound (sub-bound corruption is how silent
//     weight drift starts);
//   - on-device repetition checks (RunRecord::vsRep): the device's own comparison of a
//     repetition with an earlier one, held against the host's digests of the copied outputs.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "CampaignSummary.h"

namespace faultline {

// Whether a run takes part in peer judgement: it has a peer key and an output, and is not
// golden-exact (those are judged by bits against the golden model already).
bool peerJudged(const RunRecord& r);

// (op, peer key) -> target -> the distinct digests of its peer-judged runs.
using PeerDigests = std::map<std::pair<size_t, std::string>, std::map<std::string, std::set<std::string>>>;

struct PeerDecision {
    PeerBasis basis = PeerBasis::None;
    std::string digest;  // the reference bits' digest ("" with basis none)
    size_t peers = 0;
};

// Fills report.peers from the digests, with report.reference as the known-healthy target, and
// returns the decision per (op, peer key) of every group of two or more targets. Groups where
// nothing decides which bits are right (two peers that differ, no reference) get basis "none"
// and a warning.
std::map<std::pair<size_t, std::string>, PeerDecision> judgePeers(const PeerDigests& groups,
                                                                  CampaignReport& report);

struct RepeatEvidence {
    uint64_t differing = 0;  // runs the device found different from the earlier repetition
    uint64_t maxFlippedBits = 0;
    uint64_t transferMismatches = 0;  // runs where the device's answer and the host digests disagree
};

// Whether `v` is a repetition check as the worker protocol writes it (an object whose rep,
// mismatched and flipped_bits, where present, are non-negative integers): what a journal or a
// worker gives is checked with this before the summary reads it.
bool isRepeatCheckJson(const nlohmann::json& v);

// The warning for a run whose on-device repetition check contradicts the host's digests: the
// device found `mismatched` elements different from repetition `against` while the host copies
// are identical (`hostSame`), or the other way round.
std::string repeatContradiction(size_t opIndex, const std::string& target, uint32_t rep, uint32_t against,
                                uint64_t mismatched, bool hostSame);

}  // namespace faultline
