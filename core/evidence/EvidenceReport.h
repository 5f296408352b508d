#pragma once
// report.md of an evidence bundle, rendered from its case.json alone (so a reviewer reads the
// same facts the machine-readable case holds): summary, suspect, checklist, symptom, timeline,
// decoded events, counters before/after, reproduction rates, figures, what was ruled out,
// candidate RMA reasons, warnings, the files and how to check them without Faultline.
#include <nlohmann/json.hpp>
#include <string>

namespace faultline {

std::string evidenceReportMarkdown(const nlohmann::json& caseJson);

}  // namespace faultline
