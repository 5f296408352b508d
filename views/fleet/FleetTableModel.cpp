#include "views/fleet/FleetTableModel.h"

#include <QBrush>
#include <QColor>
#include <map>

#include "core/replay/Statistics.h"

namespace faultline::views {
namespace {

QString text(const nlohmann::json& j, const char* key)
{
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    return QString::fromStdString(it->is_string() ? it->get<std::string>() : it->dump());
}

QString percent(double v)
{
    return QString::fromStdString(percentText(v));
}

}  // namespace

FleetTableModel::FleetTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void FleetTableModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

void FleetTableModel::setReport(const nlohmann::json& report)
{
    beginResetModel();
    m_rows.clear();
    const auto fleet = report.find("fleet");
    if (fleet != report.end() && fleet->is_object()) {
        const auto gpus = fleet->find("gpus");
        if (gpus != fleet->end() && gpus->is_array())
            for (const nlohmann::json& g : *gpus) {
                if (!g.is_object()) continue;
                Row r;
                r.gpu = text(g, "gpu");
                r.host = text(g, "host");
                r.task = text(g, "task");
                r.target = text(g, "target");
                r.uuid = text(g, "uuid");
                r.serial = text(g, "serial");
                r.verdict = text(g, "verdict");
                r.judged = parseVerdict(r.verdict.toStdString());
                r.file = text(g, "file");
                r.runs = g.value("runs", uint64_t(0));
                r.failures = g.value("failures", uint64_t(0));
                r.rate = g.value("rate", 0.0);
                const auto ci = g.find("ci");
                if (ci != g.end() && ci->is_array() && ci->size() == 2 && (*ci)[0].is_number() &&
                    (*ci)[1].is_number()) {
                    r.low = (*ci)[0].get<double>();
                    r.high = (*ci)[1].get<double>();
                }
                const auto rulesOut = g.find("rules_out");
                if (rulesOut != g.end() && rulesOut->is_object() && rulesOut->contains("rate_below") &&
                    (*rulesOut)["rate_below"].is_number())
                    r.rulesOutBelow = (*rulesOut)["rate_below"].get<double>();
                const auto ops = g.find("outlier_ops");
                if (ops != g.end() && ops->is_array())
                    for (const nlohmann::json& op : *ops) r.outlierOps << QString::fromStdString(op.dump());
                m_rows.push_back(std::move(r));
            }
    }
    addCampaigns(report);
    endResetModel();
}

void FleetTableModel::addCampaigns(const nlohmann::json& report)
{
    std::map<QString, size_t> rowOf;
    for (size_t i = 0; i < m_rows.size(); ++i) rowOf[m_rows[i].gpu] = i;
    if (const auto targets = report.find("targets"); targets != report.end() && targets->is_array())
        for (const nlohmann::json& t : *targets)
            if (t.is_object())
                if (const auto r = rowOf.find(text(t, "target")); r != rowOf.end())
                    m_rows[r->second].explanation = text(t, "explanation");
    // The vote each outlier lost, per op.
    std::map<std::pair<QString, QString>, QString> votes;
    if (const auto fleet = report.find("fleet"); fleet != report.end() && fleet->is_object())
        if (const auto outliers = fleet->find("outliers"); outliers != fleet->end() && outliers->is_array())
            for (const nlohmann::json& o : *outliers) {
                if (!o.is_object() || !o.contains("ops") || !o["ops"].is_array()) continue;
                for (const nlohmann::json& op : o["ops"])
                    if (op.is_object())
                        votes[{text(o, "gpu"), text(op, "op")}] =
                            tr("fleet outlier: %1 of %2 peers agree on other bits")
                                .arg(op.value("agreeing", 0))
                                .arg(op.value("peers", 0));
            }
    const auto ops = report.find("ops");
    if (ops == report.end() || !ops->is_array()) return;
    for (const nlohmann::json& op : *ops) {
        if (!op.is_object()) continue;
        const auto targets = op.find("targets");
        if (targets == op.end() || !targets->is_object()) continue;
        const QString head = tr("op %1 %2 (%3)").arg(text(op, "index"), text(op, "op"), text(op, "name"));
        for (const auto& [label, st] : targets->items()) {
            const auto r = rowOf.find(QString::fromStdString(label));
            if (r == rowOf.end() || !st.is_object()) continue;
            double low = 0, high = 0;
            if (const auto ci = st.find("ci"); ci != st.end() && ci->is_array() && ci->size() == 2 &&
                                               (*ci)[0].is_number() && (*ci)[1].is_number()) {
                low = (*ci)[0].get<double>();
                high = (*ci)[1].get<double>();
            }
            QString line = tr("%1: %2/%3 failed (%4) [%5, %6], max %7 ulp")
                               .arg(head)
                               .arg(st.value("failures", uint64_t(0)))
                               .arg(st.value("runs", uint64_t(0)))
                               .arg(percent(st.value("rate", 0.0)), percent(low), percent(high))
                               .arg(st.value("max_ulp", uint64_t(0)));
            if (const auto v = votes.find({m_rows[r->second].gpu, text(op, "index")}); v != votes.end())
                line += "; " + v->second;
            m_rows[r->second].opLines << line;
        }
    }
}

int FleetTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int FleetTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FleetTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_rows.size())) return {};
    const Row& r = m_rows[size_t(index.row())];
    const bool problem = r.judged != faultline::Verdict::Healthy || !r.outlierOps.isEmpty();
    if (role == ProblemRole) return problem;
    if (role == Qt::ToolTipRole) return r.gpu + (r.file.isEmpty() ? QString() : "\n" + r.file);
    if (role == Qt::ForegroundRole && index.column() == Verdict && problem)
        return QBrush(QColor(0xc6, 0x28, 0x28));
    if (role == SortRole) {
        switch (index.column()) {
            case Task: {
                bool ok = false;
                const int t = r.task.toInt(&ok);
                return ok ? QVariant(t) : QVariant(r.task);
            }
            case Failures:
                return r.rate;
            case Interval:
                return r.high;
            case OutlierOps:
                return int(r.outlierOps.size());
            default:
                break;
        }
    }
    if (role != Qt::DisplayRole && role != SortRole) return {};
    switch (index.column()) {
        case Host:
            return r.host;
        case Task:
            return r.task;
        case Gpu:
            return r.target;
        case Uuid:
            return r.uuid;
        case Serial:
            return r.serial;
        case Verdict:
            return r.verdict;
        case Failures:
            return QString("%1/%2 (%3)").arg(r.failures).arg(r.runs).arg(percent(r.rate));
        case Interval:  // a clean GPU: what its runs rule out, as every clean verdict reads
            if (r.rulesOutBelow)
                return QString::fromStdString("< " + rateBoundText(*r.rulesOutBelow) + " (95%)");
            return "[" + percent(r.low) + ", " + percent(r.high) + "]";
        case OutlierOps:
            return r.outlierOps.join(", ");
        default:
            return {};
    }
}

QVariant FleetTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[ColumnCount] = {"Host",    "Task",     "GPU",          "UUID",       "Serial",
                                             "Verdict", "Failures", "95% interval", "Outlier ops"};
    return section >= 0 && section < ColumnCount ? QVariant(QString(names[section])) : QVariant();
}

}  // namespace faultline::views
