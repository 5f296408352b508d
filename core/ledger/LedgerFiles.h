#pragma once
// `faultline ledger add FILE...`: which kind of file each is, read with the reader that owns that
// format, and added to the ledger. Kinds, told by content, not by name:
//   health     a `faultline health --json` document (format "faultline-health")
//   log        a kernel log: dmesg, journalctl -k (text or -o json), syslog, nvidia-bug-report
//              (.gz), read by core/health's parser as `faultline health --logs` reads it
//   nvidia-smi `nvidia-smi -q -x` output (health snapshots), read as `health --nvidia-smi` reads it
//   campaign   a campaign: `replay --out` results file (HDF5) or `replay --json` document
//   fleet      a merged fleet campaign: `merge --out` results file or `merge --json` document
//   bundle     an evidence bundle: its directory or .tar (verified; case.json and the manifest)
// Anything else is an error naming the file, and nothing of it is added.
#include <string>

#include "Ledger.h"

namespace faultline {

struct LedgerFileAdded {
    std::string file;
    std::string kind;  // "health", "log", "nvidia-smi", "campaign", "fleet", "bundle"
    LedgerAdded added;
};

// `host`: where health documents and logs were taken (they do not say).
Result<LedgerFileAdded> addLedgerFile(Ledger& ledger, const std::string& path, const std::string& host);

// A `faultline health` report as `health --json` writes it, with the reboots and GPU resets its
// logs show.
Result<LedgerAdded> addHealthReport(Ledger& ledger, const HealthReport& report, const LedgerSource& source);

// The GPU resets of `report` as event rows of kind "reset" seen on `host`, each GPU named by the
// report's identity of its bus id.
std::vector<LedgerEventRow> ledgerResetEvents(const HealthReport& report, const std::string& host);

}  // namespace faultline
