#include "LedgerRecording.h"

#include <iostream>

#include "Cli.h"
#include "core/Text.h"
#include "core/fleet/NodeIdentity.h"

namespace faultline::cli {

void addLedgerOption(CLI::App* cmd, LedgerRequest& request)
{
    request.option = cmd->add_option("--ledger", request.url,
                                     "Record what this produces in the ledger (docs/ledger.md): a path, "
                                     "sqlite:///abs/path or postgresql://...; alone, the default ledger")
                         ->expected(0, 1);
}

std::string ledgerHostName()
{
    const nlohmann::json node = nodeIdentity();
    auto it = node.find("host");
    return it != node.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int recordInLedger(const LedgerRequest& request, const std::function<Result<LedgerAdded>(Ledger&)>& add)
{
    if (!request.requested()) return kExitOk;
    auto ledger = Ledger::open(request.url);
    if (!ledger) return failWith(ledger.error());
    return recordInOpenLedger(*ledger, add);
}

int recordInOpenLedger(Ledger& ledger, const std::function<Result<LedgerAdded>(Ledger&)>& add)
{
    auto added = add(ledger);
    if (!added) return failWith(added.error());
    std::cerr << "ledger " << printableText(ledger.location()) << ": " << added->total() << " row(s) added, "
              << added->repeated << " already there\n";
    return kExitOk;
}

}  // namespace faultline::cli
