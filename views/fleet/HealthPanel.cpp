#include "views/fleet/HealthPanel.h"

#include <QFileDialog>
#include <QFont>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <map>

#include "views/plots/PlotStyle.h"
#include "views/shell/ReadOnlyTable.h"
#include "views/shell/ViewText.h"

namespace faultline::views {
namespace {

QTableWidget* makeTable(const QString& name, const QStringList& headers)
{
    QTableWidget* table = makeReadOnlyTable(name, headers);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    return table;
}

QString flagsText(const GpuHealthRecord& g)
{
    QStringList f;
    if (g.flags.rowRemapFailure) f << QObject::tr("row remap failure");
    if (g.flags.sramThresholdExceeded) f << QObject::tr("SRAM threshold exceeded");
    if (g.flags.rowRemapPending) f << QObject::tr("row remap pending");
    if (g.flags.retiredPagesPending) f << QObject::tr("page retirement pending");
    if (g.snapshots.empty()) return QObject::tr("n/a (no snapshot)");
    return f.isEmpty() ? QObject::tr("none") : f.join(QStringLiteral(", "));
}

QString xidSummary(const GpuHealthRecord& g)
{
    std::map<int, int> counts;
    for (const XidEvent& e : g.events) ++counts[e.code];
    QStringList parts;
    for (const auto& [code, n] : counts)
        parts << (n > 1 ? QStringLiteral("%1 ×%2").arg(code).arg(n) : QString::number(code));
    return parts.isEmpty() ? QObject::tr("none") : parts.join(QStringLiteral(", "));
}

QString recommendationText(HealthAction a)
{
    switch (a) {
        case HealthAction::None:
            return QObject::tr("none");
        case HealthAction::Monitor:
            return QObject::tr("monitor");
        case HealthAction::Reset:
            return QObject::tr("reset");
        case HealthAction::Drain:
            return QObject::tr("drain");
        case HealthAction::RmaCandidate:
            return QObject::tr("RMA candidate");
    }
    return {};
}

QTableWidgetItem* item(const QString& text, const QString& tip = {})
{
    auto* i = new QTableWidgetItem(text);
    if (!tip.isEmpty()) i->setToolTip(tip);
    return i;
}

}  // namespace

HealthPanel::HealthPanel(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("healthPanel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* titleRow = new QHBoxLayout;
    titleRow->addWidget(new QLabel(tr("<b>Health and Xid timeline</b>")));
    titleRow->addStretch(1);
    m_load = new QPushButton(tr("Load Logs / nvidia-smi XML…"));
    m_load->setObjectName(QStringLiteral("healthLoad"));
    m_load->setToolTip(
        tr("dmesg, journalctl -k (text or -o json), nvidia-bug-report.log[.gz]; nvidia-smi -q -x "
           "output (.xml)"));
    titleRow->addWidget(m_load);
    layout->addLayout(titleRow);
    m_summary = new QLabel(tr("No health data yet: load kernel logs or nvidia-smi -q -x output."));
    m_summary->setObjectName(QStringLiteral("healthSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    m_gpus = makeTable(QStringLiteral("healthGpus"), {tr("PCI bus id"), tr("Product"), tr("Serial"),
                                                      tr("Recommendation"), tr("Flags"), tr("Xids")});
    m_gpus->horizontalHeaderItem(GpuRecommendation)
        ->setToolTip(
            tr("What NVIDIA's published actions ask for: reset, drain, RMA candidate (hover a row for why)"));
    layout->addWidget(m_gpus);
    m_events = makeTable(QStringLiteral("healthEvents"),
                         {tr("Time"), tr("Boot"), tr("Xid"), tr("Name"), tr("Action"), tr("Process"),
                          tr("Message"), tr("Decoded")});
    layout->addWidget(m_events, 1);
    connect(m_load, &QPushButton::clicked, this, &HealthPanel::chooseFilesOnUi);
    connect(m_gpus, &QTableWidget::currentCellChanged, this, [this](int row) { fillEventsOnUi(row); });
}

HealthPanel::~HealthPanel() = default;

void HealthPanel::setLiveSnapshots(std::vector<GpuHealthSnapshot> snapshots)
{
    m_live = std::move(snapshots);
    if (m_live.empty() && m_logs.isEmpty() && m_nvidiaSmi.isEmpty()) return;
    loadFilesOnWorker(m_logs, m_nvidiaSmi);
}

void HealthPanel::chooseFilesOnUi()
{
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Load kernel logs and nvidia-smi XML"), QString(),
        tr("Logs and nvidia-smi XML (*.log *.gz *.txt *.json *.xml *);;All files (*)"));
    if (files.isEmpty()) return;
    QStringList logs, xml;
    for (const QString& f : files)
        (f.endsWith(QStringLiteral(".xml"), Qt::CaseInsensitive) ? xml : logs) << f;
    loadFilesOnWorker(logs, xml);
}

void HealthPanel::loadFilesOnWorker(const QStringList& logs, const QStringList& nvidiaSmi)
{
    m_logs = logs;
    m_nvidiaSmi = nvidiaSmi;
    HealthInputs inputs;
    for (const QString& f : logs) inputs.logFiles.push_back(f.toStdString());
    for (const QString& f : nvidiaSmi) inputs.nvidiaSmiFiles.push_back(f.toStdString());
    inputs.liveSnapshots = m_live;
    const quint64 job = ++m_job;
    m_summary->setText(tr("Reading %n file(s)…", nullptr, int(logs.size() + nvidiaSmi.size())));
    auto* watcher = new QFutureWatcher<Result<HealthReport>>(this);
    QPointer<HealthPanel> self(this);
    connect(watcher, &QFutureWatcher<Result<HealthReport>>::finished, this, [self, watcher, job] {
        watcher->deleteLater();
        if (!self || job != self->m_job) return;  // a newer load superseded this one
        const Result<HealthReport>& r = watcher->future().result();
        if (r)
            self->showReport(*r);
        else
            self->showError(qs(r.message()));
    });
    watcher->setFuture(QtConcurrent::run([inputs] { return collectHealth(inputs); }));
}

void HealthPanel::showReport(const HealthReport& report)
{
    m_report = std::make_shared<const HealthReport>(report);
    m_gpus->setRowCount(int(report.gpus.size()));
    int attention = 0;
    for (int row = 0; row < int(report.gpus.size()); ++row) {
        const GpuHealthRecord& g = report.gpus[size_t(row)];
        QStringList why;
        for (const HealthReason& r : g.reasons)
            why << QStringLiteral("%1: %2").arg(healthActionName(r.action), qs(r.why));
        m_gpus->setItem(row, GpuBusId, item(qs(g.identity.busId), qs(g.identity.uuid)));
        m_gpus->setItem(row, GpuProduct, item(qs(g.identity.product)));
        m_gpus->setItem(row, GpuSerial, item(qs(g.identity.serial)));
        auto* rec = item(recommendationText(g.recommendation), why.join(QLatin1Char('\n')));
        if (g.recommendation >= HealthAction::Reset) {
            rec->setForeground(PlotStyle::warningColor());
            QFont bold = rec->font();
            bold.setBold(true);
            rec->setFont(bold);
        }
        m_gpus->setItem(row, GpuRecommendation, rec);
        m_gpus->setItem(row, GpuFlags, item(flagsText(g)));
        m_gpus->setItem(row, GpuXids, item(xidSummary(g)));
        if (g.recommendation != HealthAction::None) ++attention;
    }
    m_gpus->resizeColumnsToContents();
    QString summary = tr("%n GPU(s)", nullptr, int(report.gpus.size()));
    if (attention) summary += tr(", %n needing attention", nullptr, attention);
    if (!report.unattributedEvents.empty())
        summary += tr("; %n event(s) not attributed to a GPU (SXids)", nullptr,
                      int(report.unattributedEvents.size()));
    if (!report.warnings.empty()) summary += QStringLiteral("; ") + qs(report.warnings.front());
    m_summary->setText(summary);
    selectGpu(report.gpus.empty() ? -1 : 0);
    emit reportShown();
}

void HealthPanel::showError(const QString& error)
{
    m_summary->setText(tr("<span style='color:%1'>Health: %2</span>")
                           .arg(PlotStyle::warningColor().name(), error.toHtmlEscaped()));
    emit reportShown();
}

QString HealthPanel::summaryText() const
{
    return m_summary->text();
}

void HealthPanel::selectGpu(int row)
{
    if (row >= 0 && row < m_gpus->rowCount()) m_gpus->setCurrentCell(row, 0);
    fillEventsOnUi(row);
}

void HealthPanel::fillEventsOnUi(int row)
{
    if (!m_report || row < 0 || row >= int(m_report->gpus.size())) {
        m_events->setRowCount(0);
        return;
    }
    const GpuHealthRecord& g = m_report->gpus[size_t(row)];
    m_events->setRowCount(int(g.events.size()));
    for (int i = 0; i < int(g.events.size()); ++i) {
        const XidEvent& e = g.events[size_t(i)];
        QString when = qs(e.time);
        if (e.uptimeSeconds)
            when += (when.isEmpty() ? QString() : QStringLiteral(" ")) +
                    QString::number(*e.uptimeSeconds, 'f', 6) + QStringLiteral(" s");
        QStringList decoded;
        for (const XidDecodedField& d : e.decoded)
            decoded << qs(d.name) + QStringLiteral(" = ") + qs(d.value);
        QString process = qs(e.process);
        if (e.pid) process += QStringLiteral(" (%1)").arg(*e.pid);
        m_events->setItem(i, EventTime, item(when, qs(e.source)));
        m_events->setItem(i, EventBoot, item(QString::number(e.boot), qs(e.bootId)));
        auto* code = item(QString::number(e.code), qs(e.mnemonic));
        if (!e.known) code->setForeground(PlotStyle::warningColor());
        m_events->setItem(i, EventXid, code);
        m_events->setItem(i, EventName, item(qs(e.name), qs(e.meaning)));
        m_events->setItem(i, EventAction, item(qs(e.immediateAction), qs(e.investigatoryAction)));
        m_events->setItem(i, EventProcess, item(process));
        m_events->setItem(i, EventMessage, item(qs(e.message), qs(e.rawLine)));
        m_events->setItem(i, EventDecoded, item(decoded.join(QStringLiteral("; "))));
    }
    m_events->resizeColumnsToContents();
}

}  // namespace faultline::views
