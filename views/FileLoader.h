#pragma once
// Opens tensor files off the GUI thread. Each request gets a job id; a newer request makes the
// answers of older ones stale, and stale answers are dropped.
#include <QObject>
#include <QString>
#include <memory>

#include "core/TensorFile.h"

namespace faultline::views {

class FileLoader : public QObject {
    Q_OBJECT
public:
    explicit FileLoader(QObject* parent = nullptr);

    // Starts opening `path` on a worker thread; returns the job id.
    quint64 openOnWorker(const QString& path);
    quint64 currentJob() const { return m_currentJob; }

signals:
    void opened(quint64 job, std::shared_ptr<const faultline::TensorFile> file);
    void failed(quint64 job, const QString& message);

private:
    quint64 m_currentJob = 0;
};

}  // namespace faultline::views
