#pragma once
// Loads the element values of one entry off the GUI thread (ops: the recorded output and the
// golden model's, recomputed; tensors: both snapshots read through TensorFile::read). Only small
// tensors (kMaxElements); larger ones answer `unavailable` with the reason. A newer request
// supersedes an older one (tag = the view): its answer is dropped.
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>

#include "ElementValues.h"
#include "Incident.h"
#include "core/Result.h"

namespace faultline::views {

class ElementValueLoader : public QObject {
    Q_OBJECT
public:
    static constexpr uint64_t kMaxElements = uint64_t(1) << 21;

    explicit ElementValueLoader(QObject* parent = nullptr);
    ~ElementValueLoader() override;

    // Starts loading entry `entryId` of `incident`; returns the job id. Small tensors only.
    quint64 loadOnWorker(std::shared_ptr<const Incident> incident, int entryId);
    // Drops whatever is in flight.
    void reset();

    // The work itself, on the calling thread.
    static Result<ElementValues> load(const Incident& incident, int entryId, const std::atomic<bool>* cancel);

signals:
    void loaded(quint64 job, std::shared_ptr<const faultline::views::ElementValues> values);
    void unavailable(quint64 job, const QString& reason);

private:
    quint64 m_currentJob = 0;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

}  // namespace faultline::views
