#include "views/results/ResultTableModel.h"

namespace faultline::views {

ResultTableModel::ResultTableModel(ResultTable table, QObject* parent)
    : QAbstractTableModel(parent), m_table(std::move(table))
{
}

int ResultTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_table.rows.size());
}

int ResultTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_table.columns.size());
}

QVariant ResultTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || size_t(index.row()) >= m_table.rows.size()) return {};
    const auto& row = m_table.rows[size_t(index.row())];
    if (size_t(index.column()) >= row.size()) return {};
    const QString text = QString::fromStdString(row[size_t(index.column())]);
    switch (role) {
        case Qt::DisplayRole:
            return text;
        case Qt::ToolTipRole:
            return text.size() > 40 ? text : QVariant();
        case SortRole: {
            // "12/40" and "12.5% [...]" sort by their leading number; text sorts as text.
            bool ok = false;
            const double v =
                text.section(QLatin1Char('/'), 0, 0).section(QLatin1Char('%'), 0, 0).toDouble(&ok);
            return ok ? QVariant(v) : QVariant(text);
        }
        default:
            return {};
    }
}

QVariant ResultTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole) return {};
    if (orientation == Qt::Vertical) return section + 1;
    if (size_t(section) >= m_table.columns.size()) return {};
    return QString::fromStdString(m_table.columns[size_t(section)]);
}

int ResultTableModel::column(const QString& title) const
{
    for (size_t c = 0; c < m_table.columns.size(); ++c)
        if (QString::fromStdString(m_table.columns[c]) == title) return int(c);
    return -1;
}

}  // namespace faultline::views
