#pragma once
// One GPU's story from the ledger (`faultline ledger show SERIAL|UUID`): where and as what it was
// seen, its health snapshots, Xid/SXid events, the reboots of its hosts, its campaigns with their
// per-op rates, its evidence bundles, in time order, and what the rules conclude (LedgerRules.h).
//
// A GPU is found by board serial or UUID. Its rows are those naming any serial or UUID it was seen
// with, and the rows that name no GPU but a place (host and bus id) it held at their time
// (LedgerSlots.h): kernel-log events often carry only a bus id, and a slot may hold another board
// before or after it.
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "LedgerEngine.h"
#include "LedgerRules.h"
#include "LedgerTrends.h"

namespace faultline {

struct TimelineEntry {
    std::string at;       // when (UTC ISO 8601; when it was recorded where the source had no date)
    std::string kind;     // "identity", "health", "xid", "sxid", "boot", "campaign", "evidence"
    std::string summary;  // one line for a person
    nlohmann::json detail;
};

struct LedgerTimeline {
    std::string key, location;
    std::set<std::string> serials, uuids;
    std::vector<RuleLocation> locations;
    std::vector<TimelineEntry> entries;
    std::vector<RuleFinding> findings;
    LedgerTrends trends;  // failure rate per `window` and counters' growth (LedgerTrends.h)
};

// The timeline of the GPU `key` names, with its trends per `window`. A key the ledger knows
// nothing about is an error naming it.
Result<LedgerTimeline> ledgerTimeline(LedgerEngine& engine, const std::string& key,
                                      TrendWindow window = TrendWindow::Month);
// The same, with nullopt for a key the ledger knows nothing about (an empty key is still an error).
Result<std::optional<LedgerTimeline>> findLedgerTimeline(LedgerEngine& engine, const std::string& key,
                                                         TrendWindow window = TrendWindow::Month);

// The `ledger show --json` document and the text `ledger show` prints (inputs' text printable).
nlohmann::json ledgerTimelineJson(const LedgerTimeline& t);
std::string ledgerTimelineText(const LedgerTimeline& t);

}  // namespace faultline
