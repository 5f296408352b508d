#pragma once
// The fleet table of a merged fleet campaign (`faultline merge`, docs/formats.md "Fleet
// campaign"): one row per GPU of the fleet, host × GPU, with its verdict, failures with the 95%
// interval of its rate, and the ops on which it lost the fleet's peer vote (and, per GPU, its
// campaign as lines per op for the detail pane). Fed the report's JSON
// (read off the GUI thread); sorting uses SortRole (numbers where the column is numeric).
#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/replay/ReplayVocabulary.h"

namespace faultline::views {

class FleetTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Host, Task, Gpu, Uuid, Serial, Verdict, Failures, Interval, OutlierOps, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int ProblemRole = Qt::UserRole + 1;  // bool: not healthy, or an outlier

    explicit FleetTableModel(QObject* parent = nullptr);

    // The merged report (its "fleet.gpus"); a report without "fleet" empties the table.
    void setReport(const nlohmann::json& report);
    void clear();

    struct Row {
        QString gpu, host, task, target, uuid, serial, verdict, file;
        std::optional<faultline::Verdict> judged;  // `verdict` parsed (nullopt: not a verdict)
        std::optional<double> rulesOutBelow;       // no run failed: the rate its runs rule out
        quint64 runs = 0, failures = 0;
        double rate = 0, low = 0, high = 0;
        QStringList outlierOps;
        QString explanation;
        QStringList opLines;  // its campaign, one line per op: runs, failures, interval, the vote
    };
    const Row& row(int r) const { return m_rows[size_t(r)]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void addCampaigns(const nlohmann::json& report);

    std::vector<Row> m_rows;
};

}  // namespace faultline::views
