#pragma once
// Loads the element values of one entry off the GUI thread, a window of the 2-D view at a time,
// for any tensor size: tensors are read from both snapshots around the window asked for (whole
// rows when they are short, row segments otherwise); ops recompute the golden output once per
// entry and keep both outputs for the next windows. A newer request supersedes an older one:
// its answer is dropped.
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <mutex>

#include "core/Result.h"
#include "views/heatmap/ElementValues.h"
#include "views/incident/Incident.h"

namespace faultline::views {

class ElementValueLoader : public QObject {
    Q_OBJECT
public:
    // The most elements one window holds (per side): a viewport of single elements fits.
    static constexpr uint64_t kMaxWindowElements = uint64_t(1) << 22;

    explicit ElementValueLoader(QObject* parent = nullptr);
    ~ElementValueLoader() override;

    // Starts loading `window` of entry `entryId` (clipWindow'ed; nullopt: defaultWindow);
    // returns the job id.
    quint64 loadOnWorker(std::shared_ptr<const Incident> incident, int entryId,
                         std::optional<ElementWindow> window = std::nullopt);
    // Drops whatever is in flight.
    void reset();

    // `wanted` within a rows x cols view (at least one element) and within kMaxWindowElements
    // (around its centre when larger).
    static ElementWindow clipWindow(const ElementWindow& wanted, uint64_t rows, uint64_t cols);
    // The window to read for `wanted` in a rows x cols view: `wanted` grown by up to its own size
    // on every side, within kMaxWindowElements and the view (`wanted` itself clipped to the cap
    // around its centre when even it is larger).
    static ElementWindow windowAround(const ElementWindow& wanted, uint64_t rows, uint64_t cols);
    // The default window of an entry: the whole view when it fits, else around the worst anomaly
    // region.
    static ElementWindow defaultWindow(const IncidentEntry& entry, uint64_t rows, uint64_t cols);

    // Full outputs of an op, recomputed once per entry and kept for the next windows.
    struct OpOutputs;
    struct Cache {
        std::mutex mutex;
        const Incident* incident = nullptr;
        int entryId = -1;
        std::shared_ptr<const OpOutputs> outputs;
    };
    // The work itself, on the calling thread. `cache` may be null.
    static Result<ElementValues> load(const Incident& incident, int entryId, const std::atomic<bool>* cancel,
                                      std::optional<ElementWindow> window = std::nullopt,
                                      Cache* cache = nullptr);

signals:
    void loaded(quint64 job, std::shared_ptr<const faultline::views::ElementValues> values);
    void unavailable(quint64 job, const QString& reason);

private:
    quint64 m_currentJob = 0;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::shared_ptr<Cache> m_cache = std::make_shared<Cache>();
    std::weak_ptr<const Incident> m_cacheFor;  // the incident m_cache belongs to
};

}  // namespace faultline::views
