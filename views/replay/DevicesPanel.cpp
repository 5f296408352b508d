#include "views/replay/DevicesPanel.h"

#include <QFileInfo>
#include <QFont>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QScrollBar>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include "views/fleet/DeviceHistoryView.h"
#include "views/fleet/HealthPanel.h"
#include "views/plots/PlotStyle.h"
#include "views/replay/WorkerProgram.h"
#include "views/shell/ReadOnlyTable.h"

namespace faultline::views {
namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

// CUDA's version integers: 13000 -> "13.0".
QString cudaVersion(int v)
{
    return v > 0 ? QStringLiteral("%1.%2").arg(v / 1000).arg((v % 1000) / 10) : QStringLiteral("n/a");
}

template <class T>
QString count(const std::optional<T>& v)
{
    return v ? QString::number(*v) : QStringLiteral("n/a");
}

QString mhz(int khz)
{
    return khz > 0 ? QString::number(khz / 1000) : QStringLiteral("n/a");
}

}  // namespace

DevicesPanel::DevicesPanel(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("devicesPanel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* titleRow = new QHBoxLayout;
    titleRow->addWidget(new QLabel(tr("<b>This machine</b>")));
    titleRow->addStretch(1);
    m_refresh = new QPushButton(tr("Refresh"));
    m_refresh->setObjectName(QStringLiteral("devicesRefresh"));
    m_refresh->setToolTip(tr("Ask faultline-worker --devices-json again (CUDA runtime and NVML)"));
    titleRow->addWidget(m_refresh);
    layout->addLayout(titleRow);
    m_inventory = new QLabel(tr("Not queried yet."));
    m_inventory->setObjectName(QStringLiteral("devicesInventory"));
    m_inventory->setWordWrap(true);
    m_inventory->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_inventory);
    m_local =
        makeReadOnlyTable(QStringLiteral("localDevices"),
                          {tr("Device"), tr("Name"), tr("UUID"), tr("PCI bus id"), tr("Compute"), tr("SMs"),
                           tr("Memory"), tr("Clocks (MHz)"), tr("ECC"), tr("ECC errors"), tr("Remapped rows"),
                           tr("Temp."), tr("Power"), tr("Serial"), tr("Peers"), tr("Notes")});
    m_local->horizontalHeaderItem(GpuClocks)->setToolTip(tr("SM clock / memory clock"));
    m_local->horizontalHeaderItem(GpuEccErrors)
        ->setToolTip(
            tr("Corrected / uncorrected ECC errors: volatile (since the driver loaded) and aggregate "
               "(lifetime)"));
    m_local->horizontalHeaderItem(GpuRemapped)->setToolTip(tr("Remapped rows: correctable / uncorrectable"));
    m_local->horizontalHeaderItem(GpuPeers)->setToolTip(
        tr("The GPUs that must give this one's bits on production kernels (cuBLAS, cuBLASLt, NCCL): "
           "same model, SM count, compute capability, driver, CUDA runtime and library versions. A "
           "replay compares peers bit for bit."));
    m_local->hide();
    layout->addWidget(m_local);
    m_health = new HealthPanel;
    layout->addWidget(m_health, 1);

    m_traceTitle = new QLabel(tr("<b>Recorded in the trace</b>"));
    layout->addWidget(m_traceTitle);
    m_table = makeReadOnlyTable(QStringLiteral("traceDevices"),
                                {tr("Label"), tr("Name"), tr("UUID"), tr("Serial"), tr("PCI bus id"),
                                 tr("Driver"), tr("Role"), tr("Notes")});
    layout->addWidget(m_table, 1);
    const auto keyOfRow = [](QTableWidget* table, int serial, int uuid) {
        return [table, serial, uuid](const QModelIndex& index) {
            const auto text = [&](int c) {
                const QTableWidgetItem* item = index.isValid() ? table->item(index.row(), c) : nullptr;
                return item ? item->text() : QString();
            };
            return deviceHistoryKey(text(serial), text(uuid));
        };
    };
    m_localHistory = addDeviceHistoryAction(m_local, keyOfRow(m_local, GpuSerial, GpuUuid));
    m_traceHistory = addDeviceHistoryAction(m_table, keyOfRow(m_table, Serial, Uuid));

    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, [this] {
        if (m_process) m_process->kill();  // `finished` follows and reports the timeout
    });
    connect(m_refresh, &QPushButton::clicked, this, &DevicesPanel::refreshInventory);
    setIncident(nullptr);
}

DevicesPanel::~DevicesPanel()
{
    if (m_process) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(2000);
    }
}

void DevicesPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (!m_queried) refreshInventory();
}

void DevicesPanel::refreshInventory()
{
    if (m_process) return;
    m_queried = true;
    const quint64 query = ++m_query;
    const QString program = m_program.isEmpty() ? workerProgramPath() : m_program;
    m_process = new QProcess(this);
    m_process->setProgram(program);
    m_process->setArguments({QStringLiteral("--devices-json")});
    connect(m_process, &QProcess::finished, this, [this, query] { onProcessDoneOnUi(query); });
    connect(m_process, &QProcess::errorOccurred, this, [this, query](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) onProcessDoneOnUi(query);
    });
    m_refresh->setEnabled(false);
    m_inventory->setText(tr("Asking %1 for this machine's GPUs…").arg(QFileInfo(program).fileName()));
    m_timer->start(m_timeoutMs);
    m_process->start();
}

void DevicesPanel::onProcessDoneOnUi(quint64 query)
{
    if (query != m_query || !m_process) return;  // an older query's late signal
    QProcess* p = m_process;
    m_process = nullptr;
    p->deleteLater();
    const bool timedOut = !m_timer->isActive();
    m_timer->stop();
    m_refresh->setEnabled(true);
    const QString program = p->program();
    if (p->error() == QProcess::FailedToStart) {
        showInventoryError(tr("could not run %1: %2").arg(program, p->errorString()));
        return;
    }
    if (timedOut) {
        showInventoryError(tr("%1 did not answer within %2 s").arg(program).arg(m_timeoutMs / 1000.0));
        return;
    }
    const QString err = QString::fromLocal8Bit(p->readAllStandardError()).trimmed();
    if (p->exitStatus() != QProcess::NormalExit || p->exitCode() != 0) {
        QString message = p->exitStatus() == QProcess::NormalExit
                              ? tr("%1 exited with code %2").arg(program).arg(p->exitCode())
                              : tr("%1 crashed").arg(program);
        if (!err.isEmpty()) message += QStringLiteral(": ") + err;
        showInventoryError(message);
        return;
    }
    showInventoryJson(p->readAllStandardOutput().trimmed(), program);
}

void DevicesPanel::showInventoryJson(const QByteArray& json, const QString& source)
{
    auto report =
        parseDeviceReport(std::string_view(json.constData(), size_t(json.size())), source.toStdString());
    if (!report) {
        showInventoryError(qs(report.message()));
        return;
    }
    fillLocalTable(*report);
    m_health->setLiveSnapshots(healthSnapshotsFromDevices(*report));
    QStringList specs, labels, uuids;
    for (const LocalGpu& g : report->gpus) {
        specs << QStringLiteral("cuda:%1").arg(g.index);
        labels << tr("cuda:%1 — %2 (%3)").arg(g.index).arg(qs(g.name), qs(g.pciBusId));
        uuids << qs(g.uuid);
    }
    emit localGpusListed(specs, labels);
    emit localGpuUuidsListed(specs, uuids);
    QStringList lines;
    if (report->gpus.empty()) {
        lines << tr("<b>No CUDA devices:</b> %1").arg(qs(report->noDevicesReason()).toHtmlEscaped());
        lines << tr("Replays run on the cpu and sim:* targets.");
    } else {
        const qsizetype n = qsizetype(report->gpus.size());
        QString versions =
            (n == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(n)) +
            tr("; CUDA runtime %1, driver API %2")
                .arg(cudaVersion(report->cudaRuntimeVersion), cudaVersion(report->cudaDriverVersion));
        if (!report->driverVersion.empty())
            versions += tr(", driver %1").arg(qs(report->driverVersion).toHtmlEscaped());
        lines << versions;
        if (!report->nvmlAvailable)
            lines << tr("<i>No NVML health counters: %1</i>")
                         .arg(qs(report->nvmlError.empty() ? std::string("NVML did not load")
                                                           : report->nvmlError)
                                  .toHtmlEscaped());
    }
    m_inventory->setText(lines.join(QStringLiteral("<br>")));
    emit inventoryShown();
}

void DevicesPanel::showInventoryError(const QString& error)
{
    m_local->setRowCount(0);
    m_local->hide();
    emit localGpusListed({}, {});
    emit localGpuUuidsListed({}, {});
    m_inventory->setText(tr("<span style='color:%1'>No device inventory: %2</span>")
                             .arg(PlotStyle::warningColor().name(), error.toHtmlEscaped()));
    emit inventoryShown();
}

QString DevicesPanel::inventoryText() const
{
    return m_inventory->text();
}

void DevicesPanel::fillLocalTable(const DeviceReport& report)
{
    m_local->setRowCount(int(report.gpus.size()));
    m_local->setVisible(!report.gpus.empty());
    for (int row = 0; row < int(report.gpus.size()); ++row) {
        const LocalGpu& g = report.gpus[size_t(row)];
        QString cells[LocalColumnCount];
        QString tips[LocalColumnCount];
        cells[GpuIndex] = QStringLiteral("cuda:%1").arg(g.index);
        cells[GpuName] = qs(g.name);
        cells[GpuUuid] = qs(g.uuid);
        cells[GpuPciBusId] = qs(g.pciBusId);
        cells[GpuCompute] = qs(g.computeCapability);
        cells[GpuSms] = QString::number(g.smCount);
        cells[GpuMemory] = qs(formatGiB(g.memoryBytes));
        cells[GpuClocks] = QStringLiteral("%1 / %2").arg(mhz(g.clockKHz), mhz(g.memoryClockKHz));
        cells[GpuEcc] = g.eccEnabled ? tr("on") : tr("off");
        QStringList peers;
        for (const LocalGpu& other : report.gpus)
            if (other.index != g.index && !g.peerKey.empty() && other.peerKey == g.peerKey)
                peers << QStringLiteral("cuda:%1").arg(other.index);
        cells[GpuPeers] = g.peerKey.empty() ? tr("unknown")
                          : peers.isEmpty() ? tr("none")
                                            : peers.join(QStringLiteral(", "));
        tips[GpuPeers] = g.peerKey.empty() ? tr("This worker does not report peer keys") : qs(g.peerKey);
        const bool attention = g.health && g.health->needsAttention();
        if (!g.health) {
            for (int c : {GpuEccErrors, GpuRemapped, GpuTemperature, GpuPower, GpuSerial})
                cells[c] = tr("n/a");
            cells[GpuNotes] = report.nvmlAvailable ? tr("not found in NVML") : tr("no NVML");
        } else {
            const GpuHealth& h = *g.health;
            cells[GpuEccErrors] = tr("vol. %1 / %2, agg. %3 / %4")
                                      .arg(count(h.eccCorrectedVolatile), count(h.eccUncorrectedVolatile),
                                           count(h.eccCorrectedAggregate), count(h.eccUncorrectedAggregate));
            tips[GpuEccErrors] =
                tr("Volatile: %1 corrected, %2 uncorrected\nAggregate: %3 corrected, %4 uncorrected")
                    .arg(count(h.eccCorrectedVolatile), count(h.eccUncorrectedVolatile),
                         count(h.eccCorrectedAggregate), count(h.eccUncorrectedAggregate));
            cells[GpuRemapped] = QStringLiteral("%1 / %2").arg(count(h.remappedRowsCorrectable),
                                                               count(h.remappedRowsUncorrectable));
            if (h.remapPending.value_or(false)) cells[GpuRemapped] += tr(", pending");
            if (h.remapFailure.value_or(false)) cells[GpuRemapped] += tr(", FAILED");
            cells[GpuTemperature] = h.temperatureC ? tr("%1 °C").arg(*h.temperatureC) : tr("n/a");
            cells[GpuPower] = h.powerW ? tr("%1 W").arg(*h.powerW, 0, 'f', 1) : tr("n/a");
            cells[GpuSerial] = qs(h.serial);
            QStringList notes;
            if (!h.boardPartNumber.empty()) notes << tr("board %1").arg(qs(h.boardPartNumber));
            if (!h.vbiosVersion.empty()) notes << tr("VBIOS %1").arg(qs(h.vbiosVersion));
            for (const std::string& e : h.errors) notes << qs(e);
            cells[GpuNotes] = notes.join(QStringLiteral("; "));
        }
        for (int c = 0; c < LocalColumnCount; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setToolTip(tips[c].isEmpty() ? cells[c] : tips[c]);
            if (c == GpuSms || c == GpuMemory || c == GpuTemperature || c == GpuPower)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (attention && (c == GpuIndex || c == GpuEccErrors || c == GpuRemapped)) {
                item->setForeground(PlotStyle::divergentColor());
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            m_local->setItem(row, c, item);
        }
    }
    m_local->resizeColumnsToContents();
    // As tall as its rows (the trace's devices below get the rest of the dock).
    int height = m_local->horizontalHeader()->sizeHint().height() +
                 m_local->horizontalScrollBar()->sizeHint().height() + 2 * m_local->frameWidth();
    for (int row = 0; row < m_local->rowCount(); ++row) height += m_local->rowHeight(row);
    m_local->setMaximumHeight(height);
}

void DevicesPanel::setIncident(std::shared_ptr<const Incident> incident)
{
    m_table->setRowCount(0);
    if (!incident || !incident->trace) {
        m_traceTitle->setText(tr("<b>Recorded in the trace</b> — no trace open"));
        return;
    }
    m_traceTitle->setText(
        tr("<b>Recorded in %1</b>").arg(QFileInfo(incident->tracePath).fileName().toHtmlEscaped()));
    const auto& devices = incident->trace->devices;
    m_table->setRowCount(int(devices.size()));
    for (int row = 0; row < int(devices.size()); ++row) {
        const TraceDevice& d = devices[size_t(row)];
        QStringList notes;
        for (const auto& [k, v] : d.extra)
            notes << QStringLiteral("%1=%2").arg(QString::fromStdString(k), QString::fromStdString(v));
        const QString cells[ColumnCount] = {
            QString::fromStdString(d.label),    QString::fromStdString(d.name),
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
