#pragma once
// `--ledger [URL]` on the commands that produce what the ledger keeps (health, replay, merge,
// evidence): opt-in; without it nothing is written. The URL is optional: `--ledger` alone is the
// default ledger in the user's data directory.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "core/ledger/Ledger.h"

namespace faultline::cli {

struct LedgerRequest {
    CLI::Option* option = nullptr;
    std::string url;
    bool requested() const { return option && option->count() > 0; }
};

// Adds `--ledger [URL]` to `cmd`.
void addLedgerOption(CLI::App* cmd, LedgerRequest& request);

// This machine's name as replay records it (FAULTLINE_HOST, SLURMD_NODENAME, the host name).
std::string ledgerHostName();

// When requested: opens the ledger, calls `add` with it and prints one line on stderr saying what
// was recorded. An error is printed and returns its exit code (2); 0 when all went well or
// nothing was requested.
int recordInLedger(const LedgerRequest& request, const std::function<Result<LedgerAdded>(Ledger&)>& add);
// The same into a ledger already open (a command that also reads it, as evidence does).
int recordInOpenLedger(Ledger& ledger, const std::function<Result<LedgerAdded>(Ledger&)>& add);

}  // namespace faultline::cli
