#pragma once
// The campaign results file (`replay --out RESULTS.h5`, docs/formats.md "Campaign results v1"):
// HDF5 with faultline_format="campaign", /targets, /stats, /runs.
#include <memory>
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
// The same file for a report too large to hold as one JSON tree (a merged fleet campaign),
// written as it is produced: root attributes from `header` (its trace, reps, seed, node, fleet),
// one targets/<i> group per addTarget in order, then report_json copied in chunks from the file
// `jsonPath` (the report's JSON text) by finish. Destroyed without finish, it leaves nothing.
class CampaignResultsStream {
public:
    static Result<CampaignResultsStream> create(const std::string& path, const nlohmann::json& header);
    CampaignResultsStream(CampaignResultsStream&&) noexcept;
    CampaignResultsStream& operator=(CampaignResultsStream&&) noexcept;
    ~CampaignResultsStream();
    Status addTarget(const nlohmann::json& target);
    Status finish(const std::string& jsonPath);

private:
    struct Impl;
    explicit CampaignResultsStream(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};
// Reads a results file back: campaignJson() of the report it holds. Errors name the file.
Result<nlohmann::json> readCampaignResults(const std::string& path);

}  // namespace faultline
