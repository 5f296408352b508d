#pragma once
// One GPU's history from the ledger as an evidence bundle carries it (case.json `ledger_history`,
// docs/formats.md): its serial and UUID, first and last seen, the hosts and slots it was seen in,
// its Xid/SXid counts, GPU resets and the reboots of its hosts, its health snapshots' count, its
// campaigns with per-op rates and intervals, earlier evidence bundles, the rules that fired with
// their reasons, and its trends. A summary of its timeline (LedgerTimeline.h): only rows of this
// GPU, never another board's.
#include <nlohmann/json.hpp>
#include <string>

#include "LedgerEngine.h"

namespace faultline {

inline constexpr int kLedgerHistoryVersion = 1;

// The history of the GPU with board serial `serial` and UUID `uuid` (either may be ""): looked up
// by its serial, else by its UUID. `{found: false, ...}` when the ledger holds nothing of it, or
// when neither is known (a bus id alone could name another board that sat in that slot).
Result<nlohmann::json> ledgerDeviceHistory(LedgerEngine& engine, const std::string& serial,
                                           const std::string& uuid);

}  // namespace faultline
