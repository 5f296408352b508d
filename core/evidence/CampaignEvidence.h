#pragma once
// What an evidence bundle takes from a replay campaign's results file (docs/formats.md
// "Campaign results v1"): every target's verdict and failure rate with its Wilson interval, and
// the ops that diverged on a target that is not healthy (what the minimal reproducer replays).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"
#include "../replay/Statistics.h"

namespace faultline {

struct CampaignTargetEvidence {
    std::string target, description, verdict, explanation;
    uint64_t runs = 0, failures = 0;
    RateInterval rate;  // Wilson 95 %
    std::vector<size_t> failingOps;
    bool deterministic = false;
};

struct CampaignOpEvidence {
    size_t index = 0;
    std::string op, name;
    struct PerTarget {
        uint64_t runs = 0, failures = 0, mismatches = 0, maxUlp = 0;
        std::string signature;
        RateInterval rate;
    };
    std::map<std::string, PerTarget> targets;
};

struct CampaignEvidence {
    std::string resultsPath;
    std::string trace;  // as the campaign recorded it
    uint32_t reps = 0;
    uint64_t seed = 0;
    std::string reference;  // "" none
    bool cancelled = false;
    std::vector<CampaignTargetEvidence> targets;
    std::vector<CampaignOpEvidence> divergentOps;  // failed on some target that is not healthy
    nlohmann::json document;                       // the results file's report, as read

    bool reproduced() const { return !divergentOps.empty(); }
    // The targets whose verdict is not healthy.
    std::vector<const CampaignTargetEvidence*> divergingTargets() const;
    // "3,7": the divergent ops as `faultline replay --ops` takes them.
    std::string divergentOpList() const;
};

// Reads a results file with core/replay's reader; rates are recomputed from the counts.
Result<CampaignEvidence> readCampaignEvidence(const std::string& resultsPath);

// case.json's "replay" object.
nlohmann::json campaignEvidenceJson(const CampaignEvidence& c);

}  // namespace faultline
