#include "views/fleet/LinkMatrixModel.h"

#include <QBrush>
#include <QFont>
#include <cmath>

#include "views/plots/PlotStyle.h"
#include "views/shell/ViewText.h"

namespace faultline::views {
QString byteText(uint64_t bytes)
{
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    return u == 0 ? QStringLiteral("%1 B").arg(bytes)
                  : QStringLiteral("%1 %2").arg(v, 0, 'f', v < 10 ? 1 : 0).arg(QLatin1String(units[u]));
}

QString compactByteText(uint64_t bytes)
{
    const char* units[] = {"", "K", "M", "G", "T"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1000 && u < 4) {
        v /= 1024;
        ++u;
    }
    return QStringLiteral("%1%2").arg(v, 0, 'f', u > 0 && v < 10 ? 1 : 0).arg(QLatin1String(units[u]));
}

void LinkMatrixModel::setMatrix(std::shared_ptr<const LinkMatrix> matrix)
{
    beginResetModel();
    m_matrix = std::move(matrix);
    endResetModel();
}

void LinkMatrixModel::setMetric(Metric metric)
{
    if (metric == m_metric) return;
    m_metric = metric;
    if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
}

int LinkMatrixModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_matrix ? 0 : int(m_matrix->size());
}

int LinkMatrixModel::columnCount(const QModelIndex& parent) const
{
    return rowCount(parent);
}

QColor LinkMatrixModel::colourOf(double value) const
{
    QCPColorGradient g = PlotStyle::errorGradient();  // color() is not const
    if (m_metric == Metric::CorruptedBytes) {
        const double hi = std::max(2.0, double(m_matrix ? m_matrix->maxCorruptedBytes() : 2));
        return QColor::fromRgb(g.color(std::max(1.0, value), QCPRange(1.0, hi), true));
    }
    const double hi = m_matrix && m_matrix->maxGbps() > 0 ? m_matrix->maxGbps() : 1.0;
    return QColor::fromRgb(g.color(value, QCPRange(0.0, hi), false));
}

QVariant LinkMatrixModel::data(const QModelIndex& index, int role) const
{
    if (!m_matrix || !index.isValid()) return {};
    const size_t src = size_t(index.row()), dst = size_t(index.column());
    const LinkCell& c = m_matrix->at(src, dst);
    const bool diagonal = src == dst;
    switch (role) {
        case Qt::DisplayRole:
            if (diagonal) return m_matrix->faultyGpus[src] ? QStringLiteral("✗") : QString();
            if (!c.tested()) return {};
            if (m_metric == Metric::Bandwidth) return QString::number(c.gbps(), 'g', 2);
            return compactByteText(c.corruptedBytes);
        case Qt::ToolTipRole:
            return describe(src, dst);
        case Qt::BackgroundRole:
            if (diagonal || !c.tested()) return {};
            if (m_metric == Metric::CorruptedBytes && c.corruptedBytes == 0)
                return QBrush(PlotStyle::okColor().lighter(150));
            return QBrush(colourOf(m_metric == Metric::Bandwidth ? c.gbps() : double(c.corruptedBytes)));
        case ValueRole:
            if (diagonal || !c.tested()) return {};
            return m_metric == Metric::Bandwidth ? c.gbps() : double(c.corruptedBytes);
        case FaultyLinkRole:
            return c.faultyLink;
        case FaultyGpuRole:
            return diagonal && m_matrix->faultyGpus[src];
        case FailedRole:
            return c.failures > 0;
        case Qt::TextAlignmentRole:
            return int(Qt::AlignCenter);
        default:
            return {};
    }
}

QVariant LinkMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (!m_matrix || section < 0 || size_t(section) >= m_matrix->size()) return {};
    const bool faulty = m_matrix->faultyGpus[size_t(section)];
    switch (role) {
        case Qt::DisplayRole:
            return faulty ? QStringLiteral("%1 ✗").arg(section) : QString::number(section);
        case Qt::ToolTipRole: {
            QString t = QStringLiteral("rank %1 (%2): %3")
                            .arg(section)
                            .arg(orientation == Qt::Vertical ? tr("source") : tr("destination"))
                            .arg(qs(m_matrix->ranks[size_t(section)]));
            if (!m_matrix->descriptions[size_t(section)].empty())
                t += QStringLiteral("\n") + qs(m_matrix->descriptions[size_t(section)]);
            if (faulty) t += QStringLiteral("\n") + tr("judged a faulty GPU");
            return t;
        }
        case Qt::ForegroundRole:
            if (faulty) return QBrush(PlotStyle::divergentColor());
            return {};
        case Qt::FontRole:
            if (faulty) {
                QFont f;
                f.setBold(true);
                return f;
            }
            return {};
        default:
            return {};
    }
}

QString LinkMatrixModel::describe(size_t src, size_t dst) const
{
    if (!m_matrix || src >= m_matrix->size() || dst >= m_matrix->size()) return {};
    const LinkCell& c = m_matrix->at(src, dst);
    if (src == dst)
        return tr("rank %1: %2%3")
            .arg(src)
            .arg(qs(m_matrix->ranks[src]))
            .arg(m_matrix->faultyGpus[src] ? tr(" — judged a faulty GPU") : QString());
    QString t = tr("link %1 → %2 (%3 → %4)")
                    .arg(src)
                    .arg(dst)
                    .arg(qs(m_matrix->ranks[src]), qs(m_matrix->ranks[dst]));
    if (!c.tested()) return t + QStringLiteral("\n") + tr("not tested");
    t += QStringLiteral("\n") + tr("%1 of %2 transfers failed, %3 corrupted, %4 GB/s")
                                    .arg(c.failures)
                                    .arg(c.transfers)
                                    .arg(byteText(c.corruptedBytes))
                                    .arg(c.gbps(), 0, 'f', 2);
    if (!c.signature.empty()) t += QStringLiteral("\n") + tr("signature: %1").arg(qs(c.signature));
    if (c.faultyLink)
        t += QStringLiteral("\n") + tr("judged a faulty link (both GPUs pass elsewhere)");
    else if (c.failures && (m_matrix->faultyGpus[src] || m_matrix->faultyGpus[dst]))
        t += QStringLiteral("\n") + tr("failures explained by a faulty GPU");
    if (c.hasBlock())
        t += QStringLiteral("\n") + tr("block of repetition %1 stored (%2%3): select to compare")
                                        .arg(c.blockRep)
                                        .arg(byteText(c.blockBytes))
                                        .arg(c.blockBytes < c.blockTotalBytes
                                                 ? tr(" of %1").arg(byteText(c.blockTotalBytes))
                                                 : QString());
    else if (c.failures)
        t += QStringLiteral("\n") + tr("no block stored");
    return t;
}

}  // namespace faultline::views
