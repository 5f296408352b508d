#include "views/results/ResultView.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "views/heatmap/ComparisonHeatmap.h"
#include "views/plots/RateByConditionPlot.h"
#include "views/results/ResultTableModel.h"

namespace faultline::views {

namespace {
// Columns as wide as their text, within reason: long reasons wrap into the tooltip.
constexpr int kMaxColumnWidth = 420;
}  // namespace

ResultView::ResultView(const QString& path, ResultKind kind, ResultSummary summary, QWidget* parent)
    : QWidget(parent), m_path(path), m_kind(kind), m_summary(std::move(summary))
{
    setObjectName(QStringLiteral("resultView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    QStringList lines;
    for (const std::string& line : m_summary.lines) lines << QString::fromStdString(line).toHtmlEscaped();
    m_headline = new QLabel(QStringLiteral("<b>%1</b><br>%2")
                                .arg(QString::fromStdString(m_summary.title).toHtmlEscaped(),
                                     lines.join(QStringLiteral("<br>"))));
    m_headline->setObjectName(QStringLiteral("resultHeadline"));
    m_headline->setWordWrap(true);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_headline->setToolTip(path);
    layout->addWidget(m_headline);

    m_sections = new QTabWidget;
    m_sections->setObjectName(QStringLiteral("resultSections"));
    layout->addWidget(m_sections, 1);
    for (ResultTable& table : m_summary.tables) {
        auto* page = new QWidget;
        auto* pageLayout = new QVBoxLayout(page);
        pageLayout->setContentsMargins(0, 0, 0, 0);
        if (!table.note.empty()) pageLayout->addWidget(new QLabel(QString::fromStdString(table.note)));
        const QString title = QString::fromStdString(table.title);
        const int rows = int(table.rows.size());
        auto* model = new ResultTableModel(table, page);
        model->setObjectName(title);
        auto* proxy = new QSortFilterProxyModel(page);
        proxy->setSourceModel(model);
        proxy->setSortRole(ResultTableModel::SortRole);
        auto* view = new QTableView;
        view->setObjectName(title);
        view->setModel(proxy);
        view->setSortingEnabled(true);
        view->sortByColumn(-1, Qt::AscendingOrder);  // the file's order until a header is clicked
        view->setSelectionBehavior(QAbstractItemView::SelectRows);
        view->setEditTriggers(QAbstractItemView::NoEditTriggers);
        view->setWordWrap(false);
        view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
        view->horizontalHeader()->setResizeContentsPrecision(200);
        view->resizeColumnsToContents();
        for (int c = 0; c < model->columnCount(); ++c)
            if (view->columnWidth(c) > kMaxColumnWidth) view->setColumnWidth(c, kMaxColumnWidth);
        view->horizontalHeader()->setStretchLastSection(true);
        pageLayout->addWidget(view);
        m_sections->addTab(page, QStringLiteral("%1 (%2)").arg(title).arg(rows));
    }
}

QTableView* ResultView::tableView(const QString& title) const
{
    return m_sections->findChild<QTableView*>(title);
}

ResultTableModel* ResultView::model(const QString& title) const
{
    return m_sections->findChild<ResultTableModel*>(title);
}

void ResultView::showComparison(std::shared_ptr<const Incident> comparison)
{
    // Built in an event-loop turn of its own, after the tables: the plot's set-up and first
    // binning do not add to the tab's.
    QTimer::singleShot(0, this, [this, comparison = std::move(comparison)] {
        delete m_comparison;
        m_comparison = new ComparisonHeatmap(comparison);
        m_sections->insertTab(0, m_comparison, tr("Heatmap"));
        m_sections->setCurrentIndex(0);
    });
}

void ResultView::showRates(std::shared_ptr<const RateByCondition> rates)
{
    QTimer::singleShot(0, this, [this, rates = std::move(rates)] {
        delete m_rates;
        m_rates = new RateByConditionPlot(rates);
        m_sections->insertTab(0, m_rates, tr("Rate by condition"));
        m_sections->setCurrentIndex(0);
    });
}

}  // namespace faultline::views
