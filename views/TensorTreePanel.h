#pragma once
// The tensor tree dock: the DivergenceTreeModel behind a sort/filter proxy in a QTreeView, a
// filter box, and selection in both directions (selecting a row announces its entry; the other
// views can select an entry here).
#include <QWidget>
#include <memory>

#include "Incident.h"

class QLineEdit;
class QSortFilterProxyModel;
class QTreeView;

namespace faultline::views {

class DivergenceTreeModel;

class TensorTreePanel : public QWidget {
    Q_OBJECT
public:
    explicit TensorTreePanel(QWidget* parent = nullptr);

    // Resets the tree to `incident` (nullptr clears).
    void setIncident(std::shared_ptr<const Incident> incident);
    // Selects, reveals and announces an entry's row.
    void selectEntry(int entryId);
    int selectedEntry() const { return m_selected; }

    DivergenceTreeModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QTreeView* view() const { return m_view; }

signals:
    // An entry's row was selected (group rows announce nothing).
    void entrySelected(int entryId);

private:
    void onCurrentChangedOnUi(const QModelIndex& current);

    DivergenceTreeModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTreeView* m_view = nullptr;
    QLineEdit* m_filter = nullptr;
    int m_selected = -1;
};

}  // namespace faultline::views
