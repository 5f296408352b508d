#pragma once
// Draws a progress bar in table cells whose model gives a 0..1 fraction under `fractionRole`,
// with the cell's display text on it.
#include <QStyledItemDelegate>

namespace faultline::views {

class ProgressBarDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    explicit ProgressBarDelegate(int fractionRole, QObject* parent = nullptr);
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;

private:
    int m_fractionRole;
};

}  // namespace faultline::views
