#pragma once
// The replay panel's table: one row per target with its live progress during a campaign (runs
// done, and how long the run in flight has been running: a hung run shows its time growing up
// to the timeout), then the campaign's summary: runs, failures, rate with its 95% Wilson
// interval, verdict and its reason. The Rate column reads "failures/runs (rate)", e.g. "12/12
// (100%)"; the interval has its own column.
#include <QAbstractTableModel>
#include <QElapsedTimer>
#include <QStringList>
#include <memory>
#include <optional>
#include <vector>

#include "core/replay/Campaign.h"

namespace faultline::views {

class ReplayResultsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Target, Verdict, Rate, Interval, Progress, Runs, Failures, Details, ColumnCount };
    static constexpr int FractionRole = Qt::UserRole;  // Progress: 0..1

    explicit ReplayResultsModel(QObject* parent = nullptr);

    // Starts a campaign's rows: every target running (each has its own worker) with
    // `runsPerTarget` runs to go, its first run in flight from now.
    void begin(const QStringList& targets, quint64 runsPerTarget);
    // Refreshes the running timers of the runs in flight (the panel calls it while running).
    void tick();
    // How long `target`'s run in flight has been running, in ms; -1 when none is.
    qint64 inFlightMs(const QString& target) const;
    // One finished run of `target` with its outcome (ok | mismatch | hang | crash | error).
    void recordRun(const QString& target, RunOutcome outcome);
    // The campaign's summary replaces the live counts; `cancelled` marks verdicts as partial.
    void finish(const CampaignReport& report);
    // The campaign could not run: every row says why.
    void fail(const QString& message);
    void clear();

    int rowOf(const QString& target) const;
    QString verdictOf(const QString& target) const;
    quint64 runsOf(const QString& target) const;
    quint64 failuresOf(const QString& target) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString target;
        QString description;
        quint64 planned = 0, runs = 0, failures = 0, hangs = 0, crashes = 0;
        bool summarised = false;
        RateInterval rate;
        QString verdict;  // shown: running | failed | no runs | the summary's verdict
        std::optional<faultline::Verdict> judged;  // the summary's verdict (nullopt before it, or no runs)
        QString details;
        bool partial = false;
        qint64 inFlightSince = -1;  // m_clock's ms when the run in flight started; -1 none
    };
    QString progressText(const Row& r) const;

    std::vector<Row> m_rows;
    QElapsedTimer m_clock;
};

}  // namespace faultline::views
