#pragma once
// The fleet table of a merged campaign: GPUs (host × GPU) sortable by any column, filtered by
// text (any column) and optionally to the GPUs that are not healthy or lost a peer vote.
// Selecting a GPU shows its campaign below the table (verdict, explanation, each op's runs,
// failures, interval and the fleet vote) and emits gpuSelected with its node's results file.
#include <QSortFilterProxyModel>
#include <QWidget>
#include <nlohmann/json.hpp>

class QAction;
class QCheckBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTableView;

namespace faultline::views {

class FleetTableModel;

// Text filter over every column, and "problems only".
class FleetFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setProblemsOnly(bool on);
    bool problemsOnly() const { return m_problemsOnly; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    bool m_problemsOnly = false;
};

class FleetView : public QWidget {
    Q_OBJECT
public:
    explicit FleetView(QWidget* parent = nullptr);

    // The merged report's JSON (read off the GUI thread by the caller).
    void setReport(const nlohmann::json& report);
    void clear();

    FleetTableModel* model() const { return m_model; }
    FleetFilterProxy* proxy() const { return m_proxy; }
    QTableView* table() const { return m_table; }
    QLineEdit* filterEdit() const { return m_filter; }
    QCheckBox* problemsOnlyBox() const { return m_problemsOnly; }
    // The selected GPU's campaign: identity, verdict and explanation, one line per op.
    QPlainTextEdit* detail() const { return m_detail; }
    // "Device history…" on the table's context menu: the selected GPU's ledger history.
    QAction* historyAction() const { return m_historyAction; }

signals:
    void gpuSelected(const QString& resultsFile, const QString& target);

private:
    void updateSummary();

    FleetTableModel* m_model = nullptr;
    FleetFilterProxy* m_proxy = nullptr;
    QTableView* m_table = nullptr;
    QLineEdit* m_filter = nullptr;
    QCheckBox* m_problemsOnly = nullptr;
    QLabel* m_summary = nullptr;
    QPlainTextEdit* m_detail = nullptr;
    QAction* m_historyAction = nullptr;
};

}  // namespace faultline::views
