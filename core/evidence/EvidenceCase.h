#pragma once
// The case an evidence bundle makes, and case.json (schema v1, docs/formats.md): the case, host,
// software versions, the suspect and every GPU's identity, flags, counters before/after, Xid
// summary, the replay's rates with Wilson intervals, the reproducer, candidate RMA reasons,
// what was ruled out, the checklist of what a vendor needs, warnings, and the files.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../compare/Divergence.h"
#include "CampaignEvidence.h"
#include "MinimalReproducer.h"
#include "SuspectTargets.h"

namespace faultline {

inline constexpr int kEvidenceCaseSchemaVersion = 1;

// What the report's figures are drawn from: the first divergent op of the reproducer, compared
// with the golden model on its own recorded inputs (core/replay/Bisect.h).
struct EvidenceFigureInput {
    size_t opIndex = 0;
    std::string op, name, suspectLabel;
    Divergence divergence;
};

struct SuspectGpu {
    std::string busId, uuid, serial, product;
    std::string source;      // how it was identified
    std::string traceLabel;  // the trace's suspect device label ("" none)
    nlohmann::json health;   // its entry of the health report's "gpus" (null: not in it)
};

struct EvidenceFile {
    std::string path;    // in the bundle
    std::string role;    // bug_report, attachment, kernel_log, nvidia_smi_snapshot, health_report, ...
    std::string source;  // the input it is a byte-identical copy of ("" written by faultline)
};

// One thing a vendor needs; a missing required one refuses the export, any other is a warning.
struct ChecklistItem {
    std::string item;
    bool present = false;
    bool required = false;
    std::string detail;
};

struct EvidenceCase {
    std::string caseId, created, faultlineVersion;
    std::string signedBy;  // key id, "" unsigned
    nlohmann::json host;
    nlohmann::json health;  // healthReportJson (null: no logs or snapshots)
    SuspectGpu suspect;
    const CampaignEvidence* campaign = nullptr;
    SuspectTargets targets;  // which of the campaign's targets ran on the suspect
    std::optional<ReproducerFiles> reproducer;
    std::optional<EvidenceFigureInput> symptom;
    std::map<std::string, std::string> traceAttributes;
    std::vector<std::string> figures;
    std::vector<EvidenceFile> files;
    std::vector<std::string> warnings;
    // The suspect's history from the ledger (EvidenceOptions::deviceHistory); null: no ledger was
    // given, and case.json has no `ledger_history`.
    nlohmann::json ledgerHistory;

    // Filled by finish(): the checklist (and a warning per missing item), RMA reasons (the
    // suspect's own evidence only), what other targets did (context, never an RMA reason), ruled
    // out.
    std::vector<ChecklistItem> checklist;
    std::vector<std::string> rmaReasons, otherTargets, ruledOut;
    void finish();
};

nlohmann::json evidenceCaseJson(const EvidenceCase& c);
// The checklist of a case.json document.
std::vector<ChecklistItem> evidenceChecklist(const nlohmann::json& caseJson);

}  // namespace faultline
