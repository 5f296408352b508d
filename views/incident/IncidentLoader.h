#pragma once
// Opens an incident off the GUI thread: decides what the files are (a trace, a suspect and a
// reference snapshot, both, or a lone file), bisects the trace for its suspect device and
// compares the pair (under a tolerance, exact unless asked otherwise), with progress and cancel.
// Each request gets a job id; a newer request cancels the older one and its answers are dropped.
#include <QObject>
#include <QStringList>
#include <atomic>
#include <memory>

#include "views/incident/Incident.h"

namespace faultline::views {

class IncidentLoader : public QObject {
    Q_OBJECT
public:
    explicit IncidentLoader(QObject* parent = nullptr);
    ~IncidentLoader() override;

    // Starts loading `paths` on a worker thread (cancelling a load in flight); returns the job id.
    // `tolerance` applies to the snapshot pair's comparison.
    quint64 loadOnWorker(const QStringList& paths, const Tolerance& tolerance = {});
    // Cancels the load in flight (it ends with `cancelled`).
    void cancel();
    bool isLoading() const { return m_loading; }
    quint64 currentJob() const { return m_currentJob; }

    // The work itself, on the calling thread (the worker's body; also usable headless).
    // progress(fraction 0..1, what); `cancel` is checked between ops and chunks.
    struct Outcome {
        std::shared_ptr<Incident> incident;
        QString error;
        bool cancelled = false;
    };
    static Outcome load(const QStringList& paths, const std::function<void(double, const QString&)>& progress,
                        const std::atomic<bool>* cancel, const Tolerance& tolerance = {});

signals:
    void progress(quint64 job, double fraction, const QString& what);
    void loaded(quint64 job, std::shared_ptr<const faultline::views::Incident> incident);
    void failed(quint64 job, const QString& message);
    void cancelled(quint64 job);

private:
    quint64 m_currentJob = 0;
    bool m_loading = false;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

}  // namespace faultline::views
