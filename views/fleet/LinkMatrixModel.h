#pragma once
// The links view's rank × rank table: row = source rank, column = destination rank, one cell per
// directed link of a LinkMatrix. A cell's colour is its corrupted bytes (log scale) or its
// bandwidth (GB/s, linear), by the chosen metric; untested cells and the diagonal are empty.
// Headers are rank indices; a faulty GPU's header is marked and its diagonal cell says so.
#include <QAbstractTableModel>
#include <QColor>
#include <memory>

#include "core/collectives/LinkMatrix.h"

namespace faultline::views {

class LinkMatrixModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Metric { CorruptedBytes, Bandwidth };
    enum Role {
        ValueRole = Qt::UserRole + 1,  // the metric's value (double; invalid when untested)
        FaultyLinkRole,                // bool: the link was judged faulty
        FaultyGpuRole,                 // bool: the diagonal cell of a faulty GPU
        FailedRole,                    // bool: some transfer on this link failed
    };

    using QAbstractTableModel::QAbstractTableModel;

    void setMatrix(std::shared_ptr<const LinkMatrix> matrix);
    std::shared_ptr<const LinkMatrix> matrix() const { return m_matrix; }
    void setMetric(Metric metric);
    Metric metric() const { return m_metric; }
    // The colour of a value on the current metric's scale (log for corrupted bytes).
    QColor colourOf(double value) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    // A cell's details in words (the tooltip): ranks, targets, transfers, failures, bytes, GB/s,
    // signature, the judgement and the stored block.
    QString describe(size_t src, size_t dst) const;

private:
    std::shared_ptr<const LinkMatrix> m_matrix;
    Metric m_metric = Metric::CorruptedBytes;
};

// "1.5 KiB", "3 B"
QString byteText(uint64_t bytes);
// The same in a cell's width: "1.5K", "163K", "778" (bytes, powers of 1024).
QString compactByteText(uint64_t bytes);

}  // namespace faultline::views
