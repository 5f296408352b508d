#pragma once
// Rules over one GPU's history, each conclusion with its reason (`faultline ledger show`):
//   rma_candidate   two SDC-positive campaigns (a failing verdict: transient, persistent,
//                   device-specific) within 30 days of each other
//   possibly_masked a clean campaign after a reboot of its host that followed a failure (a failing
//                   campaign, or an event or health snapshot whose action is reset or worse): the
//                   reboot may have hidden the fault; replay again
//   moved           the GPU was seen on more than one host or bus id (slot)
// Pure functions of the rows, so they are tested without a database.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../replay/ReplayVocabulary.h"

namespace faultline {

inline constexpr double kEscalationWindowDays = 30.0;

struct RuleCampaign {
    int64_t campaignId = 0;
    std::string at;  // when it ended ("" unknown)
    std::string target, host;
    Verdict verdict = Verdict::Healthy;
    uint64_t runs = 0, failures = 0;
    double rate = 0, low = 0, high = 0;
};

struct RuleEvent {
    std::string at, host, what;  // a failure seen: "Xid 79 (...)", "health: drain"
};

struct RuleBoot {
    std::string at, host, bootId;
};

struct RuleLocation {
    std::string host, busId, firstSeen, lastSeen;
};

struct RuleInputs {
    std::vector<RuleCampaign> campaigns;
    std::vector<RuleEvent> failures;
    std::vector<RuleBoot> boots;
    std::vector<RuleLocation> locations;
};

struct RuleFinding {
    std::string rule;        // "rma_candidate", "possibly_masked", "moved"
    std::string conclusion;  // "RMA candidate", "possibly masked: replay again", "moved host or slot"
    std::string reason;      // one sentence naming the evidence
};

// Whether a campaign verdict says the target produced silent data corruption.
bool sdcPositive(Verdict v);

std::vector<RuleFinding> applyLedgerRules(const RuleInputs& inputs);

nlohmann::json ruleFindingJson(const RuleFinding& f);

}  // namespace faultline
