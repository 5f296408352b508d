#include "IncidentLoader.h"

#include <QFileInfo>

#include "WorkerJob.h"

namespace faultline::views {
namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

constexpr int kProgressSteps = 1000;

}  // namespace

IncidentLoader::IncidentLoader(QObject* parent) : QObject(parent) {}

IncidentLoader::~IncidentLoader()
{
    // The worker may still run: let it stop early; its answer goes nowhere.
    if (m_cancel) m_cancel->store(true);
}

quint64 IncidentLoader::loadOnWorker(const QStringList& paths, const Tolerance& tolerance)
{
    if (m_cancel) m_cancel->store(true);  // the older job is stale now
    const quint64 job = ++m_currentJob;
    m_loading = true;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    auto cancelFlag = m_cancel;
    auto work = [paths, cancelFlag, tolerance](QPromise<Outcome>& promise) {
        promise.setProgressRange(0, kProgressSteps);
        promise.addResult(load(
            paths,
            [&promise](double fraction, const QString& what) {
                promise.setProgressValueAndText(int(fraction * (kProgressSteps - 1)), what);
            },
            cancelFlag.get(), tolerance));
    };
    startWorkerJob<Outcome>(
        this, std::move(work),
        [this, job](int value, int, int maximum, const QString& what) {
            if (job == m_currentJob && m_loading) emit progress(job, maximum > 0 ? double(value) / maximum : 0.0, what);
        },
        [this, job, cancelFlag](Outcome outcome) {
            if (job != m_currentJob) return;  // stale: a newer load superseded it
            m_loading = false;
            if (outcome.cancelled || cancelFlag->load())  // cancelled, even if it finished meanwhile
                emit cancelled(job);
            else if (!outcome.incident)
                emit failed(job, outcome.error.isEmpty() ? tr("loading failed") : outcome.error);
            else
                emit loaded(job, std::shared_ptr<const Incident>(std::move(outcome.incident)));
        });
    return job;
}

void IncidentLoader::cancel()
{
    if (m_cancel && m_loading) m_cancel->store(true);
}

IncidentLoader::Outcome IncidentLoader::load(const QStringList& paths,
                                             const std::function<void(double, const QString&)>& progress,
                                             const std::atomic<bool>* cancel, const Tolerance& tolerance)
{
    auto report = [&](double f, const QString& what) {
        if (progress) progress(f, what);
    };
    auto incident = std::make_shared<Incident>();
    incident->paths = paths;
    std::vector<std::shared_ptr<const TensorFile>> snapshots;
    for (const QString& path : paths) {
        report(0.0, tr("Opening %1").arg(QFileInfo(path).fileName()));
        const std::string p = path.toStdString();
        auto file = openTensorFile(p);
        if (!file) return {nullptr, qs(file.message())};
        if ((*file)->format() != FileFormat::Trace) {
            for (const std::string& w : (*file)->warnings()) incident->warnings << qs(p + ": " + w);
            snapshots.push_back(std::shared_ptr<const TensorFile>(std::move(file).value()));
            continue;
        }
        if (incident->trace)
            return {nullptr, qs(fileError(p, "a second trace; open one trace (with at most a suspect and a "
                                              "reference snapshot) at a time")
                                    .message)};
        auto trace = readTrace(p);
        if (!trace) return {nullptr, qs(trace.message())};
        incident->trace = std::make_shared<const Trace>(std::move(trace).value());
        incident->tracePath = path;
    }
    if (snapshots.size() > 2) {
        QStringList ignored;
        for (size_t i = 2; i < snapshots.size(); ++i) ignored << qs(snapshots[i]->path());
        incident->warnings << tr("compared the first two snapshots (suspect, reference); ignored %1")
                                  .arg(ignored.join(QStringLiteral(", ")));
        snapshots.resize(2);
    }
    if (!incident->trace && snapshots.empty()) return {nullptr, tr("nothing to open")};

    const bool both = incident->trace && snapshots.size() == 2;
    const double traceShare = both ? 0.5 : 1.0;
    if (incident->trace) {
        const Trace& trace = *incident->trace;
        const std::string suspect = suspectDeviceLabel(trace);
        if (suspect.empty()) return {nullptr, qs(fileError(trace.file->path(), "the trace records no device").message)};
        incident->suspectLabel = qs(suspect);
        for (const TraceDevice& d : trace.devices)
            if (d.label == suspect)
                if (auto it = d.extra.find("simulated_defect"); it != d.extra.end())
                    incident->simulatedDefect = qs(it->second);
        auto bisect = bisectTrace(
            trace, suspect,
            [&](size_t done, size_t total, const std::string& what) {
                report(traceShare * (total ? double(done) / double(total) : 1.0),
                       tr("Bisecting: %1").arg(qs(what)));
            },
            cancel);
        if (!bisect) return {nullptr, qs(bisect.message())};
        if (bisect->cancelled) return {nullptr, {}, true};
        for (const std::string& w : bisect->warnings) incident->warnings << qs(trace.file->path() + ": " + w);
        incident->bisect = std::move(bisect).value();
    }
    if (snapshots.size() == 2) {
        incident->suspectFile = snapshots[0];
        incident->referenceFile = snapshots[1];
        CompareRunOptions options;
        options.compare.tolerance = tolerance;
        CompareRun run(options);
        run.setCancelFlag(cancel);
        const double base = both ? 0.5 : 0.0;
        const double share = both ? 0.5 : 1.0;
        run.setProgress([&](double f, const std::string& what) {
            report(base + share * f, tr("Comparing: %1").arg(qs(what)));
            return !(cancel && cancel->load());
        });
        auto compared = run.run(*snapshots[0], *snapshots[1]);
        if (!compared) {
            if (compared.message() == kCompareCancelled) return {nullptr, {}, true};
            return {nullptr, qs(compared.message())};
        }
        incident->compare = std::move(compared).value();
    } else if (snapshots.size() == 1) {
        incident->singleFile = snapshots[0];
    }
    if (cancel && cancel->load()) return {nullptr, {}, true};
    incident->buildEntries();
    report(1.0, tr("Loaded"));
    return {incident, {}};
}

}  // namespace faultline::views
