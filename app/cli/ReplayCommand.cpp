// faultline replay TRACE --targets cpu,sim:stuck-bit,... [--ops SEL] [--reps N | --until-rate RATE
//                  [--confidence C] [--budget DURATION]] [--out RESULTS.h5]
//                  [--json] [--resume] [--timeout SECONDS] [--seed N] [--reference TARGET] [--copy-all]
//                  [--inventory DEVICES.json] [--ledger [URL]]
#include <cmath>
#include <iostream>
#include <memory>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "LedgerRecording.h"
#include "core/devices/DeviceReport.h"
#include "core/fleet/NodeIdentity.h"
#include "core/ledger/LedgerTime.h"
#include "core/replay/Campaign.h"

namespace faultline::cli {
namespace {

struct ReplayOptions {
    std::string trace, targets, ops, out, reference, inventory, untilRate, budget;
    uint32_t reps = 3;
    double confidence = 0.95;
    uint64_t seed = 1;
    double timeoutSeconds = 60;
    bool adaptive = false;  // --until-rate given
    bool json = false, resume = false, allowExternal = false, quiet = false, copyAll = false;
    LedgerRequest ledger;
};

int runReplay(const ReplayOptions& o)
{
    // A run longer than this is a hang; NaN, infinities and absurd values would make every run one.
    constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600.0;
    if (!std::isfinite(o.timeoutSeconds) || o.timeoutSeconds < 0.001 || o.timeoutSeconds > kMaxTimeoutSeconds)
        return failWith(Error{"--timeout " + std::to_string(o.timeoutSeconds) +
                                  ": must be a number of seconds between 0.001 and 604800",
                              ErrorCode::Usage});
    auto targets = parseTargetList(o.targets);
    if (!targets) {
        return failWith(targets.error());
    }
    for (const TargetSpec& t : *targets)
        if (t.kind == "cuda" && !t.params.empty())
            return failWith(Error{"--targets: target '" + t.text + "': " + t.params.begin()->first +
                                      " is a setting of NCCL ranks in `faultline collective`; replay "
                                      "takes plain cuda:N",
                                  ErrorCode::Usage});
    CampaignOptions c;
    if (o.adaptive) {
        auto rate = parseRate(o.untilRate);
        if (!rate) return failWith(rate.error());
        c.stopping.untilRate = *rate;
        c.stopping.confidence = o.confidence;
        if (!o.budget.empty()) {
            auto budget = parseDuration(o.budget);
            if (!budget) return failWith(budget.error());
            c.stopping.budget = *budget;
        }
        if (Status st = checkStoppingRule(c.stopping); !st) return failWith(st.error());
    }
    c.tracePath = o.trace;
    c.targets = *targets;
    c.ops = o.ops;
    c.reps = o.reps;
    c.seed = o.seed;
    c.outPath = o.out;
    c.resume = o.resume;
    c.timeout = std::chrono::milliseconds(int64_t(o.timeoutSeconds * 1000));
    c.workerProgram = workerProgramPath();
    c.allowExternal = o.allowExternal;
    c.copyAll = o.copyAll;
    // Who ran it (host, scheduler task) and, from --inventory, the node's GPUs: a fleet merge
    // names GPUs by these.
    c.node = nodeIdentity();
    if (!o.inventory.empty()) {
        auto inventory = readInventoryJson(o.inventory);
        if (!inventory) return failWith(inventory.error());
        c.node["inventory"] = *inventory;
    }
    if (!o.reference.empty()) {
        auto reference = parseTargetSpec(o.reference);
        if (!reference) {
            std::cerr << "error: --reference: " << reference.message() << "\n";
            return kExitError;
        }
        c.reference = reference->text;
    }
    Campaign campaign(c);
    campaign.setCancelFlag(installInterruptFlag());
    if (!o.quiet)
        campaign.setProgress([](uint64_t done, uint64_t total, const std::string& what) {
            printProgress(total ? double(done) / double(total) : 1.0, what);
        });
    auto report = campaign.run();
    endProgress();
    if (!report) {
        return failWith(report.error());
    }
    if (o.json)
        std::cout << campaignJson(*report).dump(2) << "\n";
    else
        std::cout << campaignText(*report);
    if (report->cancelled) {
        std::cerr << "replay cancelled; finished runs are kept" << (o.out.empty() ? "" : " (use --resume)")
                  << "\n";
        return kExitError;
    }
    // The campaign as its report (the results file holds the same document), ended now.
    if (int rc = recordInLedger(o.ledger,
                                [&](Ledger& ledger) {
                                    const std::string file = o.out.empty() ? o.trace : o.out;
                                    return ledger.addCampaign({campaignJson(*report), file, isoUtcNow()},
                                                              {ledgerHostName(), file});
                                });
        rc != kExitOk)
        return rc;
    for (const TargetSummary& t : report->targets)
        if (t.verdict != Verdict::Healthy && t.verdict != Verdict::NoVerdict) return kExitDiverged;
    return kExitOk;
}

}  // namespace

CommandRunner addReplayCommand(CLI::App& app)
{
    auto o = std::make_shared<ReplayOptions>();
    CLI::App* cmd = app.add_subcommand("replay",
                                       "Replay trace ops on targets (cpu, sim:<fault>, cuda:N), many times, "
                                       "and judge every output");
    cmd->add_option("TRACE", o->trace, "trace v1 file")->required();
    cmd->add_option("--targets", o->targets, "comma-separated: cpu, sim:<model>[:k=v,...], cuda:<index>")
        ->required();
    cmd->add_option("--ops", o->ops,
                    "op selection: indices, ranges, op kinds (e.g. 0,3-5,gemm); default all");
    CLI::Option* reps =
        cmd->add_option("--reps", o->reps, "repetitions per op and target")->check(CLI::Range(1u, 1000000u));
    CLI::Option* untilRate =
        cmd->add_option(
               "--until-rate", o->untilRate,
               "repeat each op on each target until a failure, or until no failure rules out "
               "this rate (upper confidence bound below it), or until --budget is spent; RATE as 1e-3, "
               "0.001 or 0.1%")
            ->excludes(reps);
    cmd->add_option("--confidence", o->confidence, "confidence of --until-rate's bound (default 0.95)")
        ->needs(untilRate);
    cmd->add_option("--budget", o->budget, "wall-clock budget of an --until-rate campaign: 90s, 10m, 2h")
        ->needs(untilRate);
    cmd->add_option("--out", o->out, "results file (HDF5); runs are journaled beside it as they finish");
    cmd->add_flag("--resume", o->resume, "continue the campaign journaled beside --out");
    cmd->add_option("--timeout", o->timeoutSeconds, "seconds before a run counts as a hang")
        ->check(secondsInRange(0.001, 86400.0));
    cmd->add_option("--seed", o->seed, "seed for simulated faults");
    cmd->add_option("--reference", o->reference,
                    "a target known healthy: peers of it (same GPU model, SM count and libraries) must "
                    "reproduce its bits; default: the peers' majority");
    cmd->add_flag(
        "--copy-all", o->copyAll,
        "copy every repetition's outputs to the host, also those the target found bitwise identical "
        "to a judged one (catches bits changed on the way to the host)");
    cmd->add_option("--inventory", o->inventory,
                    "the node's GPUs as `faultline devices --json` printed them: UUIDs and serials go "
                    "into the results (fleet jobs pass it)");
    cmd->add_flag("--json", o->json, "one JSON document");
    cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
    addLedgerOption(cmd, o->ledger);
    cmd->add_flag("--allow-external", o->allowExternal, "follow external links/storage in the trace");
    return [o, untilRate] {
        o->adaptive = untilRate->count() > 0;
        if (o->resume && o->out.empty()) {
            std::cerr << "error: --resume needs --out\n";
            return kExitError;
        }
        return runReplay(*o);
    };
}

}  // namespace faultline::cli
