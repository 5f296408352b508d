#pragma once
// Health: each GPU's flags, recommendation and decoded Xid timeline (core/health/HealthReport.h),
// from kernel logs and nvidia-smi XML the user loads and from the live inventory's NVML counters.
// Files are read on a worker thread; a result for a superseded load is dropped.
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

#include "core/health/HealthReport.h"

class QLabel;
class QPushButton;
class QTableWidget;

namespace faultline::views {

class HealthPanel : public QWidget {
    Q_OBJECT
public:
    enum GpuColumn { GpuBusId, GpuProduct, GpuSerial, GpuRecommendation, GpuFlags, GpuXids, GpuColumnCount };
    enum EventColumn {
        EventTime,
        EventBoot,
        EventXid,
        EventName,
        EventAction,
        EventProcess,
        EventMessage,
        EventDecoded,
        EventColumnCount
    };

    explicit HealthPanel(QWidget* parent = nullptr);
    ~HealthPanel() override;

    // NVML snapshots of this machine's GPUs (DevicesPanel passes them); merged with the loaded files.
    void setLiveSnapshots(std::vector<GpuHealthSnapshot> snapshots);
    // Reads logs (dmesg, journalctl, bug reports) and nvidia-smi XML files on a worker thread.
    void loadFilesOnWorker(const QStringList& logs, const QStringList& nvidiaSmi);
    // The testable end of a load: the report shown in the tables, or the error in the summary.
    void showReport(const HealthReport& report);
    void showError(const QString& error);

    // The files of the last load (File > Export Evidence… carries them over).
    const QStringList& loadedLogs() const { return m_logs; }
    const QStringList& loadedNvidiaSmi() const { return m_nvidiaSmi; }

    QTableWidget* gpuTable() const { return m_gpus; }
    QTableWidget* eventTable() const { return m_events; }
    QString summaryText() const;
    // Shows the timeline of the GPU in `row` of the GPU table.
    void selectGpu(int row);

signals:
    void reportShown();

private:
    void chooseFilesOnUi();
    void fillEventsOnUi(int row);

    QLabel* m_summary = nullptr;
    QPushButton* m_load = nullptr;
    QTableWidget* m_gpus = nullptr;
    QTableWidget* m_events = nullptr;
    std::vector<GpuHealthSnapshot> m_live;
    QStringList m_logs, m_nvidiaSmi;
    std::shared_ptr<const HealthReport> m_report;
    quint64 m_job = 0;
};

}  // namespace faultline::views
