#pragma once
// Opening an incident: deciding what the files are (one trace, a suspect and a reference
// snapshot, both, or a lone file), bisecting the trace for its suspect device and comparing the
// pair. The GUI's loader runs this on a worker thread; the CLI can run it as it is. No Qt.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../Result.h"
#include "../TensorFile.h"
#include "../compare/CompareRun.h"
#include "../compare/Tolerance.h"
#include "../replay/Bisect.h"
#include "../trace/Trace.h"

namespace faultline {

struct OpenedIncident {
    std::vector<std::string> paths;  // as given

    // Trace part: the trace, its suspect device and the bisect report.
    std::shared_ptr<const Trace> trace;
    std::string tracePath;
    std::string suspectLabel;
    std::string simulatedDefect;  // the suspect device's simulated_defect attribute ("" when none)
    std::optional<BisectReport> bisect;

    // Pair part: suspect (the first snapshot) and reference (the second) and their comparison.
    std::shared_ptr<const TensorFile> suspectFile, referenceFile;
    std::optional<CompareReport> compare;

    // A lone snapshot: listed, not compared.
    std::shared_ptr<const TensorFile> singleFile;

    // File warnings ("PATH: problem") and what was ignored.
    std::vector<std::string> warnings;
};

// progress(fraction 0..1, what): "Opening FILE", "Bisecting: op …", "Comparing: …".
using IncidentProgress = std::function<void(double fraction, const std::string& what)>;

// The trace's suspect device: role "suspect", else the last device, else "".
std::string suspectDeviceLabel(const Trace& trace);

// Opens `paths`. More than two snapshots: the first two are compared and the rest ignored with a
// warning. Errors: a file that cannot be read (naming it), a second trace, a trace with no
// device, nothing to open; `cancel` set between ops or chunks: an Error with code Cancelled.
Result<OpenedIncident> openIncident(const std::vector<std::string>& paths, const IncidentProgress& progress,
                                    const std::atomic<bool>* cancel, const Tolerance& tolerance = {});

}  // namespace faultline
