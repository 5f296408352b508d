#include "views/heatmap/ElementReadout.h"

#include <QObject>
#include <cmath>

#include "core/compare/CompareJson.h"
#include "core/compare/UlpDistance.h"
#include "views/shell/ViewText.h"

namespace faultline::views {

QStringList elementReadout(const ElementValues& v, uint64_t row, uint64_t col)
{
    QStringList lines;
    if (!v.holds(row, col) || v.suspect.size() != v.held()) return lines;
    const size_t i = v.indexOf(row, col);
    const unsigned bits = bitLayout(v.dtype).totalBits;
    const uint64_t sb = v.suspectBits(i), rb = v.referenceBits(i);
    const double s = v.suspect[i], r = v.reference[i];
    lines << QStringLiteral("%1: %2 (%3)")
                 .arg(v.suspectLabel, numberText(s), QString::fromStdString(bitsToHex(sb, bits)));
    lines << QStringLiteral("%1: %2 (%3)")
                 .arg(v.referenceLabel, numberText(r), QString::fromStdString(bitsToHex(rb, bits)));
    if (sb == rb) {
        lines << QObject::tr("bit-identical · 0 ulp");
        return lines;
    }
    const std::optional<uint64_t> ulp = ulpDistance(v.dtype, sb, rb);
    if (ulp) {
        const double absErr = std::fabs(s - r);
        const QString rel = r != 0 ? numberText(absErr / std::fabs(r)) : QStringLiteral("inf");
        lines << QObject::tr("|error| %1 · rel error %2 · %3 ulp").arg(numberText(absErr), rel).arg(*ulp);
    } else {
        lines << QObject::tr("|error| — · rel error — · no ulp distance (NaN/Inf involved)");
    }
    QStringList flipped;
    for (unsigned b = bits; b-- > 0;)
        if ((sb ^ rb) >> b & 1)
            flipped << QStringLiteral("%1 (%2)").arg(b).arg(
                QString::fromUtf8(bitFieldName(v.dtype, b).data()));
    lines << QObject::tr("differing bits: %1").arg(flipped.join(QStringLiteral(", ")));
    return lines;
}

}  // namespace faultline::views
