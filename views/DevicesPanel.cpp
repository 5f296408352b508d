#include "DevicesPanel.h"

#include <QFileInfo>
#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "PlotStyle.h"

namespace faultline::views {

DevicesPanel::DevicesPanel(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("devicesPanel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* localTitle = new QLabel(tr("<b>This machine</b>"));
    layout->addWidget(localTitle);
    m_inventory = new QLabel(tr("No CUDA device inventory in this build yet: local GPUs (NVML identity, health "
                                "counters, Xid history) will be listed here. Replays run on the cpu and sim:* "
                                "targets meanwhile."));
    m_inventory->setObjectName(QStringLiteral("devicesInventory"));
    m_inventory->setWordWrap(true);
    QFont italic = m_inventory->font();
    italic.setItalic(true);
    m_inventory->setFont(italic);
    layout->addWidget(m_inventory);
    m_traceTitle = new QLabel(tr("<b>Recorded in the trace</b>"));
    layout->addWidget(m_traceTitle);
    m_table = new QTableWidget(0, ColumnCount);
    m_table->setObjectName(QStringLiteral("traceDevices"));
    m_table->setHorizontalHeaderLabels(
        {tr("Label"), tr("Name"), tr("UUID"), tr("Serial"), tr("PCI bus id"), tr("Driver"), tr("Role"), tr("Notes")});
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    layout->addWidget(m_table, 1);
    setIncident(nullptr);
}

void DevicesPanel::setIncident(std::shared_ptr<const Incident> incident)
{
    m_table->setRowCount(0);
    if (!incident || !incident->trace) {
        m_traceTitle->setText(tr("<b>Recorded in the trace</b> — no trace open"));
        return;
    }
    m_traceTitle->setText(tr("<b>Recorded in %1</b>").arg(QFileInfo(incident->tracePath).fileName().toHtmlEscaped()));
    const auto& devices = incident->trace->devices;
    m_table->setRowCount(int(devices.size()));
    for (int row = 0; row < int(devices.size()); ++row) {
        const TraceDevice& d = devices[size_t(row)];
        QStringList notes;
        for (const auto& [k, v] : d.extra) notes << QStringLiteral("%1=%2").arg(QString::fromStdString(k), QString::fromStdString(v));
        const QString cells[ColumnCount] = {QString::fromStdString(d.label),    QString::fromStdString(d.name),
                                            QString::fromStdString(d.uuid),     QString::fromStdString(d.serial),
                                            QString::fromStdString(d.pciBusId), QString::fromStdString(d.driverVersion),
                                            QString::fromStdString(d.role),     notes.join(QStringLiteral("; "))};
        const bool suspect = QString::fromStdString(d.label) == incident->suspectLabel;
        for (int c = 0; c < ColumnCount; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setToolTip(cells[c]);
            if (suspect) {
                item->setForeground(PlotStyle::divergentColor());
                QFont f = item->font();
                f.setBold(c == Label);
                item->setFont(f);
            }
            m_table->setItem(row, c, item);
        }
    }
    m_table->resizeColumnsToContents();
}

}  // namespace faultline::views
