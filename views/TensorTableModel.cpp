#include "TensorTableModel.h"

#include "core/report/InspectReport.h"

namespace faultline::views {

TensorTableModel::TensorTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TensorTableModel::setFile(std::shared_ptr<const TensorFile> file)
{
    beginResetModel();
    m_file = std::move(file);
    endResetModel();
}

int TensorTableModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_file) return 0;
    return int(m_file->tensors().size());
}

int TensorTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const
{
    if (!m_file || !index.isValid() || index.row() >= rowCount()) return {};
    const TensorInfo& t = m_file->tensors()[size_t(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name: return QString::fromStdString(t.name);
        case DTypeColumn: return QString::fromUtf8(dtypeName(t.dtype).data(), qsizetype(dtypeName(t.dtype).size()));
        case Shape: return QString::fromStdString(shapeToString(t.shape));
        case Bytes: return QString::fromStdString(formatBytes(t.byteCount()));
        case Kind: return QString::fromStdString(t.kind);
        case Storage: return QString::fromStdString(t.storage);
        default: return {};
        }
    }
    if (role == Qt::UserRole && index.column() == Bytes) return QVariant::fromValue<qulonglong>(t.byteCount());
    if (role == Qt::TextAlignmentRole && index.column() == Bytes)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"Name", "DType", "Shape", "Bytes", "Kind", "Storage"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant{};
}

}  // namespace faultline::views
