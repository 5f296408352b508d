#include "views/replay/AdaptiveStopsModel.h"

#include <QBrush>

#include "views/plots/PlotStyle.h"

namespace faultline::views {

AdaptiveStopsModel::AdaptiveStopsModel(QObject* parent) : QAbstractTableModel(parent) {}

void AdaptiveStopsModel::setReport(const CampaignReport& report)
{
    beginResetModel();
    m_rows.clear();
    for (const OpTargetStats& s : report.stats) {
        if (!s.stoppedBy) continue;
        Row r;
        r.opIndex = s.opIndex;
        r.op = QString::fromStdString(s.op);
        r.name = QString::fromStdString(s.name);
        r.target = QString::fromStdString(s.target);
        r.runs = s.runs;
        r.failures = s.failures;
        r.stoppedBy = *s.stoppedBy;
        r.rulesOut = QString::fromStdString(stoppedByText(*s.stoppedBy, s.runs, s.failures, report.stopping));
        m_rows.push_back(std::move(r));
    }
    endResetModel();
}

void AdaptiveStopsModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

int AdaptiveStopsModel::rowOf(size_t opIndex, const QString& target) const
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].opIndex == opIndex && m_rows[i].target == target) return int(i);
    return -1;
}

std::optional<StoppedBy> AdaptiveStopsModel::stoppedByOf(size_t opIndex, const QString& target) const
{
    const int row = rowOf(opIndex, target);
    return row < 0 ? std::nullopt : std::optional(m_rows[size_t(row)].stoppedBy);
}

quint64 AdaptiveStopsModel::runsOf(size_t opIndex, const QString& target) const
{
    const int row = rowOf(opIndex, target);
    return row < 0 ? 0 : m_rows[size_t(row)].runs;
}

QString AdaptiveStopsModel::rulesOutOf(size_t opIndex, const QString& target) const
{
    const int row = rowOf(opIndex, target);
    return row < 0 ? QString() : m_rows[size_t(row)].rulesOut;
}

int AdaptiveStopsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int AdaptiveStopsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AdaptiveStopsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || size_t(index.row()) >= m_rows.size()) return {};
    const Row& r = m_rows[size_t(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case Op:
                return QStringLiteral("#%1 %2").arg(r.opIndex).arg(r.op);
            case Target:
                return r.target;
            case Runs:
                return QString::number(r.runs);
            case StoppedByColumn:
                return QString::fromStdString(nameOf(r.stoppedBy));
            case RulesOut:
                return r.rulesOut;
            default:
                return {};
        }
    }
    // A failure is the defect reproduced; every other stop is clean runs.
    if (role == Qt::ForegroundRole && index.column() == StoppedByColumn)
        return QBrush(PlotStyle::verdictColor(r.failures ? Verdict::Persistent : Verdict::Healthy));
    if (role == Qt::ToolTipRole) {
        QString tip = QStringLiteral("#%1 %2").arg(r.opIndex).arg(r.op);
        if (!r.name.isEmpty()) tip += QStringLiteral(" (%1)").arg(r.name);
        return tip + tr(" on %1: %2").arg(r.target, r.rulesOut);
    }
    if (role == Qt::TextAlignmentRole && index.column() == Runs)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant AdaptiveStopsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) {
        static const char* names[] = {"Op", "Target", "Runs", "Stopped by", "What it rules out"};
        return tr(names[section]);
    }
    if (role == Qt::ToolTipRole) {
        static const char* tips[] = {
            "The op (index and kind)", "The replay target", "Runs done of this op on this target",
            "failure: a run failed; rate: the clean runs ruled the rate out; budget: the time ran out first; "
            "cancelled",
            "What ended the runs and what the clean ones rule out, as `faultline replay` prints it"};
        return tr(tips[section]);
    }
    return {};
}

}  // namespace faultline::views
