#include "views/replay/ReplayResultsModel.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <algorithm>

#include "views/plots/PlotStyle.h"

namespace faultline::views {
namespace {

QString percent(double x)
{
    return QStringLiteral("%1%").arg(100.0 * x, 0, 'f', x > 0 && x < 0.1 ? 1 : 0);
}

// "76–100%", "0–14%", "0.2–5.1%": the interval in one short cell.
QString intervalText(const RateInterval& r)
{
    QString low = percent(r.low);
    low.chop(1);
    return QStringLiteral("%1–%2").arg(low, percent(r.high));
}

}  // namespace

ReplayResultsModel::ReplayResultsModel(QObject* parent) : QAbstractTableModel(parent) {}

void ReplayResultsModel::begin(const QStringList& targets, quint64 runsPerTarget)
{
    beginResetModel();
    m_rows.clear();
    m_clock.start();
    for (const QString& t : targets) {
        Row r;
        r.target = t;
        r.planned = runsPerTarget;
        r.verdict = QStringLiteral("running");
        r.inFlightSince = runsPerTarget ? 0 : -1;
        m_rows.push_back(r);
    }
    endResetModel();
}

void ReplayResultsModel::tick()
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].inFlightSince >= 0) emit dataChanged(index(int(i), Progress), index(int(i), Progress));
}

qint64 ReplayResultsModel::inFlightMs(const QString& target) const
{
    const int row = rowOf(target);
    if (row < 0 || m_rows[size_t(row)].inFlightSince < 0) return -1;
    return m_clock.elapsed() - m_rows[size_t(row)].inFlightSince;
}

QString ReplayResultsModel::progressText(const Row& r) const
{
    const QString done = QStringLiteral("%1 / %2").arg(r.runs).arg(r.planned);
    if (r.inFlightSince < 0 || !m_clock.isValid()) return done;
    const double seconds = double(m_clock.elapsed() - r.inFlightSince) / 1000.0;
    return tr("%1 · run %2 s").arg(done).arg(seconds, 0, 'f', 1);
}

void ReplayResultsModel::recordRun(const QString& target, RunOutcome outcome)
{
    const int row = rowOf(target);
    if (row < 0) return;
    Row& r = m_rows[size_t(row)];
    ++r.runs;
    if (outcome != RunOutcome::Ok) ++r.failures;
    if (outcome == RunOutcome::Hang) ++r.hangs;
    if (outcome == RunOutcome::Crash) ++r.crashes;
    r.rate = wilsonInterval(r.failures, r.runs);
    r.verdict = QStringLiteral("running");
    r.inFlightSince = r.runs < r.planned && m_clock.isValid() ? m_clock.elapsed() : -1;
    QStringList d;
    if (r.hangs) d << tr("%n hang(s)", nullptr, int(r.hangs));
    if (r.crashes) d << tr("%n crash(es)", nullptr, int(r.crashes));
    r.details = d.join(QStringLiteral(", "));
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void ReplayResultsModel::finish(const CampaignReport& report)
{
    beginResetModel();
    for (const TargetSummary& t : report.targets) {
        const QString name = QString::fromStdString(t.target);
        int row = rowOf(name);
        if (row < 0) {
            Row added;
            added.target = name;
            added.planned = t.runs;
            m_rows.push_back(added);
            row = int(m_rows.size()) - 1;
        }
        Row& r = m_rows[size_t(row)];
        r.description = QString::fromStdString(t.description);
        r.runs = t.runs;
        r.failures = t.failures;
        r.rate = t.rate;
        r.summarised = true;
        r.inFlightSince = -1;
        r.partial = report.cancelled;
        r.judged = t.runs ? std::optional(t.verdict) : std::nullopt;
        r.verdict = r.judged ? QString::fromStdString(nameOf(*r.judged)) : QStringLiteral("no runs");
        r.details = QString::fromStdString(t.explanation);
        if (report.cancelled)
            r.details = tr("cancelled: %1 of %2 runs done; ").arg(t.runs).arg(r.planned) + r.details;
    }
    endResetModel();
}

void ReplayResultsModel::fail(const QString& message)
{
    beginResetModel();
    for (Row& r : m_rows) {
        r.inFlightSince = -1;
        r.verdict = QStringLiteral("failed");
        r.judged.reset();
        r.details = message;
    }
    endResetModel();
}

void ReplayResultsModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

int ReplayResultsModel::rowOf(const QString& target) const
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].target == target) return int(i);
    return -1;
}

QString ReplayResultsModel::verdictOf(const QString& target) const
{
    const int row = rowOf(target);
    return row < 0 ? QString() : m_rows[size_t(row)].verdict;
}

quint64 ReplayResultsModel::runsOf(const QString& target) const
{
    const int row = rowOf(target);
    return row < 0 ? 0 : m_rows[size_t(row)].runs;
}

quint64 ReplayResultsModel::failuresOf(const QString& target) const
{
    const int row = rowOf(target);
    return row < 0 ? 0 : m_rows[size_t(row)].failures;
}

int ReplayResultsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ReplayResultsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ReplayResultsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || size_t(index.row()) >= m_rows.size()) return {};
    const Row& r = m_rows[size_t(index.row())];
    const double fraction = r.planned ? std::min(1.0, double(r.runs) / double(r.planned)) : 0.0;
    if (role == FractionRole && index.column() == Progress) return fraction;
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case Target:
                return r.target;
            case Progress:
                return progressText(r);
            case Runs:
                return QString::number(r.runs);
            case Failures:
                return QString::number(r.failures);
            case Rate:
                return r.runs ? QStringLiteral("%1/%2 (%3)")
                                    .arg(r.failures)
                                    .arg(r.runs)
                                    .arg(percent(r.rate.rate))
                              : QString();
            case Interval:
                // A clean target: the rate it rules out, not an interval from 0.
                if (r.runs && r.failures == 0)
                    return QStringLiteral("< %1").arg(
                        QString::fromStdString(rateBoundText(cleanRateBound(r.runs))));
                return r.runs ? intervalText(r.rate) : QString();
            case Verdict:
                return r.partial ? tr("%1 (partial)").arg(r.verdict) : r.verdict;
            case Details:
                return r.details;
            default:
                return {};
        }
    }
    if (role == Qt::ForegroundRole && index.column() == Verdict)
        return QBrush(PlotStyle::verdictColor(r.judged));
    if (role == Qt::BackgroundRole && index.column() == Verdict && r.summarised) {
        QColor tint = PlotStyle::verdictColor(r.judged);
        tint.setAlpha(40);
        return QBrush(tint);
    }
    if (role == Qt::FontRole && index.column() == Verdict && r.summarised) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role == Qt::ToolTipRole && index.column() == Rate && r.runs)
        return tr("%1 of %2 runs failed (%3)").arg(r.failures).arg(r.runs).arg(percent(r.rate.rate));
    if (role == Qt::ToolTipRole && index.column() == Interval && r.runs && r.failures == 0)
        return QString::fromStdString(cleanRateText(r.runs)) + tr(" (one-sided, exact)");
    if (role == Qt::ToolTipRole && index.column() == Interval && r.runs)
        return tr("95% Wilson score interval of the failure rate: %1 to %2")
            .arg(percent(r.rate.low), percent(r.rate.high));
    if (role == Qt::ToolTipRole) {
        QString tip = r.target;
        if (!r.description.isEmpty()) tip += QStringLiteral("\n") + r.description;
        if (!r.details.isEmpty()) tip += QStringLiteral("\n") + r.details;
        return tip;
    }
    if (role == Qt::TextAlignmentRole && (index.column() == Runs || index.column() == Failures ||
                                          index.column() == Rate || index.column() == Interval))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant ReplayResultsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) {
        static const char* names[] = {"Target",   "Verdict", "Failed",   "95% CI",
                                      "Progress", "Runs",    "Failures", "Reason"};
        return tr(names[section]);
    }
    if (role == Qt::ToolTipRole) {
        static const char* tips[] = {
            "The replay target (its full spec in the row's tooltip)",
            "healthy | transient | persistent | device-specific",
            "Failed runs / runs (failure rate)",
            "95% Wilson score interval of the failure rate",
            "Runs done / planned, and how long the run in flight has been running",
            "Runs done",
            "Runs that did not match the golden model (mismatch, hang, crash, error)",
            "Why the verdict: its explanation, hangs and crashes"};
        return tr(tips[section]);
    }
    return {};
}

}  // namespace faultline::views
