#include "DetectionFloorCommand.h"

#include <iostream>

#include "Cli.h"
#include "CliSupport.h"
#include "core/replay/DetectionFloor.h"

#ifdef FAULTLINE_HAVE_GUI
#include "views/plots/DetectionFloorPlot.h"
#endif

namespace faultline::cli {

int runDetectionFloorCommand(const DetectionFloorCliOptions& o)
{
    if (o.suspect.empty())
        return failWith(
            Error{"benchmark --trace: --suspect LABEL is required (see `inspect`)", ErrorCode::Usage});
    if (o.elements < 1 || o.elements > 1024)
        return failWith(
            Error{"--elements: " + std::to_string(o.elements) + " is not in [1, 1024]", ErrorCode::Usage});
    if (!o.out.empty())
        if (Status st = prepareOutputDirectory(o.out); !st) return failWith(st.error());
    OpenOptions open;
    open.allowExternal = o.allowExternal;
    auto trace = readTrace(o.trace, open);
    if (!trace) return failWith(trace.error());
    DetectionFloorOptions options;
    options.bisect.suspect = o.suspect;
    options.bisect.peer = o.peer;
    options.bisect.noPeer = o.noPeer;
    options.elementsPerBit = o.elements;
    options.seed = o.seed;
    const auto* cancel = installInterruptFlag();
    auto report = measureDetectionFloor(
        *trace, options,
        [&o](size_t done, size_t total, const std::string& what) {
            if (!o.quiet) printProgress(total ? double(done) / double(total) : 1.0, what);
        },
        cancel);
    endProgress();
    if (!report) return failWith(report.error());
    const nlohmann::json j = detectionFloorJson(*report);
    const std::string text = detectionFloorText(*report);
    ReportFigure figure;
#ifdef FAULTLINE_HAVE_GUI
    figure = views::renderDetectionFloorPlot;
#endif
    if (Status st = emitReport(o.out, "floor", j, text, o.json, figure); !st) return failWith(st.error());
    if (report->cancelled) {
        std::cerr << "benchmark --trace cancelled\n";
        return kExitError;
    }
    return report->falseAlarms.empty() ? kExitOk : kExitDiverged;
}

}  // namespace faultline::cli
