#pragma once
// What an evidence bundle takes from a replay campaign's results file (docs/formats.md
// "Campaign results v1"): every target's verdict and failure rate with its Wilson interval, and
// the ops that diverged on a target that is not healthy (what the minimal reproducer replays).
//
// The file is untrusted (it may come from a stranger's fleet, and a node's host name becomes
// part of its GPUs' labels): every target label, verdict, reference, op kind and name and
// per-op target must be printable text (core/Text.h), else the campaign is refused with a
// Format error naming the file and the field; free text (descriptions, explanations,
// signatures) is kept printable (control characters escaped).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../Result.h"
#include "../replay/ReplayVocabulary.h"
#include "../replay/Statistics.h"

namespace faultline {

struct CampaignTargetEvidence {
    std::string target, description, explanation;
    Verdict verdict = Verdict::NoVerdict;
    uint64_t runs = 0, failures = 0;
    RateInterval rate;  // Wilson 95 %
    std::vector<size_t> failingOps;
    bool deterministic = false;
    // A merged fleet campaign's GPU (targets[].fleet_gpu): who it is and the target it ran as on
    // its own node ("cuda:3"), with the verdict its node found (without the fleet's peer vote).
    struct FleetGpu {
        std::string host, target, uuid, serial, pciBusId;
        std::optional<Verdict> nodeVerdict;  // nullopt: its node did not say (an older merge)
        std::vector<size_t> outlierOps;      // ops where its bits differed from the fleet's peers
    };
    std::optional<FleetGpu> fleetGpu;
};

struct CampaignOpEvidence {
    size_t index = 0;
    std::string op, name;
    struct PerTarget {
        uint64_t runs = 0, failures = 0, mismatches = 0, maxUlp = 0;
        std::string signature;
        RateInterval rate;
        std::optional<StoppedBy> stoppedBy;  // adaptive campaigns: what ended these runs
    };
    std::map<std::string, PerTarget> targets;
};

// One op on one target of an adaptive campaign (`replay --until-rate`): what ended its runs.
struct AdaptiveOpEvidence {
    size_t index = 0;
    std::string op, name, target;
    uint64_t runs = 0, failures = 0;
    StoppedBy stoppedBy = StoppedBy::Failure;
    RateInterval rate;  // Wilson 95 %
};

// The rule an adaptive campaign ran under (the results file's "until_rate").
struct UntilRateEvidence {
    double rate = 0, confidence = 0.95;
    double budgetSeconds = 0;  // 0: none
};

// At most this many op/target lines of an adaptive campaign go into the case (the rest are counted).
inline constexpr size_t kAdaptiveOpLines = 500;

struct CampaignEvidence {
    std::string resultsPath;
    std::string trace;  // as the campaign recorded it
    uint32_t reps = 0;
    uint64_t seed = 0;
    std::string reference;  // "" none
    bool cancelled = false;
    bool fleet = false;  // a merged fleet campaign (`faultline merge`): labels are host/target
    std::vector<CampaignTargetEvidence> targets;
    std::vector<CampaignOpEvidence> divergentOps;  // failed on (or, in a fleet, differed from its
                                                   // peers on) some target that is not healthy
    std::optional<UntilRateEvidence> untilRate;    // adaptive campaigns only
    std::vector<AdaptiveOpEvidence> adaptiveOps;   // every op and target that says what stopped it
    size_t adaptiveOpsLeftOut = 0;                 // beyond kAdaptiveOpLines
    nlohmann::json document;                       // the results file's report, as read

    bool reproduced() const { return !divergentOps.empty(); }
    // The targets whose verdict is not healthy.
    std::vector<const CampaignTargetEvidence*> divergingTargets() const;
    // "3,7": the divergent ops as `faultline replay --ops` takes them.
    std::string divergentOpList() const;
};

// Reads a results file with core/replay's reader; rates are recomputed from the counts. Text
// that is not printable is refused (above), and so is a stopped_by that is not failure, rate,
// budget or cancelled.
Result<CampaignEvidence> readCampaignEvidence(const std::string& resultsPath);

// case.json's "replay" object.
nlohmann::json campaignEvidenceJson(const CampaignEvidence& c);

}  // namespace faultline
