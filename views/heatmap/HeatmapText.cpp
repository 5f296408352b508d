#include "views/heatmap/HeatmapText.h"

#include <QObject>
#include <QStringList>
#include <cmath>

#include "core/compare/CompareJson.h"
#include "core/compare/SignatureTileLevel.h"
#include "views/heatmap/ElementReadout.h"
#include "views/shell/ViewText.h"

namespace faultline::views {
namespace {

QString multiIndex(const std::vector<uint64_t>& shape, uint64_t flat)
{
    if (shape.size() <= 2) return {};
    QStringList parts;
    std::vector<uint64_t> idx(shape.size());
    for (size_t k = shape.size(); k-- > 0;) {
        idx[k] = shape[k] ? flat % shape[k] : 0;
        flat = shape[k] ? flat / shape[k] : 0;
    }
    for (uint64_t i : idx) parts << QString::number(i);
    return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
}

QString tileLine(const Divergence& d, int level, uint64_t row, uint64_t col)
{
    const TileLevel& lv = d.tiles.levels()[size_t(level)];
    const uint64_t tileRow = row / lv.tileRows, tileCol = col / lv.tileCols;
    const size_t t = size_t(tileRow * lv.gridCols + tileCol);
    QString s = QObject::tr("Tile (%2, %3) of %4×%5 elements (level %1): ")
                    .arg(level)
                    .arg(tileRow)
                    .arg(tileCol)
                    .arg(lv.tileRows)
                    .arg(lv.tileCols);
    if (lv.mismatches.empty() || lv.mismatches[t] == 0) return s + QObject::tr("no mismatch");
    return s + QObject::tr("%1 mismatches, %2 beyond tolerance, %3 anomalies, max |error| %4")
                   .arg(lv.mismatches[t])
                   .arg(lv.beyond[t])
                   .arg(lv.anomalies[t])
                   .arg(numberText(lv.maxAbsError[t]));
}

}  // namespace

QString heatmapMetricName(HeatmapMetric metric)
{
    switch (metric) {
        case HeatmapMetric::MaxAbsError:
            return QObject::tr("max |error|");
        case HeatmapMetric::Mismatches:
            return QObject::tr("mismatches");
        case HeatmapMetric::Beyond:
            return QObject::tr("beyond tolerance");
    }
    return {};
}

QString describeHeatmapElement(const Divergence& d, uint64_t row, uint64_t col, int gridLevel, bool bySm,
                               const TileSmMap* sm, const QString& smSource, const ElementValues* values)
{
    if (row >= d.rows || col >= d.cols) return {};
    const uint64_t flat = row * d.cols + col;
    QStringList lines;
    QString head = QObject::tr("Element row %1, col %2 (flat %3)").arg(row).arg(col).arg(flat);
    const QString nd = multiIndex(d.shape, flat);
    if (!nd.isEmpty()) head += QObject::tr(", index %1").arg(nd);
    lines << head;
    if (d.tiles.hasCounts()) {
        // Tiles of the size the signature names (its tile level; the finest otherwise), so the
        // hover and the signature speak of the same tiles.
        const int named = int(signatureTileLevel(d));
        lines << tileLine(d, named, row, col);
        if (gridLevel > named && !bySm) lines << tileLine(d, gridLevel, row, col);
    }
    if (sm) lines << QObject::tr("SM %1 (%2)").arg(sm->smOf(row, col)).arg(smSource);
    if (values) lines << elementReadout(*values, row, col);
    return lines.join(QLatin1Char('\n'));
}

QString heatmapInfoText(const Divergence* d, const AnomalyRegions& regions, int regionIndex,
                        const QString& smLine, const QString& valuesNote)
{
    QStringList lines;
    if (d) {
        lines << QObject::tr("%1 of %2 elements beyond %3 · %4 mismatches · %5")
                     .arg(d->beyondTolerance)
                     .arg(d->elements)
                     .arg(d->tolerance == "bound" ? QObject::tr("the op's error bound")
                                                  : QString::fromStdString(d->tolerance))
                     .arg(d->mismatches)
                     .arg(QString::fromStdString(maxErrorText(*d)));
        if (d->mismatches)
            lines << QStringLiteral("%1: %2").arg(
                QString::fromUtf8(signatureKindName(d->signature.kind).data()),
                QString::fromStdString(d->signature.detail));
        if (d->beyondRegion)
            lines << QObject::tr("Beyond-tolerance region: rows [%1, %2) × cols [%3, %4)")
                         .arg(d->beyondRegion->rowBegin)
                         .arg(d->beyondRegion->rowEnd)
                         .arg(d->beyondRegion->colBegin)
                         .arg(d->beyondRegion->colEnd);
    }
    if (!regions.regions.empty()) {
        QString line = QObject::tr("%1 region(s) with %2 (outlined; W zooms to the worst, N / P step)")
                           .arg(regions.found)
                           .arg(QString::fromStdString(regions.counted));
        if (regionIndex >= 0) {
            const AnomalyRegion& r = regions.regions[size_t(regionIndex)];
            line += QObject::tr(" · region %1: rows [%2, %3) × cols [%4, %5), %6 elements, max |error| %7")
                        .arg(regionIndex + 1)
                        .arg(r.box.rowBegin)
                        .arg(r.box.rowEnd)
                        .arg(r.box.colBegin)
                        .arg(r.box.colEnd)
                        .arg(r.count)
                        .arg(numberText(r.maxAbsError));
        }
        lines << line;
    }
    if (!smLine.isEmpty()) lines << smLine;
    if (!valuesNote.isEmpty()) lines << valuesNote;
    return lines.join(QLatin1Char('\n'));
}

}  // namespace faultline::views
