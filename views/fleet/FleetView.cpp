#include "views/fleet/FleetView.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "views/fleet/DeviceHistoryView.h"
#include "views/fleet/FleetTableModel.h"

namespace faultline::views {

void FleetFilterProxy::setProblemsOnly(bool on)
{
    m_problemsOnly = on;
    invalidateFilter();
}

bool FleetFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (m_problemsOnly &&
        !sourceModel()->index(sourceRow, 0, sourceParent).data(FleetTableModel::ProblemRole).toBool())
        return false;
    return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
}

FleetView::FleetView(QWidget* parent) : QWidget(parent)
{
    m_model = new FleetTableModel(this);
    m_proxy = new FleetFilterProxy(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(FleetTableModel::SortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);

    m_filter = new QLineEdit(this);
    m_filter->setPlaceholderText(tr("Filter: host, GPU, UUID, serial, verdict…"));
    m_filter->setClearButtonEnabled(true);
    m_problemsOnly = new QCheckBox(tr("Outliers and failures only"), this);
    m_summary = new QLabel(this);
    m_table = new QTableView(this);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_historyAction = addDeviceHistoryAction(m_table, [this](const QModelIndex& index) {
        if (!index.isValid()) return QString();
        const FleetTableModel::Row& r = m_model->row(m_proxy->mapToSource(index).row());
        return deviceHistoryKey(r.serial, r.uuid);
    });

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_filter, 1);
    bar->addWidget(m_problemsOnly);
    m_detail = new QPlainTextEdit(this);
    m_detail->setReadOnly(true);
    m_detail->setPlaceholderText(tr("Select a GPU to see its campaign"));
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(m_detail);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);

    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_proxy->setFilterFixedString(text);
        updateSummary();
    });
    connect(m_problemsOnly, &QCheckBox::toggled, this, [this](bool on) {
        m_proxy->setProblemsOnly(on);
        updateSummary();
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!current.isValid()) return;
                const FleetTableModel::Row& r = m_model->row(m_proxy->mapToSource(current).row());
                QStringList text = {r.gpu + (r.uuid.isEmpty() ? QString() : "  " + r.uuid) +
                                        (r.serial.isEmpty() ? QString() : tr("  serial %1").arg(r.serial)),
                                    tr("%1: %2").arg(r.verdict, r.explanation),
                                    tr("campaign: %1").arg(r.file)};
                text << r.opLines;
                m_detail->setPlainText(text.join('\n'));
                emit gpuSelected(r.file, r.target);
            });
    updateSummary();
}

void FleetView::setReport(const nlohmann::json& report)
{
    m_model->setReport(report);
    m_detail->clear();
    m_table->sortByColumn(FleetTableModel::OutlierOps, Qt::DescendingOrder);
    m_table->resizeColumnsToContents();
    updateSummary();
}

void FleetView::clear()
{
    m_model->clear();
    m_detail->clear();
    updateSummary();
}

void FleetView::updateSummary()
{
    int problems = 0, outliers = 0;
    for (int r = 0; r < m_model->rowCount(); ++r) {
        problems += m_model->index(r, 0).data(FleetTableModel::ProblemRole).toBool();
        outliers += !m_model->row(r).outlierOps.isEmpty();
    }
    m_summary->setText(
        tr("%1 GPU(s), %2 shown; %3 not healthy or outlier, %4 outlier(s) by the fleet's peer vote")
            .arg(m_model->rowCount())
            .arg(m_proxy->rowCount())
            .arg(problems)
            .arg(outliers));
}

}  // namespace faultline::views
