#pragma once
// Runs a function on Qt's thread pool and hands its progress and result back on the UI thread.
// The work gets a QPromise<T> to report progress (setProgressRange / setProgressValueAndText;
// Qt throttles the signals) and must add exactly one result. It must capture only values: it
// may outlive `owner`, whose destruction silently drops the answers. Job ids and stale-result
// dropping are the caller's (see IncidentLoader, CampaignRunner).
#include <QFutureWatcher>
#include <QObject>
#include <QPromise>
#include <QtConcurrent>
#include <utility>

namespace faultline::views {

template <class T, class Work, class ProgressOnUi, class DoneOnUi>
void startWorkerJob(QObject* owner, Work&& work, ProgressOnUi onProgressOnUi, DoneOnUi onDoneOnUi)
{
    auto* watcher = new QFutureWatcher<T>(owner);
    QObject::connect(watcher, &QFutureWatcherBase::progressValueChanged, owner,
                     [watcher, onProgressOnUi](int value) {
                         onProgressOnUi(value, watcher->progressMinimum(), watcher->progressMaximum(),
                                        watcher->progressText());
                     });
    QObject::connect(watcher, &QFutureWatcherBase::finished, owner, [watcher, onDoneOnUi] {
        T result = watcher->future().resultCount() > 0 ? watcher->result() : T{};
        watcher->deleteLater();
        onDoneOnUi(std::move(result));
    });
    watcher->setFuture(QtConcurrent::run(std::forward<Work>(work)));
}

}  // namespace faultline::views
