// faultline benchmark [--seed N] [--sizes RxC,...] [--dtypes T,...] [--tolerance T] [--json] [--out DIR]
//   Plants corruption of every pattern in the library, names it with Faultline's signature and
//   scores the other detectors on the same data (core/benchmark/Scorecard.h).
//   exit 0: single-pattern signature accuracy meets the target; 1: it does not; 2: error.
// faultline benchmark --trace TRACE --suspect LABEL [--peer LABEL | --no-peer] [--elements N] ...
//   The detection floor of a captured trace instead (DetectionFloorCommand.h).
#include <iostream>
#include <memory>

#include "Cli.h"
#include "CliSupport.h"
#include "Commands.h"
#include "DetectionFloorCommand.h"
#include "core/benchmark/Scorecard.h"

#ifdef FAULTLINE_HAVE_GUI
#include "views/plots/BenchmarkPlot.h"
#endif

namespace faultline::cli {
namespace {

struct BenchmarkCliOptions {
    uint64_t seed = 1;
    std::string sizes = "256x512,512x1024", dtypes = "float32,bfloat16,float16", tolerance = "ulp:2", out;
    unsigned threads = 0;
    bool json = false, quiet = false;
};

std::vector<std::string> splitList(const std::string& s)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t comma = s.find(',', start);
        const std::string piece =
            s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!piece.empty()) out.push_back(piece);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> parseSizes(const std::string& text)
{
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const std::string& piece : splitList(text)) {
        const size_t x = piece.find('x');
        try {
            if (x == std::string::npos) throw std::invalid_argument(piece);
            size_t usedR = 0, usedC = 0;
            const std::string r = piece.substr(0, x), c = piece.substr(x + 1);
            const unsigned long long rows = std::stoull(r, &usedR), cols = std::stoull(c, &usedC);
            if (usedR != r.size() || usedC != c.size() || rows > 8192 || cols > 8192)
                throw std::invalid_argument(piece);
            out.emplace_back(rows, cols);
        } catch (...) {
            return Error{"--sizes: '" + piece + "' is not ROWSxCOLS (each at most 8192), e.g. 256x512",
                         ErrorCode::Usage};
        }
    }
    if (out.empty()) return Error{"--sizes: no size given (e.g. 256x512,512x1024)", ErrorCode::Usage};
    return out;
}

Result<std::vector<DType>> parseDtypes(const std::string& text)
{
    std::vector<DType> out;
    for (const std::string& piece : splitList(text)) {
        auto t = parseDTypeName(piece);
        if (!t)
            return Error{"--dtypes: unknown dtype '" + piece + "' (float32, bfloat16, float16)",
                         ErrorCode::Usage};
        out.push_back(*t);
    }
    if (out.empty()) return Error{"--dtypes: no dtype given", ErrorCode::Usage};
    return out;
}

int runBenchmarkCommand(const BenchmarkCliOptions& o)
{
    BenchmarkOptions options;
    options.patterns.seed = o.seed;
    auto sizes = parseSizes(o.sizes);
    if (!sizes) return failWith(sizes.error());
    options.patterns.sizes = *sizes;
    auto dtypes = parseDtypes(o.dtypes);
    if (!dtypes) return failWith(dtypes.error());
    options.patterns.dtypes = *dtypes;
    options.tolerance = o.tolerance;
    options.threads = o.threads;
    if (!o.out.empty())
        if (Status st = prepareOutputDirectory(o.out); !st) return failWith(st.error());
    const std::atomic<bool>* interrupted = installInterruptFlag();
    auto card = runBenchmark(options, [&](size_t done, size_t total) {
        if (!o.quiet) printProgress(total ? double(done) / double(total) : 1.0, "benchmark cases");
        return !(interrupted && interrupted->load());
    });
    endProgress();
    if (!card) return failWith(card.error());
    const nlohmann::json j = scorecardToJson(*card);
    const std::string text = scorecardText(*card);
    ReportFigure figure;
#ifdef FAULTLINE_HAVE_GUI
    figure = views::renderBenchmarkPlot;
#endif
    if (Status st = emitReport(o.out, "scorecard", j, text, o.json, figure); !st) return failWith(st.error());
    return j["target_met"].get<bool>() ? kExitOk : kExitDiverged;
}

}  // namespace

CommandRunner addBenchmarkCommand(CLI::App& app)
{
    auto o = std::make_shared<BenchmarkCliOptions>();
    auto floor = std::make_shared<DetectionFloorCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "benchmark",
        "Plant corruption of every known pattern, name it, and score Faultline and other detectors");
    cmd->add_option("--seed", o->seed, "seed of the planted cases (default 1); same seed, same scorecard");
    cmd->add_option("--sizes", o->sizes, "tensor sizes ROWSxCOLS,... (default 256x512,512x1024)");
    cmd->add_option("--dtypes", o->dtypes, "dtypes (default float32,bfloat16,float16)");
    cmd->add_option("--tolerance", o->tolerance,
                    "compare tolerance: exact | ulp:N | abs:X | rel:X (default ulp:2)");
    cmd->add_option("--threads", o->threads,
                    "comparison threads (default: all cores; results do not change)");
    cmd->add_flag("--json", o->json, "one JSON document (the scorecard)");
    cmd->add_option(
        "--out", o->out,
        "also write scorecard.json, scorecard.txt and (GUI builds) scorecard.png into this directory");
    cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
    // The detection floor of a captured trace (--trace): flipped bits judged as bisect judges.
    auto* trace = cmd->add_option("--trace", floor->trace,
                                  "measure the detection floor of this captured trace instead: single "
                                  "flipped bits at every bit position of every judged op's output");
    cmd->add_option("--suspect", floor->suspect,
                    "with --trace: the device whose recorded outputs are flipped")
        ->needs(trace);
    auto* peer =
        cmd->add_option("--peer", floor->peer, "with --trace: the rerun peer that judges bit for bit")
            ->needs(trace);
    cmd->add_flag("--no-peer", floor->noPeer, "with --trace: the golden model judges alone")
        ->needs(trace)
        ->excludes(peer);
    cmd->add_option(
           "--elements", floor->elements,
           "with --trace: flips per bit position and direction in each output (default 8, at most 1024)")
        ->needs(trace);
    cmd->add_flag("--allow-external", floor->allowExternal,
                  "with --trace: follow external links of the trace")
        ->needs(trace);
    for (const char* name : {"--sizes", "--dtypes", "--tolerance", "--threads"})
        cmd->get_option(name)->excludes(trace);
    return [o, floor] {
        if (floor->trace.empty()) return runBenchmarkCommand(*o);
        floor->seed = o->seed;
        floor->json = o->json;
        floor->quiet = o->quiet;
        floor->out = o->out;
        return runDetectionFloorCommand(*floor);
    };
}

}  // namespace faultline::cli
