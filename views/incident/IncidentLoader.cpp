#include "views/incident/IncidentLoader.h"

#include "core/incident/OpenIncident.h"
#include "views/replay/WorkerJob.h"
#include "views/shell/ViewText.h"

namespace faultline::views {
namespace {

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
            if (job == m_currentJob && m_loading)
                emit progress(job, maximum > 0 ? double(value) / maximum : 0.0, what);
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
    std::vector<std::string> files;
    for (const QString& p : paths) files.push_back(p.toStdString());
    auto opened = openIncident(
        files,
        [&](double f, const std::string& what) {
            if (progress) progress(f, qs(what));
        },
        cancel, tolerance);
    if (!opened) {
        if (opened.code() == ErrorCode::Cancelled) return {nullptr, {}, true};
        return {nullptr, qs(opened.message())};
    }
    auto incident = std::make_shared<Incident>();
    incident->paths = paths;
    incident->trace = std::move(opened->trace);
    incident->tracePath = qs(opened->tracePath);
    incident->suspectLabel = qs(opened->suspectLabel);
    incident->simulatedDefect = qs(opened->simulatedDefect);
    incident->bisect = std::move(opened->bisect);
    incident->suspectFile = std::move(opened->suspectFile);
    incident->referenceFile = std::move(opened->referenceFile);
    incident->compare = std::move(opened->compare);
    incident->singleFile = std::move(opened->singleFile);
    for (const std::string& w : opened->warnings) incident->warnings << qs(w);
    incident->buildEntries();
    return {incident, {}};
}

}  // namespace faultline::views
