// faultline health [--logs FILE...] [--nvidia-smi FILE.xml...] [--devices] [--json] [--ledger [URL]]:
// Xid/SXid events from kernel logs (dmesg, journalctl -k text or JSON, nvidia-bug-report logs, gzip or not)
// and health snapshots from nvidia-smi -q -x and, with --devices, this machine's NVML counters (through
// faultline-worker --devices-json, as `faultline devices`), merged per GPU with flags, counters, the
// decoded Xid timeline and what to do (core/health/HealthReport.h). Exit 0 nothing found, 1
// something found, 2 error.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "LedgerRecording.h"
#include "core/Text.h"
#include "core/devices/DeviceReport.h"
#include "core/health/BootId.h"
#include "core/health/HealthReport.h"
#include "core/ledger/LedgerFiles.h"
#include "core/replay/WorkerProcess.h"

namespace faultline::cli {
namespace {

struct HealthOptions {
    std::vector<std::string> logs, nvidiaSmi;
    bool json = false, devices = false;
    LedgerRequest ledger;
};

// This machine's GPUs as faultline-worker --devices-json reports them, as health snapshots.
Result<std::vector<GpuHealthSnapshot>> liveSnapshots()
{
    const std::string worker = workerProgramPath();
    WorkerProcess proc;
    if (Status s = proc.start(worker, {"--devices-json"}); !s) return s.error();
    std::string line;
    const auto outcome = proc.readLine(line, std::chrono::seconds(60));
    proc.finish(std::chrono::seconds(5));
    if (outcome != WorkerProcess::ReadOutcome::Line)
        return Error{
            worker + ": no device report (" +
                (outcome == WorkerProcess::ReadOutcome::Timeout ? "timed out" : proc.describeExit()) + ")",
            ErrorCode::Device};
    auto report = parseDeviceReport(line, worker);
    if (!report) return report.error();
    return healthSnapshotsFromDevices(*report);
}

int runHealth(const HealthOptions& o)
{
    if (o.logs.empty() && o.nvidiaSmi.empty() && !o.devices) {
        std::cerr
            << "error: nothing to read: give --logs FILE..., --nvidia-smi FILE.xml... and/or --devices\n";
        return kExitError;
    }
    HealthInputs inputs{o.logs, o.nvidiaSmi, {}};
    // The report is taken here, in this boot; so are the live snapshots.
    const std::string bootId = readBootId();
    if (o.devices) {
        auto live = liveSnapshots();
        if (!live) {
            std::cerr << "error: " << printableText(live.message()) << "\n";
            return kExitError;
        }
        inputs.liveSnapshots = std::move(*live);
        for (GpuHealthSnapshot& s : inputs.liveSnapshots) s.bootId = bootId;
    }
    // Inputs are checked to be regular files (a FIFO would block) where they are opened.
    auto report = collectHealth(inputs);
    if (!report) {
        std::cerr << "error: " << printableText(report.message()) << "\n";
        return kExitError;
    }
    report->bootId = bootId;
    // Written as they are built: a report of many events is never held twice.
    if (o.json)
        writeHealthReportJson(std::cout, *report);
    else
        writeHealthReportText(std::cout, *report);
    std::cout << std::flush;
    if (int rc = recordInLedger(
            o.ledger,
            [&](Ledger& ledger) {
                return addHealthReport(ledger, *report, {ledgerHostName(), "faultline health"});
            });
        rc != kExitOk)
        return rc;
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
    cmd->add_flag("--devices", o->devices,
                  "Add this machine's GPUs and their NVML counters (faultline devices)");
    cmd->add_flag("--json", o->json, "One JSON document (docs/formats.md)");
    addLedgerOption(cmd, o->ledger);
    return [o] { return runHealth(*o); };
}

}  // namespace faultline::cli
