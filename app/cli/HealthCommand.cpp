// faultline health [--logs FILE...] [--nvidia-smi FILE.xml...] [--json]: Xid/SXid events from kernel
// logs (dmesg, journalctl -k text or JSON, nvidia-bug-report logs, gzip or not) and health snapshots
// from nvidia-smi -q -x, merged per GPU with flags, counters, the decoded Xid timeline and what to
// do (core/health/HealthReport.h). Exit 0 nothing found, 1 something found, 2 error.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "Cli.h"
#include "Commands.h"
#include "core/health/HealthReport.h"

namespace faultline::cli {
namespace {

struct HealthOptions {
    std::vector<std::string> logs, nvidiaSmi;
    bool json = false;
};

int runHealth(const HealthOptions& o)
{
    if (o.logs.empty() && o.nvidiaSmi.empty()) {
        std::cerr << "error: nothing to read: give --logs FILE... and/or --nvidia-smi FILE.xml...\n";
        return kExitError;
    }
    auto report = collectHealth(HealthInputs{o.logs, o.nvidiaSmi, {}});
    if (!report) {
        std::cerr << "error: " << report.message() << "\n";
        return kExitError;
    }
    if (o.json)
        std::cout << healthReportJson(*report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
    else
        std::cout << healthReportText(*report) << std::flush;
    return report->somethingFound() ? kExitDiverged : kExitOk;
}

}  // namespace

CommandRunner addHealthCommand(CLI::App& app)
{
    auto o = std::make_shared<HealthOptions>();
    CLI::App* cmd =
        app.add_subcommand("health",
                           "Per-GPU health from kernel logs and nvidia-smi XML: Xid timeline decoded, flags, "
                           "counters, and what to do "
                           "(reset, drain, RMA candidate). Exit 0 nothing found, 1 something found, 2 error");
    cmd->add_option("--logs", o->logs,
                    "Kernel logs: dmesg, journalctl -k (text or -o json), nvidia-bug-report.log[.gz], syslog")
        ->expected(1, -1);
    cmd->add_option("--nvidia-smi", o->nvidiaSmi, "nvidia-smi -q -x output (any driver)")->expected(1, -1);
    cmd->add_flag("--json", o->json, "One JSON document (docs/formats.md)");
    return [o] { return runHealth(*o); };
}

}  // namespace faultline::cli
