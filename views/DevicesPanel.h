#pragma once
// Devices: the local CUDA inventory (not in this build yet: a placeholder says so) and the
// devices the open trace recorded (label, name, uuid, serial, PCI bus id, driver, role).
#include <QWidget>
#include <memory>

#include "Incident.h"

class QLabel;
class QTableWidget;

namespace faultline::views {

class DevicesPanel : public QWidget {
    Q_OBJECT
public:
    enum Column { Label, Name, Uuid, Serial, PciBusId, Driver, Role, Notes, ColumnCount };

    explicit DevicesPanel(QWidget* parent = nullptr);

    void setIncident(std::shared_ptr<const Incident> incident);
    QTableWidget* traceDevices() const { return m_table; }

private:
    QLabel* m_inventory = nullptr;
    QLabel* m_traceTitle = nullptr;
    QTableWidget* m_table = nullptr;
};

}  // namespace faultline::views
