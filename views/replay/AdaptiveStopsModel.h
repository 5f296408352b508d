#pragma once
// An adaptive campaign's stops (replay --until-rate): one row per op and target with the runs
// done, what ended them (stopped_by: failure, rate, budget, cancelled) and what the runs rule
// out, in the CLI's words (core's stoppedByText): "no failure in 2995 runs: rate < 1e-3 at 95%
// (stopped by rate: rate < 1e-3 at 95% reached)", "stopped by a failure after 4 run(s) (1
// failed)". Empty for a campaign of fixed repetitions.
#include <QAbstractTableModel>
#include <QString>
#include <optional>
#include <vector>

#include "core/replay/Campaign.h"

namespace faultline::views {

class AdaptiveStopsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Op, Target, Runs, StoppedByColumn, RulesOut, ColumnCount };

    explicit AdaptiveStopsModel(QObject* parent = nullptr);

    // The report's op × target cells that say what stopped them (none for fixed repetitions).
    void setReport(const CampaignReport& report);
    void clear();

    int rowOf(size_t opIndex, const QString& target) const;
    std::optional<StoppedBy> stoppedByOf(size_t opIndex, const QString& target) const;
    quint64 runsOf(size_t opIndex, const QString& target) const;
    QString rulesOutOf(size_t opIndex, const QString& target) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        size_t opIndex = 0;
        QString op, name, target;
        quint64 runs = 0, failures = 0;
        StoppedBy stoppedBy = StoppedBy::Budget;
        QString rulesOut;
    };
    std::vector<Row> m_rows;
};

}  // namespace faultline::views
