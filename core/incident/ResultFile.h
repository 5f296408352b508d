#pragma once
// What a file is, by its content, and what a file Faultline wrote holds (docs/formats.md): the
// GUI opens each kind read-only in a view of its own beside the open incident. A trace or a
// snapshot is part of an incident; everything else is a results file:
//
//   campaign     HDF5, faultline_format="campaign" (`replay --out`)
//   fleet        the same with fleet=1 (`merge --out`)
//   compare      HDF5, faultline_format="compare" (`compare --out`)
//   sweep        HDF5, faultline_format="sweep" (`sweep --out`)
//   collective   HDF5, faultline_format="collective" (`collective --out`)
//   explore      HDF5, faultline_format="explore" (`explore --out`), or JSON with
//                "format": "faultline-explore" (`explore --json` saved to a file)
//   health       JSON, "format": "faultline-health" (`health --json`)
//   evidence     a directory or ustar archive holding case.json with
//                "schema": "faultline-evidence-case" (`evidence --out`)
//
// The name of a file never decides. No Qt.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "../Result.h"
#include "../evidence/BundleVerifier.h"

namespace faultline {

enum class ResultKind { Incident, Campaign, Fleet, Compare, Sweep, Collective, Health, Evidence, Explore };

// "incident", "campaign", "fleet", "compare", "sweep", "collective", "health", "evidence",
// "explore".
std::string_view resultKindName(ResultKind kind);

// What `path` is. A file that is none of the above and not HDF5 or safetensors (a trace or a
// snapshot) is an error naming it; so is a directory that is not an evidence bundle.
Result<ResultKind> detectResultKind(const std::string& path);

struct ResultDocument {
    ResultKind kind = ResultKind::Incident;
    std::string path;
    // campaign, fleet, compare, sweep, collective, explore: report_json; health, explore as JSON:
    // the document;
    // evidence: case.json.
    nlohmann::json report;
    // evidence: `faultline verify`'s result, and its text.
    std::optional<BundleCheck> check;
    std::string checkText;
};

// Reads what a results file of `kind` holds (not Incident). Errors name the file: an unreadable
// file, a report that is not JSON, one larger than 64 MiB (a merged fleet: 1 GiB).
Result<ResultDocument> readResultDocument(const std::string& path, ResultKind kind);

}  // namespace faultline
