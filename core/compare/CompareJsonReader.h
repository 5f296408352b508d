#pragma once
// The comparison JSON (CompareJson.h) read back: what a compare results file's report_json
// holds, for the GUI to draw a comparison without recomputing it. The inverse of
// divergenceToJson for every member it writes (statistics written as null, being non-finite,
// come back as +inf for maxima and NaN otherwise); records are not read back (their table is
// the results view's). Any member missing or of the wrong type is an error naming `source`.
#include <nlohmann/json.hpp>
#include <string>

#include "../Result.h"
#include "CompareRun.h"

namespace faultline {

Result<Divergence> divergenceFromJson(const nlohmann::json& j, const std::string& source);
// The tensors, unpaired, errors, not_comparable and not_compared lists and the tolerance.
Result<CompareReport> compareReportFromJson(const nlohmann::json& j, const std::string& source);

}  // namespace faultline
