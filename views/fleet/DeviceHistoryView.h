#pragma once
// A GPU's history from the ledger (core/ledger, `faultline ledger show`), drawn on a time axis: one
// row per kind of fact (host or slot seen, reboots, GPU resets, Xid, SXid, health snapshots, health
// flags, campaigns, evidence bundles), under them each campaign's failure rate with its 95% interval
// as an error bar and the health counters' growth (right axis), and beside them the rules that
// fired with their reasons. The ledger is read and converted off the GUI thread (a job id drops a
// superseded answer); while many marks fall in the visible range a row draws their counts per day,
// week, 30 days or year (HistoryBinning.h), re-binned as the range changes, so ten years of a busy
// GPU draw without stalling. Wheel zooms and dragging pans the time axis; a click names the fact
// under the pointer.
#include <QString>
#include <QWidget>
#include <array>
#include <functional>
#include <memory>

#include "views/fleet/DeviceHistory.h"
#include "views/fleet/HistoryBinning.h"

class QAbstractItemView;
class QAction;
class QCPAxisRect;
class QCPErrorBars;
class QCPGraph;
class QCPTextElement;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QModelIndex;
class QMouseEvent;
class QPushButton;
class QTreeWidget;

namespace faultline::views {

class DeviceHistoryView : public QWidget {
    Q_OBJECT
public:
    explicit DeviceHistoryView(QWidget* parent = nullptr);

    // Reads the history of `key` (serial or UUID) from the ledger at `ledgerSpec` ("" = the default
    // location, the one the CLI uses without --ledger) on a worker and shows it.
    void load(const QString& ledgerSpec, const QString& key);
    // Reads again what the fields name.
    void reload();

    // What is shown (empty before the first answer).
    const DeviceHistory& history() const { return *m_history; }
    // What a row draws at the current zoom.
    const HistoryPoints& shownPoints(HistoryLane lane) const { return m_points[size_t(lane)]; }
    QCustomPlot* plot() const { return m_plot; }
    QCPGraph* laneGraph(HistoryLane lane) const { return m_laneGraphs[size_t(lane)]; }
    // Campaigns whose verdict failed (SDC-positive or not healthy) and the clean ones, with their intervals.
    QCPGraph* failingRates() const { return m_failing; }
    QCPGraph* cleanRates() const { return m_clean; }
    QCPErrorBars* failingIntervals() const { return m_failingBars; }
    QCPErrorBars* cleanIntervals() const { return m_cleanBars; }
    QTreeWidget* rules() const { return m_rules; }
    QLabel* status() const { return m_status; }
    QLabel* detail() const { return m_detail; }
    QLineEdit* ledgerEdit() const { return m_ledger; }
    QLineEdit* keyEdit() const { return m_key; }
    bool isLoading() const { return m_loading; }
    // The visible time range (seconds since the epoch, UTC).
    void setTimeRange(double from, double to);
    // The whole history in view.
    void showAll();
    // A row draws its marks themselves while at most this many are in view (default 1,000), else
    // counts per bin; a huge number draws every mark (the benchmark's anchor).
    void setMaxRawMarks(int marks);
    // The fact under a point of the plot (in the plot's pixels): its line, or "" when none is near.
    QString factAt(const QPointF& pixel) const;

signals:
    // The answer is drawn, and (a turn later) its status line and rules' list are filled.
    void historyShown();
    void failed(const QString& message);

private:
    void showHistoryOnUi(quint64 job, std::shared_ptr<const DeviceHistory> history);
    void scheduleRebinOnUi();
    void rebinOnUi();
    void fillRatesOnUi();
    void fillRulesOnUi();
    void clearPlotOnUi();
    void onPlotClickOnUi(QMouseEvent* event);

    QLineEdit* m_ledger = nullptr;
    QLineEdit* m_key = nullptr;
    QPushButton* m_show = nullptr;
    QPushButton* m_all = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_detail = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPAxisRect* m_lanesRect = nullptr;
    QCPAxisRect* m_ratesRect = nullptr;
    std::array<QCPGraph*, kHistoryLaneCount> m_laneGraphs{};
    QCPGraph *m_failing = nullptr, *m_clean = nullptr;
    QCPErrorBars *m_failingBars = nullptr, *m_cleanBars = nullptr;
    std::vector<QCPGraph*> m_counterGraphs;
    QTreeWidget* m_rules = nullptr;

    std::shared_ptr<const DeviceHistory> m_history;
    std::array<HistoryPoints, kHistoryLaneCount> m_points;
    quint64 m_job = 0;
    bool m_loading = false;
    bool m_rebinQueued = false;
    int m_maxRawMarks;
};

// Opens a device history window for `key` over `from`'s window (the ledger at `ledgerSpec`, "" = the
// default) and starts reading it; the window deletes itself when closed.
DeviceHistoryView* openDeviceHistory(QWidget* from, const QString& key, const QString& ledgerSpec = {});

// Adds "Device history…" to `view`'s context menu (Qt::ActionsContextMenu): it opens the history of
// the current row's GPU, the key `keyOf` gives for the current index (a window asking for a serial
// or UUID where it gives ""). The action is returned (tests trigger it).
QAction* addDeviceHistoryAction(QAbstractItemView* view, std::function<QString(const QModelIndex&)> keyOf);

// The key the ledger knows a GPU by, from what a table shows of it: the serial where there is one
// (not "", "n/a", "N/A" or "[N/A]"), else the UUID; "" when neither.
QString deviceHistoryKey(const QString& serial, const QString& uuid);

}  // namespace faultline::views
