#pragma once
// report.md's "Device history" section: the suspect's history from the ledger as case.json's
// `ledger_history` holds it (docs/formats.md): where and when it was seen, its events, resets and
// reboots, its campaigns with per-op rates and intervals, earlier bundles, the rules that fired
// with their reasons, and its trends. Nothing when the case has no `ledger_history` (no ledger
// was given).
#include <nlohmann/json.hpp>
#include <string>

namespace faultline {

// The section's markdown ("" when `caseJson` has no `ledger_history`).
std::string deviceHistoryMarkdown(const nlohmann::json& caseJson);

}  // namespace faultline
