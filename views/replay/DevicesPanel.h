#pragma once
// Devices: this machine's GPUs as `faultline-worker --devices-json` reports them (the GUI never
// loads CUDA: the worker runs as a child process, off the GUI thread, with a timeout and a
// Refresh button; no device is said plainly, not raised as an error), and the devices the open
// trace recorded (label, name, uuid, serial, PCI bus id, driver, role). Between them, each GPU's
// health (HealthPanel): flags, recommendation and decoded Xid timeline from loaded kernel logs and
// nvidia-smi XML, merged with the inventory's NVML counters.
#include <QWidget>
#include <memory>

#include "core/devices/DeviceReport.h"
#include "views/incident/Incident.h"

class QAction;
class QLabel;
class QProcess;
class QPushButton;
class QTableWidget;
class QTimer;

namespace faultline::views {

class HealthPanel;

class DevicesPanel : public QWidget {
    Q_OBJECT
public:
    enum Column { Label, Name, Uuid, Serial, PciBusId, Driver, Role, Notes, ColumnCount };
    enum LocalColumn {
        GpuIndex,
        GpuName,
        GpuUuid,
        GpuPciBusId,
        GpuCompute,
        GpuSms,
        GpuMemory,
        GpuClocks,
        GpuEcc,
        GpuEccErrors,
        GpuRemapped,
        GpuTemperature,
        GpuPower,
        GpuSerial,
        GpuPeers,
        GpuNotes,
        LocalColumnCount
    };

    explicit DevicesPanel(QWidget* parent = nullptr);
    ~DevicesPanel() override;

    void setIncident(std::shared_ptr<const Incident> incident);
    QTableWidget* traceDevices() const { return m_table; }

    // Runs the worker for the inventory (asynchronously; a query in flight is left to finish).
    // The panel queries on its first show; Refresh queries again.
    void refreshInventory();
    bool isQuerying() const { return m_process != nullptr; }
    // The worker's document (or `error` when it could not be had) shown in the local table and
    // the summary line; the testable end of refreshInventory().
    void showInventoryJson(const QByteArray& json, const QString& source);
    void showInventoryError(const QString& error);
    // The executable to run ("" = workerProgramPath()) and how long it may take.
    void setWorkerProgram(const QString& program) { m_program = program; }
    void setTimeoutMs(int ms) { m_timeoutMs = ms; }

    QTableWidget* localDevices() const { return m_local; }
    // "Device history…" on the local and the trace's tables: the selected GPU's ledger history.
    QAction* localHistoryAction() const { return m_localHistory; }
    QAction* traceHistoryAction() const { return m_traceHistory; }
    HealthPanel* healthPanel() const { return m_health; }
    // The summary above the local table: versions, or why there are no devices, or the error.
    QString inventoryText() const;

signals:
    // The local inventory was shown (devices, the no-device reason, or an error).
    void inventoryShown();
    // This machine's GPUs as replay targets ("cuda:<index>") with a label each; empty when there
    // are none or the inventory failed.
    void localGpusListed(const QStringList& specs, const QStringList& labels);
    // The same GPUs' UUIDs ("cuda:N" specs and their UUIDs, in order): which physical GPU each
    // cuda:N target is.
    void localGpuUuidsListed(const QStringList& specs, const QStringList& uuids);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void onProcessDoneOnUi(quint64 query);
    void fillLocalTable(const DeviceReport& report);

    QLabel* m_inventory = nullptr;
    QPushButton* m_refresh = nullptr;
    QTableWidget* m_local = nullptr;
    HealthPanel* m_health = nullptr;
    QLabel* m_traceTitle = nullptr;
    QTableWidget* m_table = nullptr;
    QAction* m_localHistory = nullptr;
    QAction* m_traceHistory = nullptr;

    QString m_program;
    int m_timeoutMs = 10000;
    QProcess* m_process = nullptr;
    QTimer* m_timer = nullptr;
    quint64 m_query = 0;
    bool m_queried = false;
};

}  // namespace faultline::views
