#include "views/replay/CampaignRunner.h"

#include <QTimer>
#include <mutex>
#include <vector>

#include "views/replay/WorkerJob.h"

namespace faultline::views {

struct CampaignRunner::JobState {
    std::atomic<bool> cancel{false};
    std::mutex mutex;
    struct Event {
        quint64 done, total;
        std::string what;
    };
    std::vector<Event> events;  // guarded by mutex
};

namespace {
struct CampaignOutcome {
    std::shared_ptr<const CampaignReport> report;
    QString error;
};
}  // namespace

CampaignRunner::CampaignRunner(QObject* parent) : QObject(parent)
{
    m_poll = new QTimer(this);
    m_poll->setInterval(100);
    connect(m_poll, &QTimer::timeout, this, &CampaignRunner::drainOnUi);
}

CampaignRunner::~CampaignRunner()
{
    if (m_state) m_state->cancel.store(true);
}

bool CampaignRunner::isCancelling() const
{
    return m_running && m_state && m_state->cancel.load();
}

quint64 CampaignRunner::startOnWorker(CampaignOptions options, std::vector<size_t> ops)
{
    reset();
    const quint64 job = ++m_currentJob;
    m_state = std::make_shared<JobState>();
    m_running = true;
    auto state = m_state;
    auto work = [options = std::move(options), ops = std::move(ops),
                 state](QPromise<CampaignOutcome>& promise) {
        // Resuming: Campaign::run checks that the journal belongs to this trace, targets, ops,
        // repetitions and seed, and refuses otherwise.
        Campaign campaign(options);
        campaign.setCancelFlag(&state->cancel);
        campaign.setProgress([state](uint64_t done, uint64_t total, const std::string& what) {
            std::lock_guard lock(state->mutex);
            state->events.push_back({done, total, what});
        });
        auto report = campaign.run();
        if (report)
            promise.addResult(
                CampaignOutcome{std::make_shared<const CampaignReport>(std::move(report).value()), {}});
        else
            promise.addResult(CampaignOutcome{nullptr, QString::fromStdString(report.message())});
    };
    startWorkerJob<CampaignOutcome>(
        this, std::move(work), [](int, int, int, const QString&) {},
        [this, job](CampaignOutcome outcome) {
            if (job != m_currentJob) return;  // stale
            drainOnUi();
            m_running = false;
            m_poll->stop();
            if (outcome.report)
                emit finished(job, outcome.report);
            else
                emit failed(job, outcome.error.isEmpty() ? tr("the campaign failed") : outcome.error);
        });
    m_poll->start();
    return job;
}

void CampaignRunner::cancel()
{
    if (m_state && m_running) m_state->cancel.store(true);
}

void CampaignRunner::reset()
{
    if (m_state) m_state->cancel.store(true);
    m_state.reset();
    m_running = false;
    m_poll->stop();
    ++m_currentJob;
}

void CampaignRunner::drainOnUi()
{
    if (!m_state) return;
    std::vector<JobState::Event> events;
    {
        std::lock_guard lock(m_state->mutex);
        events.swap(m_state->events);
    }
    const quint64 job = m_currentJob;
    for (const JobState::Event& e : events) {
        emit runFinished(job, e.done, e.total, QString::fromStdString(e.what));
        if (job != m_currentJob) return;  // a receiver started another job
    }
}

}  // namespace faultline::views
