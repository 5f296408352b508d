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
#include <string>
#include <utility>
#include <vector>

#include "Campaign.h"

namespace faultline {

// Fills report.peers and the vsPeers of report.runs from the runs' peer keys and digests, with
// report.reference as the known-healthy target. Groups where nothing decides which bits are
// right (two peers that differ, no reference) get basis "none" and a warning.
void judgePeers(CampaignReport& report);

struct RepeatEvidence {
    uint64_t differing = 0;  // runs the device found different from the earlier repetition
    uint64_t maxFlippedBits = 0;
    uint64_t transferMismatches = 0;  // runs where the device's answer and the host digests disagree
};

// Whether `v` is a repetition check as the worker protocol writes it (an object whose rep,
// mismatched and flipped_bits, where present, are non-negative integers): what a journal or a
// worker gives is checked with this before the summary reads it.
bool isRepeatCheckJson(const nlohmann::json& v);

// Per (op, target): what the on-device repetition checks say, and a warning for every run where
// they contradict the host's digests.
std::map<std::pair<size_t, std::string>, RepeatEvidence> checkRepeatEvidence(
    const std::vector<RunRecord>& runs, std::vector<std::string>& warnings);

}  // namespace faultline
