#pragma once
// Runs a replay campaign (core/replay/Campaign.h) on a worker thread; the campaign itself
// spawns one faultline-worker process per target. Every finished run is handed to the UI
// thread in order (polled from a queue, ~10 times a second), then the report. Cancel sets the
// campaign's flag: it stops after the runs in flight (a hang ends at its timeout). A newer job,
// or reset(), drops the older job's answers.
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <vector>

#include "core/replay/Campaign.h"

class QTimer;

namespace faultline::views {

class CampaignRunner : public QObject {
    Q_OBJECT
public:
    explicit CampaignRunner(QObject* parent = nullptr);
    ~CampaignRunner() override;

    // Starts the campaign; returns the job id. A resumed campaign (options.resume) first checks,
    // on the worker, that its journal holds only runs of these targets, `ops` and repetitions,
    // and fails without running anything when it does not.
    quint64 startOnWorker(CampaignOptions options, std::vector<size_t> ops = {});
    // Asks the running campaign to stop after the runs in flight.
    void cancel();
    // Cancels and forgets the running job: nothing more is emitted for it.
    void reset();
    bool isRunning() const { return m_running; }
    bool isCancelling() const;
    quint64 currentJob() const { return m_currentJob; }

    struct JobState;

signals:
    // One finished run: "TARGET op N rep R: OUTCOME" (Campaign's progress text), done of total.
    void runFinished(quint64 job, quint64 done, quint64 total, const QString& what);
    void finished(quint64 job, std::shared_ptr<const faultline::CampaignReport> report);
    void failed(quint64 job, const QString& message);

private:
    void drainOnUi();

    quint64 m_currentJob = 0;
    bool m_running = false;
    std::shared_ptr<JobState> m_state;
    QTimer* m_poll = nullptr;
};

}  // namespace faultline::views
