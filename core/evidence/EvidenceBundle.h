#pragma once
// `faultline evidence`: the RMA evidence bundle of one suspect GPU (docs/formats.md "Evidence
// bundle v1"). A directory and its .tar:
//
//   vendor/              the vendor's files, byte-identical: nvidia-bug-report logs (--logs) and
//                        field-diagnostic / DCGM output (--attach)
//   logs/                the other kernel logs given (dmesg, journalctl -k), byte-identical
//   health/nvidia-smi/   the nvidia-smi -q -x snapshots, byte-identical, in the order given
//   health/health.json   the decoded health report (`faultline health --json`)
//   health/events.jsonl  every decoded Xid/SXid event, one JSON object per line
//   replay/results.h5    the campaign's results file (+ its journal), byte-identical
//   replay/campaign.json the campaign's report
//   reproducer/          trace.h5 (only the divergent ops and their inputs, or --min-reproducer's
//                        one op cut down by `faultline shrink`), reproduce.sh
//   case.json            the case, schema v1 (with `ledger_history`, the suspect's history from
//                        the ledger, when one is given: deviceHistory)
//   report.md            the human report (+ report.pdf and figures/ where the GUI is built)
//   signing-key.pub, MANIFEST.sha256, MANIFEST.sha256.minisig
//
// What a vendor needs and is missing either refuses the export or is a warning in the report
// (see EvidenceChecklist): refused when the suspect GPU has no identity (no serial, UUID or bus
// id) or nothing was given at all; warned for no bug report, no pre-reset health snapshot, no
// reproduction, an unsigned bundle.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../Result.h"
#include "EvidenceCase.h"

namespace faultline {

struct EvidenceOptions {
    std::string outDir;
    std::string campaign;  // RESULTS.h5
    std::string trace;     // "" = the trace the campaign names
    // A minimal reproducer of the suspect's divergent op (`faultline shrink --out MIN.h5`): the
    // bundle's reproducer/trace.h5 and what reproduce.sh replays (MinimalReproducer.h); "" none.
    std::string minReproducer;
    std::vector<std::string> logs, nvidiaSmi, attachments;
    std::string caseId;                      // "" = derived from the suspect and the time
    std::string signKey;                     // minisign secret key; "" = unsigned (a warning)
    std::optional<std::string> keyPassword;  // for a password-encrypted signKey
    std::string suspect;  // bus id, UUID or serial; "" = the trace's suspect device, else the health report's
    // The node's `faultline devices --json`, to tie cuda:N targets to GPUs where the campaign
    // recorded no inventory of its own (core/evidence/SuspectTargets.h); "" = the campaign's.
    std::string inventory;
    std::string faultlineVersion;
    // Draws figures into DIR/figures (GUI builds): returns the files written, relative to DIR.
    std::function<Result<std::vector<std::string>>(const std::string& dir, const EvidenceFigureInput&)>
        renderFigures;
    // Renders report.md as report.pdf (GUI builds).
    std::function<Status(const std::string& markdownPath, const std::string& pdfPath)> renderPdf;
    // The suspect's history from the ledger (`evidence --ledger`): called once the suspect is known,
    // before anything is written, with its identity; returns case.json's `ledger_history`
    // (docs/formats.md), `{found: false, ...}` when the ledger holds nothing of it. An error refuses
    // the export. Unset (no ledger given): case.json has no `ledger_history`. The ledger sits above
    // this layer, so the caller (the CLI) queries it.
    std::function<Result<nlohmann::json>(const SuspectGpu& suspect)> deviceHistory;
    // A trial bundle (the GUI's preview) that leaves report.pdf out on purpose: without renderPdf
    // the report then says the PDF is drawn on export, not that the build lacks the GUI.
    bool trialWithoutPdf = false;
};

struct EvidenceResult {
    std::string dir, tar;
    nlohmann::json caseJson;
    std::vector<std::string> warnings;
    size_t files = 0;
    std::string keyId;
};

// Builds the bundle. Refuses (an error, nothing left behind) an existing DIR or DIR.tar, an
// unreadable or malformed input (named), a bad key file, a suspect without identity.
Result<EvidenceResult> buildEvidenceBundle(const EvidenceOptions& options);

}  // namespace faultline
