// faultline demo [--headless] [--out DIR]: builds the embedded demo incident by real computation,
// then opens it in the GUI, or (with --headless, or without a display) prints the investigation:
// the first divergent op, its signature, the replay verdicts and what it did to the checkpoints.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/compare/CompareRun.h"
#include "core/demo/DemoIncident.h"
#include "core/replay/Bisect.h"
#include "core/replay/Campaign.h"

#ifdef FAULTLINE_HAVE_GUI
#include "GuiLauncher.h"
#endif

namespace faultline::cli {
namespace {

struct DemoCliOptions {
    std::string out = "faultline-demo";
    bool headless = false;
    uint32_t reps = 3;
};

void printLosses(const DemoIncident& d)
{
    std::printf("  training loss, healthy run : ");
    for (double l : d.healthyLoss) std::printf(" %.6f", l);
    std::printf("\n  training loss, incident run: ");
    for (double l : d.incidentLoss) std::printf(" %.6f", l);
    std::printf("   (the loss curve hides it)\n");
}

int investigate(const DemoIncident& d, const DemoCliOptions& o)
{
    std::printf("\n1. Bisect the captured step against the golden model (suspect %s)\n",
                d.suspectLabel.c_str());
    auto trace = readTrace(d.tracePath);
    if (!trace) {
        return failWith(trace.error());
    }
    auto bisect = bisectTrace(*trace, d.suspectLabel);
    if (!bisect) {
        return failWith(bisect.error());
    }
    size_t divergent = 0;
    std::string divergentOps;
    for (const BisectOp& b : bisect->ops)
        if (b.verdict == BisectVerdict::Divergent) {
            ++divergent;
            divergentOps += (divergentOps.empty() ? "" : ",") + std::to_string(b.index);
        }
    if (!bisect->firstDivergentOp) {
        std::printf("  no op left its error bound\n");
        return kExitOk;
    }
    for (const BisectOp& b : bisect->ops) {
        if (b.index != *bisect->firstDivergentOp || !b.divergence) continue;
        const Divergence& dv = *b.divergence;
        std::printf("  first divergent op: %zu %s (%s)\n", b.index, b.op.c_str(), b.name.c_str());
        std::printf("  %llu of %llu elements beyond the op's error bound, max %llu ulp\n",
                    static_cast<unsigned long long>(dv.beyondTolerance),
                    static_cast<unsigned long long>(dv.elements), static_cast<unsigned long long>(dv.maxUlp));
        std::printf("  signature: %s — %s\n", std::string(signatureKindName(dv.signature.kind)).c_str(),
                    dv.signature.detail.c_str());
        for (const SignatureFinding& f : dv.signature.secondary)
            std::printf("    also: %s — %s\n", std::string(signatureKindName(f.kind)).c_str(),
                        f.detail.c_str());
        if (dv.beyondRegion)
            std::printf("  region: rows [%llu, %llu) cols [%llu, %llu)\n",
                        static_cast<unsigned long long>(dv.beyondRegion->rowBegin),
                        static_cast<unsigned long long>(dv.beyondRegion->rowEnd),
                        static_cast<unsigned long long>(dv.beyondRegion->colBegin),
                        static_cast<unsigned long long>(dv.beyondRegion->colEnd));
    }
    std::printf("  %zu of %zu ops divergent: %s\n", divergent, bisect->ops.size(), divergentOps.c_str());

    std::printf(
        "\n2. Replay the divergent ops on the golden model and on the suspect device (%u reps each)\n",
        o.reps);
    CampaignOptions c;
    c.tracePath = d.tracePath;
    c.targets = {*parseTargetSpec("cpu"), *parseTargetSpec(d.suspectDefect)};
    c.ops = divergentOps;
    c.reps = o.reps;
    c.outPath = (std::filesystem::path(o.out) / "replay-results.h5").string();
    c.workerProgram = workerProgramPath();
    std::filesystem::remove(Campaign::journalPath(c.outPath));
    Campaign campaign(c);
    auto replay = campaign.run();
    if (!replay) {
        return failWith(replay.error());
    }
    for (const TargetSummary& t : replay->targets)
        std::printf("  %-48s %-16s %llu/%llu runs failed, rate %.0f%% [95%% CI %.0f%%, %.0f%%]\n",
                    t.target.c_str(), nameOf(t.verdict).c_str(), static_cast<unsigned long long>(t.failures),
                    static_cast<unsigned long long>(t.runs), 100 * t.rate.rate, 100 * t.rate.low,
                    100 * t.rate.high);

    std::printf("\n3. What it did to the weights: incident vs healthy checkpoints after the last step\n");
    const std::string& inc = d.incidentCheckpoints.back();
    const std::string& ref = d.healthyCheckpoints.back();
    auto a = openTensorFile(inc), b = openTensorFile(ref);
    if (!a || !b) {
        std::cerr << "error: " << (a ? b.message() : a.message()) << "\n";
        return kExitError;
    }
    CompareRunOptions co;
    co.compare.tolerance = Tolerance::exact();
    auto cmp = CompareRun(co).run(**a, **b);
    if (!cmp) {
        return failWith(cmp.error());
    }
    for (const Divergence& dv : cmp->tensors)
        std::printf("  %-40s %8llu of %8llu elements differ, max %llu ulp\n", dv.name.c_str(),
                    static_cast<unsigned long long>(dv.mismatches),
                    static_cast<unsigned long long>(dv.elements), static_cast<unsigned long long>(dv.maxUlp));

    std::string verdict = "unknown";
    for (const TargetSummary& t : replay->targets)
        if (t.target != "cpu") verdict = nameOf(t.verdict);
    std::printf(
        "\nVerdict: %s is %s — corruption enters at op %zu and reproduces on replay; the golden model "
        "is clean.\n",
        d.suspectLabel.c_str(), verdict.c_str(), *bisect->firstDivergentOp);
    std::printf("Next: faultline %s   (GUI)   or   faultline bisect %s --suspect %s --json\n",
                d.tracePath.c_str(), d.tracePath.c_str(), d.suspectLabel.c_str());
    return kExitOk;
}

int runDemo(const DemoCliOptions& o, int argc, char** argv)
{
    DemoOptions options;
    options.outDir = o.out;
    std::printf(
        "Faultline demo incident: a transformer block trained for %u steps on 2 data-parallel ranks;\n"
        "rank 1 runs on a GPU whose SM 7 silently corrupts the GEMM tiles it computes.\n",
        options.steps);
    std::fflush(stdout);
    auto incident = buildDemoIncident(options);
    if (!incident) {
        return failWith(incident.error());
    }
    std::printf("  wrote %s (%zu ops) and %zu checkpoints under %s/checkpoints\n",
                incident->tracePath.c_str(), incident->opsRecorded,
                incident->healthyCheckpoints.size() + incident->incidentCheckpoints.size(), o.out.c_str());
    printLosses(*incident);
#ifdef FAULTLINE_HAVE_GUI
    if (!o.headless && haveDisplay()) {
        std::fflush(stdout);
        return launchGui(
            argc, argv,
            {incident->tracePath, incident->incidentCheckpoints.back(), incident->healthyCheckpoints.back()});
    }
#else
    (void)argc;
    (void)argv;
#endif
    return investigate(*incident, o);
}

}  // namespace

CommandRunner addDemoCommand(CLI::App& app, int argc, char** argv)
{
    auto o = std::make_shared<DemoCliOptions>();
    CLI::App* cmd = app.add_subcommand("demo",
                                       "Build the embedded demo incident and investigate it (GUI, or "
                                       "headless without a display)");
    cmd->add_flag("--headless", o->headless, "print the investigation instead of opening the GUI");
    cmd->add_option("--out", o->out, "directory for the incident's files (default faultline-demo)");
    cmd->add_option("--reps", o->reps, "replay repetitions")->check(CLI::Range(1u, 1000u));
    return [o, argc, argv] { return runDemo(*o, argc, argv); };
}

}  // namespace faultline::cli
