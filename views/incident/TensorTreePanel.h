#pragma once
// The tensor tree dock: the DivergenceTreeModel behind a sort/filter proxy in a QTreeView, a
// filter box, selection in both directions (selecting a row announces its entry; the other
// views can select an entry here), and, for a suspect/reference pair, the comparison's
// tolerance (exact, ulp:N, abs:X, rel:X): a valid new one is announced for the window to compare
// again; a bad one is said inline and nothing changes.
#include <QWidget>
#include <memory>

#include "core/compare/Tolerance.h"
#include "views/incident/Incident.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QToolButton;
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

    // The tolerance the controls show (the open pair's); they are hidden without a pair.
    void setTolerance(const Tolerance& tolerance);
    // Parses the policy chosen in the controls (combo + value); on success announces it through
    // toleranceRequested and returns true; otherwise shows the error inline and returns false.
    bool applyTolerance();
    // The controls' text ("abs:0.01"), the inline error ("" when none).
    QString toleranceText() const;
    QString toleranceError() const;

    DivergenceTreeModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QTreeView* view() const { return m_view; }

signals:
    // An entry's row was selected (group rows announce nothing).
    void entrySelected(int entryId);
    // The user asked to compare the pair again under this tolerance (its canonical text).
    void toleranceRequested(const QString& tolerance);

private:
    void onCurrentChangedOnUi(const QModelIndex& current);

    DivergenceTreeModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTreeView* m_view = nullptr;
    QLineEdit* m_filter = nullptr;
    QWidget* m_toleranceRow = nullptr;
    QComboBox* m_toleranceKind = nullptr;
    QLineEdit* m_toleranceValue = nullptr;
    QToolButton* m_toleranceApply = nullptr;
    QLabel* m_toleranceError = nullptr;
    QString m_toleranceMessage;
    int m_selected = -1;
};

}  // namespace faultline::views
