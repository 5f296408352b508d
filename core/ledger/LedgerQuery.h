#pragma once
// `faultline ledger query`: rows across every GPU by flag, Xid, verdict, host and time. Each of
// --flag, --xid and --verdict selects its kind of row (health snapshots, events, campaign targets);
// with none of them every kind is listed (boots and evidence bundles too). --host and the time
// range narrow every kind. Times compare as UTC ISO 8601 text: `since` inclusive, `until`
// exclusive (--until 2026-12-02 ends with December 1).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../replay/ReplayVocabulary.h"
#include "LedgerEngine.h"

namespace faultline {

// The health flags a snapshot can carry (as `faultline health --json` names them).
const std::vector<std::string>& ledgerFlagNames();

struct LedgerQueryFilter {
    std::optional<std::string> flag;  // one of ledgerFlagNames()
    std::optional<int64_t> xid;
    std::optional<Verdict> verdict;
    std::optional<std::string> host, since, until;
    size_t limit = 1000;  // rows per kind
};

struct LedgerQueryResult {
    nlohmann::json rows = nlohmann::json::array();  // {kind, at, host, bus_id, serial, uuid, summary, ...}
    bool truncated = false;                         // a kind had more than `limit` rows
};

// An unknown flag or a time that is not ISO 8601 is a usage error.
Result<LedgerQueryResult> queryLedger(LedgerEngine& engine, const LedgerQueryFilter& filter);

nlohmann::json ledgerQueryJson(const LedgerQueryFilter& filter, const LedgerQueryResult& result);
std::string ledgerQueryText(const LedgerQueryResult& result);

}  // namespace faultline
