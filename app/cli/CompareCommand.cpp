// faultline compare SUSPECT REFERENCE [--tolerance T] [--json] [--out RESULT.h5]
//   exit 0: the files agree; 1: they differ (a tensor beyond tolerance, another dataset with a
//   differing value, a pair that is not comparable); 2: error (a pair that could not be read,
//   nothing paired, a file that cannot be opened).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "core/compare/CompareJson.h"
#include "core/compare/CompareResultsFile.h"
#include "core/compare/CompareRun.h"
#include "core/report/CompareText.h"

namespace faultline::cli {
namespace {

struct CompareCliOptions {
    std::string suspect, reference, tolerance = "exact", out;
    std::string strip, suspectStrip, referenceStrip, suspectGroup, referenceGroup, suspectAdd, referenceAdd;
    unsigned threads = 0;
    size_t topK = 16;
    bool json = false, allowExternal = false, quiet = false;
};

int runCompare(const CompareCliOptions& o)
{
    auto tolerance = parseTolerance(o.tolerance);
    if (!tolerance) {
        return failWith(tolerance.error());
    }
    if (tolerance->kind == ToleranceKind::Bound) {
        std::cerr
            << "error: --tolerance bound needs per-element bounds from the op that produced the tensor; "
               "it is used by replay and bisect, not by compare\n";
        return kExitError;
    }
    if (!o.out.empty()) {
        // Evidence is never overwritten by the command that reads it.
        std::error_code ec;
        for (const std::string& input : {o.suspect, o.reference})
            if (std::filesystem::equivalent(o.out, input, ec))
                return failWith(fileError(
                    o.out, "is an input of this comparison; write the results elsewhere", ErrorCode::Usage));
    }
    OpenOptions open;
    open.allowExternal = o.allowExternal;
    auto suspect = openTensorFile(o.suspect, open);
    if (!suspect) {
        return failWith(suspect.error());
    }
    auto reference = openTensorFile(o.reference, open);
    if (!reference) {
        return failWith(reference.error());
    }
    CompareRunOptions options;
    options.compare.tolerance = *tolerance;
    options.compare.threads = o.threads;
    options.compare.topK = o.topK;
    options.pairing.suspect = {o.suspectGroup, o.suspectStrip.empty() ? o.strip : o.suspectStrip,
                               o.suspectAdd};
    options.pairing.reference = {o.referenceGroup, o.referenceStrip.empty() ? o.strip : o.referenceStrip,
                                 o.referenceAdd};
    CompareRun run(options);
    run.setCancelFlag(installInterruptFlag());
    // Each tensor's tile pyramid goes to --out as soon as it is done, then is freed: memory stays
    // bounded however many tensors the pair holds.
    std::optional<CompareResultsWriter> results;
    if (!o.out.empty()) {
        auto w = CompareResultsWriter::create(o.out);
        if (!w) {
            return failWith(w.error());
        }
        results.emplace(std::move(*w));
    }
    run.setTensorSink([&results](size_t index, Divergence& d) {
        Status st = results ? results->addPair(index, d) : Status{};
        d.tiles.releaseCounts();
        return st;
    });
    if (!o.quiet)
        run.setProgress([](double f, const std::string& what) {
            printProgress(f, what);
            return true;
        });
    auto report = run.run(**suspect, **reference);
    endProgress();
    if (!report) {
        return failWith(report.error());
    }
    if (results) {
        Status st = results->finish(*report);
        if (!st) {
            return failWith(st.error());
        }
    }
    if (o.json)  // names and strings from the files may be any bytes: never throw on them
        std::cout << compareReportToJson(*report).dump(2, ' ', false,
                                                       nlohmann::json::error_handler_t::replace)
                  << "\n";
    else
        std::cout << compareText(*report);
    // Exit rule (docs/formats.md, "compare"): 2 when a pair could not be read or nothing paired
    // at all; else 1 when the files differ (beyond tolerance, a differing value, a pair that is
    // not comparable); else 0. Everything is reported either way.
    for (const PairError& e : report->notComparable)
        std::cerr << "not comparable: " << o.suspect << " vs " << o.reference << ": " << e.name << ": "
                  << e.message << "\n";
    for (const NotCompared& n : report->notCompared)
        std::cerr << "not compared: " << o.suspect << " vs " << o.reference << ": " << n.name << ": "
                  << n.reason << "\n";
    if (!report->errors.empty()) {
        for (const PairError& e : report->errors)
            std::cerr << "error: " << o.suspect << " vs " << o.reference << ": " << e.name << ": "
                      << e.message << "\n";
        return kExitError;
    }
    if (!reportPairedAnything(*report)) {
        std::cerr << "error: " << o.suspect << " and " << o.reference
                  << ": no dataset of one pairs with a dataset of the other: nothing was compared\n";
        return kExitError;
    }
    return reportDiffers(*report) ? kExitDiverged : kExitOk;
}

}  // namespace

CommandRunner addCompareCommand(CLI::App& app)
{
    auto o = std::make_shared<CompareCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "compare",
        "Compare a suspect and a reference snapshot element by element: which bits, where, what pattern");
    cmd->add_option("SUSPECT", o->suspect, "suspect snapshot (HDF5 or safetensors)")->required();
    cmd->add_option("REFERENCE", o->reference, "reference snapshot (HDF5 or safetensors)")->required();
    cmd->add_option("--tolerance", o->tolerance, "exact | ulp:N | abs:X | rel:X (default exact)");
    cmd->add_flag("--json", o->json, "one JSON document");
    cmd->add_option("--out", o->out,
                    "write everything the GUI draws (tile pyramids, histograms) to an HDF5 file");
    cmd->add_option("--strip-prefix", o->strip, "remove this name prefix on both sides (e.g. module.)");
    cmd->add_option("--suspect-strip", o->suspectStrip, "remove this prefix from suspect names");
    cmd->add_option("--reference-strip", o->referenceStrip, "remove this prefix from reference names");
    cmd->add_option("--suspect-add", o->suspectAdd, "put this prefix before suspect names");
    cmd->add_option("--reference-add", o->referenceAdd, "put this prefix before reference names");
    cmd->add_option("--suspect-group", o->suspectGroup,
                    "compare only this group of the suspect (e.g. rank0/)");
    cmd->add_option("--reference-group", o->referenceGroup, "… against this group of the reference");
    cmd->add_option("--threads", o->threads, "worker threads (default: all cores)");
    cmd->add_option("--top", o->topK, "worst elements to list per tensor");
    cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
    cmd->add_flag("--allow-external", o->allowExternal, "follow external links/storage");
    return [o] { return runCompare(*o); };
}

}  // namespace faultline::cli
