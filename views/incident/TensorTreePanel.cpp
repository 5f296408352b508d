#include "views/incident/TensorTreePanel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

#include "views/incident/DivergenceTreeModel.h"
#include "views/plots/PlotStyle.h"

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

    m_toleranceRow = new QWidget;
    auto* tolerance = new QHBoxLayout(m_toleranceRow);
    tolerance->setContentsMargins(0, 0, 0, 0);
    auto* toleranceLabel = new QLabel(tr("Tolerance"));
    tolerance->addWidget(toleranceLabel);
    m_toleranceKind = new QComboBox;
    m_toleranceKind->setObjectName(QStringLiteral("toleranceKind"));
    m_toleranceKind->addItem(tr("exact"), QStringLiteral("exact"));
    m_toleranceKind->addItem(tr("ulp"), QStringLiteral("ulp"));
    m_toleranceKind->addItem(tr("abs"), QStringLiteral("abs"));
    m_toleranceKind->addItem(tr("rel"), QStringLiteral("rel"));
    m_toleranceKind->setItemData(0, tr("Every differing bit pattern is beyond tolerance"), Qt::ToolTipRole);
    m_toleranceKind->setItemData(1, tr("Within N units in the last place"), Qt::ToolTipRole);
    m_toleranceKind->setItemData(2, tr("|suspect − reference| ≤ X"), Qt::ToolTipRole);
    m_toleranceKind->setItemData(3, tr("|suspect − reference| ≤ X·|reference|"), Qt::ToolTipRole);
    toleranceLabel->setBuddy(m_toleranceKind);
    tolerance->addWidget(m_toleranceKind);
    m_toleranceValue = new QLineEdit;
    m_toleranceValue->setObjectName(QStringLiteral("toleranceValue"));
    tolerance->addWidget(m_toleranceValue, 1);
    m_toleranceApply = new QToolButton;
    m_toleranceApply->setObjectName(QStringLiteral("toleranceApply"));
    m_toleranceApply->setText(tr("Compare"));
    m_toleranceApply->setToolTip(tr("Compare the snapshot pair again with this tolerance"));
    tolerance->addWidget(m_toleranceApply);
    layout->addWidget(m_toleranceRow);
    m_toleranceError = new QLabel;
    m_toleranceError->setObjectName(QStringLiteral("toleranceError"));
    m_toleranceError->setWordWrap(true);
    m_toleranceError->hide();
    layout->addWidget(m_toleranceError);
    m_toleranceRow->hide();

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
    auto kindChanged = [this] {
        const QString kind = m_toleranceKind->currentData().toString();
        m_toleranceValue->setEnabled(kind != QLatin1String("exact"));
        m_toleranceValue->setPlaceholderText(kind == QLatin1String("exact") ? QString()
                                             : kind == QLatin1String("ulp") ? tr("N, e.g. 4")
                                             : kind == QLatin1String("abs") ? tr("X, e.g. 1e-5")
                                                                            : tr("X, e.g. 1e-3"));
    };
    connect(m_toleranceKind, &QComboBox::currentIndexChanged, this, kindChanged);
    kindChanged();
    connect(m_toleranceApply, &QToolButton::clicked, this, [this] { applyTolerance(); });
    connect(m_toleranceValue, &QLineEdit::returnPressed, this, [this] { applyTolerance(); });
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
    m_toleranceRow->setVisible(incident && incident->hasPair());
    if (incident && incident->hasPair()) {
        setTolerance(incident->compare->tolerance);
    } else {
        m_toleranceMessage.clear();
        m_toleranceError->hide();
    }
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
    m_view->setColumnWidth(DivergenceTreeModel::Name,
                           std::min(m_view->columnWidth(DivergenceTreeModel::Name), 170));
}

void TensorTreePanel::setTolerance(const Tolerance& tolerance)
{
    const QString text = QString::fromStdString(tolerance.toString());
    const qsizetype colon = text.indexOf(QLatin1Char(':'));
    const int kind = m_toleranceKind->findData(colon < 0 ? text : text.left(colon));
    m_toleranceKind->setCurrentIndex(std::max(kind, 0));
    m_toleranceValue->setText(colon < 0 ? QString() : text.mid(colon + 1));
    m_toleranceMessage.clear();
    m_toleranceError->hide();
}

QString TensorTreePanel::toleranceText() const
{
    const QString kind = m_toleranceKind->currentData().toString();
    if (kind == QLatin1String("exact")) return kind;
    return kind + QLatin1Char(':') + m_toleranceValue->text().trimmed();
}

QString TensorTreePanel::toleranceError() const
{
    return m_toleranceMessage;
}

bool TensorTreePanel::applyTolerance()
{
    auto tolerance = parseTolerance(toleranceText().toStdString());
    if (!tolerance) {
        m_toleranceMessage = QString::fromStdString(tolerance.message());
        m_toleranceError->setText(
            QStringLiteral("<span style='color:%1'>%2</span>")
                .arg(PlotStyle::divergentColor().name(), m_toleranceMessage.toHtmlEscaped()));
        m_toleranceError->show();
        return false;
    }
    m_toleranceMessage.clear();
    m_toleranceError->hide();
    emit toleranceRequested(QString::fromStdString(tolerance->toString()));
    return true;
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
    m_view->selectionModel()->setCurrentIndex(
        index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
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
