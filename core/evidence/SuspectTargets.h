#pragma once
// Which of a campaign's targets ran on the suspect GPU, and so which failures are evidence about
// the suspect's serial number. A target is tied to a physical GPU only through what recorded it:
//
//   cuda:N      the node's inventory (the campaign report's node.inventory, from `replay
//               --inventory DEVICES.json`, or `evidence --inventory DEVICES.json`): GPU N's UUID,
//               serial and bus id. Without an inventory a cuda target is tied to no GPU.
//   host/cuda:N a merged fleet campaign's GPU: its fleet_gpu UUID, serial and bus id.
//   cpu         the golden model: never a GPU.
//   sim:<model> a simulation: never a GPU, except the declared stand-in of a simulated suspect (a
//               trace device that is the suspect and records `simulated_defect` equal to the
//               target, as the demo incident does); its evidence is labelled simulated.
//
// Only targets tied to the suspect (or its declared stand-in) give candidate RMA reasons and are
// replayed by the reproducer; every other target is context, labelled as such.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../trace/Trace.h"
#include "CampaignEvidence.h"

namespace faultline {

// A GPU as the vendor knows it; any field may be "" (unknown).
struct BoardIdentity {
    std::string uuid, serial, busId;

    bool empty() const { return uuid.empty() && serial.empty() && busId.empty(); }
    // Some field known on both sides is equal (UUIDs case-insensitively, bus ids normalised).
    bool sameGpu(const BoardIdentity& other) const;
    // "serial 1652…, GPU-9c3b…, bus 0000:2a:00.0"
    std::string text() const;
};

enum class TargetRole {
    Suspect,         // ran on the suspect GPU
    SuspectStandIn,  // simulates the suspect, as the trace declares (simulated evidence)
    OtherGpu,        // ran on another GPU
    Simulated,       // a simulated device, not the suspect
    Golden,          // the CPU golden model
    Untied,          // a GPU target nothing ties to a physical GPU
};
// "suspect", "simulated_stand_in", "other_gpu", "simulated", "golden", "untied"
const char* targetRoleName(TargetRole role);

struct TargetTie {
    std::string target;  // the campaign's label
    TargetRole role = TargetRole::Untied;
    BoardIdentity gpu;  // the physical GPU it ran on, where known
    std::string how;    // one sentence: how it was tied, or why it could not be
};

struct SuspectTargets {
    BoardIdentity suspect;
    std::vector<TargetTie> ties;  // one per campaign target, in the campaign's order
    // Said once per problem: no target is the suspect, a cuda target without an inventory, ...
    std::vector<std::string> warnings;

    const TargetTie* find(const std::string& target) const;
    // The target ran on the suspect or is its declared stand-in.
    bool isSuspect(const std::string& target) const;
    bool anySuspect() const;
};

// Ties every target of `campaign` to a GPU. `inventory` overrides the campaign's own
// node.inventory when not null; `devices` are the trace's (for a declared stand-in).
SuspectTargets tieTargetsToSuspect(const CampaignEvidence& campaign, const BoardIdentity& suspect,
                                   const nlohmann::json& inventory = nullptr,
                                   const std::vector<TraceDevice>& devices = {});

// The suspect's measured failure rate on the ops it failed, and the repetitions a replay of those
// ops needs so that a defect failing at that rate fails at least once with probability
// `confidence`:  reps = ceil( ln(1 - confidence) / (ops * ln(1 - p)) ), p = failures / runs of the
// suspect's targets on those ops; at least kMinReproducerReps (a repetition on the same op is
// what a persistent verdict needs), at most kMaxReproducerReps.
inline constexpr uint32_t kMinReproducerReps = 2;
inline constexpr uint32_t kMaxReproducerReps = 1000;
inline constexpr double kReproducerConfidence = 0.99;
struct ReproducerReps {
    uint32_t reps = kMinReproducerReps;
    uint64_t failures = 0, runs = 0;  // the suspect's, on the replayed ops
    double rate = 0;                  // failures / runs
    size_t ops = 0;
    double probability = 0;  // that `reps` repetitions of the ops fail at least once at `rate`
    bool capped = false;     // the formula asked for more than kMaxReproducerReps
};
ReproducerReps reproducerReps(uint64_t failures, uint64_t runs, size_t ops);

}  // namespace faultline
