#include "OpenIncident.h"

#include <filesystem>

namespace faultline {

std::string suspectDeviceLabel(const Trace& trace)
{
    for (const TraceDevice& d : trace.devices)
        if (d.role == "suspect") return d.label;
    return trace.devices.empty() ? std::string() : trace.devices.back().label;
}

Result<OpenedIncident> openIncident(const std::vector<std::string>& paths, const IncidentProgress& progress,
                                    const std::atomic<bool>* cancel, const Tolerance& tolerance)
{
    auto report = [&](double f, const std::string& what) {
        if (progress) progress(f, what);
    };
    auto cancelled = [&] { return cancel && cancel->load(); };
    OpenedIncident incident;
    incident.paths = paths;
    std::vector<std::shared_ptr<const TensorFile>> snapshots;
    for (const std::string& p : paths) {
        report(0.0, "Opening " + std::filesystem::path(p).filename().string());
        auto file = openTensorFile(p);
        if (!file) return file.error();
        if ((*file)->format() != FileFormat::Trace) {
            for (const std::string& w : (*file)->warnings()) incident.warnings.push_back(p + ": " + w);
            snapshots.push_back(std::shared_ptr<const TensorFile>(std::move(file).value()));
            continue;
        }
        if (incident.trace)
            return fileError(
                p,
                "a second trace; open one trace (with at most a suspect and a reference snapshot) "
                "at a time",
                ErrorCode::Usage);
        auto trace = readTrace(p);
        if (!trace) return trace.error();
        incident.trace = std::make_shared<const Trace>(std::move(trace).value());
        incident.tracePath = p;
    }
    if (snapshots.size() > 2) {
        std::string ignored;
        for (size_t i = 2; i < snapshots.size(); ++i) ignored += (i > 2 ? ", " : "") + snapshots[i]->path();
        incident.warnings.push_back("compared the first two snapshots (suspect, reference); ignored " +
                                    ignored);
        snapshots.resize(2);
    }
    if (!incident.trace && snapshots.empty()) return Error{"nothing to open", ErrorCode::Usage};

    const bool both = incident.trace && snapshots.size() == 2;
    const double traceShare = both ? 0.5 : 1.0;
    if (incident.trace) {
        const Trace& trace = *incident.trace;
        const std::string suspect = suspectDeviceLabel(trace);
        if (suspect.empty()) return fileError(trace.file->path(), "the trace records no device");
        incident.suspectLabel = suspect;
        for (const TraceDevice& d : trace.devices)
            if (d.label == suspect)
                if (auto it = d.extra.find("simulated_defect"); it != d.extra.end())
                    incident.simulatedDefect = it->second;
        auto bisect = bisectTrace(
            trace, suspect,
            [&](size_t done, size_t total, const std::string& what) {
                report(traceShare * (total ? double(done) / double(total) : 1.0), "Bisecting: " + what);
            },
            cancel);
        if (!bisect) return bisect.error();
        if (bisect->cancelled) return cancelledError("opening the incident cancelled");
        const std::string prefix = trace.file->path() + ": ";
        for (const std::string& w : bisect->warnings)
            incident.warnings.push_back(w.rfind(prefix, 0) == 0 ? w : prefix + w);
        incident.bisect = std::move(bisect).value();
    }
    if (snapshots.size() == 2) {
        incident.suspectFile = snapshots[0];
        incident.referenceFile = snapshots[1];
        CompareRunOptions options;
        options.compare.tolerance = tolerance;
        CompareRun run(options);
        run.setCancelFlag(cancel);
        const double base = both ? 0.5 : 0.0;
        const double share = both ? 0.5 : 1.0;
        run.setProgress([&](double f, const std::string& what) {
            report(base + share * f, "Comparing: " + what);
            return !cancelled();
        });
        auto compared = run.run(*snapshots[0], *snapshots[1]);
        if (!compared) return compared.error();
        incident.compare = std::move(compared).value();
    } else if (snapshots.size() == 1) {
        incident.singleFile = snapshots[0];
    }
    if (cancelled()) return cancelledError("opening the incident cancelled");
    report(1.0, "Loaded");
    return incident;
}

}  // namespace faultline
