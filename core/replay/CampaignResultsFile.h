#pragma once
// The campaign results file (`replay --out RESULTS.h5`, docs/formats.md "Campaign results v1"):
// HDF5 with faultline_format="campaign", /targets, /stats, /runs.
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
// Reads a results file back: campaignJson() of the report it holds. Errors name the file.
Result<nlohmann::json> readCampaignResults(const std::string& path);

}  // namespace faultline
