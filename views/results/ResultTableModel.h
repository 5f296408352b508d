#pragma once
// One table of a results file (core/incident/ResultTables.h) as a read-only item model: text
// cells as the file says them, sortable through a proxy (numbers sort as numbers).
#include <QAbstractTableModel>

#include "core/incident/ResultTables.h"

namespace faultline::views {

class ResultTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // Holds the cells' sort keys beside their text.
    static constexpr int SortRole = Qt::UserRole + 1;

    explicit ResultTableModel(ResultTable table, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    const ResultTable& table() const { return m_table; }
    // The column titled `title`, or -1.
    int column(const QString& title) const;

private:
    ResultTable m_table;
};

}  // namespace faultline::views
