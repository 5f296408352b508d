#pragma once
// Table of the tensors of one opened file: name, dtype, shape, bytes, kind, storage.
#include <QAbstractTableModel>
#include <memory>

#include "core/TensorFile.h"

namespace faultline::views {

class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, DTypeColumn, Shape, Bytes, Kind, Storage, ColumnCount };

    explicit TensorTableModel(QObject* parent = nullptr);

    // Shows the tensors of `file` (nullptr clears). Shares ownership of the file.
    void setFile(std::shared_ptr<const TensorFile> file);
    std::shared_ptr<const TensorFile> file() const { return m_file; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const TensorFile> m_file;
};

}  // namespace faultline::views
