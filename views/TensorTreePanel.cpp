#include "TensorTreePanel.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

#include "DivergenceTreeModel.h"

namespace faultline::views {
namespace {
constexpr size_t kExpandAllBelow = 600;  // entries: small incidents open fully expanded
}

TensorTreePanel::TensorTreePanel(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("tensorTreePanel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_filter = new QLineEdit;
    m_filter->setObjectName(QStringLiteral("tensorFilter"));
    m_filter->setPlaceholderText(tr("Filter by name (e.g. mlp, fc1, grad)"));
    m_filter->setClearButtonEnabled(true);
    layout->addWidget(m_filter);

    m_model = new DivergenceTreeModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(DivergenceTreeModel::SortRole);
    m_proxy->setRecursiveFilteringEnabled(true);
    m_proxy->setAutoAcceptChildRows(true);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setFilterKeyColumn(DivergenceTreeModel::Name);

    m_view = new QTreeView;
    m_view->setObjectName(QStringLiteral("tensorTree"));
    m_view->setModel(m_proxy);
    m_view->setUniformRowHeights(true);
    m_view->setIndentation(14);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->header()->setSortIndicator(-1, Qt::AscendingOrder);  // source order: trace order, names
    m_view->setSortingEnabled(true);
    m_view->header()->setStretchLastSection(true);
    layout->addWidget(m_view, 1);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) { onCurrentChangedOnUi(current); });
    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_proxy->setFilterFixedString(text);
        if (!text.isEmpty()) m_view->expandAll();
    });
}

void TensorTreePanel::setIncident(std::shared_ptr<const Incident> incident)
{
    m_selected = -1;
    m_filter->clear();
    const size_t entries = incident ? incident->entries.size() : 0;
    m_model->setIncident(std::move(incident));
    if (entries > 0 && entries < kExpandAllBelow) {
        std::function<void(const QModelIndex&)> fetchAll = [&](const QModelIndex& parent) {
            while (m_model->canFetchMore(parent)) m_model->fetchMore(parent);
            for (int r = 0; r < m_model->rowCount(parent); ++r) fetchAll(m_model->index(r, 0, parent));
        };
        fetchAll(QModelIndex());
        m_view->expandAll();
    } else {
        m_view->expandToDepth(0);
    }
    for (int c = 0; c < DivergenceTreeModel::ColumnCount; ++c) m_view->resizeColumnToContents(c);
    m_view->setColumnWidth(DivergenceTreeModel::Name, std::min(m_view->columnWidth(DivergenceTreeModel::Name), 170));
}

void TensorTreePanel::selectEntry(int entryId)
{
    const QModelIndex source = m_model->indexForEntry(entryId);
    if (!source.isValid()) return;
    QModelIndex index = m_proxy->mapFromSource(source);
    if (!index.isValid()) {  // filtered out: show everything again
        m_filter->clear();
        index = m_proxy->mapFromSource(source);
    }
    for (QModelIndex p = index.parent(); p.isValid(); p = p.parent()) m_view->expand(p);
    m_view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(index);
    if (m_selected != entryId) onCurrentChangedOnUi(index);
}

void TensorTreePanel::onCurrentChangedOnUi(const QModelIndex& current)
{
    const int id = current.isValid() ? m_model->entryAt(m_proxy->mapToSource(current)) : -1;
    if (id < 0 || id == m_selected) return;  // group rows keep what is shown
    m_selected = id;
    emit entrySelected(id);
}
}  // namespace faultline::views
