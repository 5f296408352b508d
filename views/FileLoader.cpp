#include "FileLoader.h"

#include <QFutureWatcher>
#include <QPointer>
#include <QtConcurrent>

namespace faultline::views {
namespace {
struct OpenOutcome {
    std::shared_ptr<const TensorFile> file;
    QString error;
};
}  // namespace

FileLoader::FileLoader(QObject* parent) : QObject(parent) {}

quint64 FileLoader::openOnWorker(const QString& path)
{
    const quint64 job = ++m_currentJob;
    auto* watcher = new QFutureWatcher<OpenOutcome>(this);
    QPointer<FileLoader> self(this);
    connect(watcher, &QFutureWatcher<OpenOutcome>::finished, this, [self, watcher, job] {
        const OpenOutcome outcome = watcher->result();
        watcher->deleteLater();
        if (!self || job != self->m_currentJob) return;  // stale: a newer open superseded it
        if (outcome.file)
            emit self->opened(job, outcome.file);
        else
            emit self->failed(job, outcome.error);
    });
    const std::string p = path.toStdString();
    watcher->setFuture(QtConcurrent::run([p]() -> OpenOutcome {
        auto r = openTensorFile(p);
        if (!r) return {nullptr, QString::fromStdString(r.message())};
        return {std::shared_ptr<const TensorFile>(std::move(r).value()), {}};
    }));
    return job;
}

}  // namespace faultline::views
