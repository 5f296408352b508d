#pragma once
// The campaign results file (`replay --out RESULTS.h5`, docs/formats.md "Campaign results v1"):
// HDF5 with faultline_format="campaign", /targets, /stats, /runs.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "../Result.h"
#include "CampaignSummary.h"

namespace faultline {

// Writes `report` to `path` (through a temporary file renamed into place). Errors name the file.
Status writeCampaignResults(const std::string& path, const CampaignReport& report);
// Writes a report already in its JSON form (campaignJson's fields; a merged fleet campaign adds
// "fleet"): the same file, root attribute `host` from "node", `fleet`=1 for a merged one.
Status writeCampaignResultsJson(const std::string& path, const nlohmann::json& report);
// The same file for a report too large to hold as one JSON tree (a merged fleet campaign): root
// attributes from `header` (its trace, reps, seed, node, fleet), one targets/<i> group per
// `target(i)` for i < targetCount, and report_json copied in chunks from the file `jsonPath`,
// which holds the report's JSON text.
Status writeCampaignResultsStreamed(const std::string& path, const nlohmann::json& header, size_t targetCount,
                                    const std::function<nlohmann::json(size_t)>& target,
                                    const std::string& jsonPath);
// Reads a results file back: campaignJson() of the report it holds. Errors name the file.
Result<nlohmann::json> readCampaignResults(const std::string& path);

}  // namespace faultline
