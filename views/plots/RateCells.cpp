#include "views/plots/RateCells.h"

#include <algorithm>

namespace faultline::views {

QColor rateColour(double t)
{
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromRgbF(float(1.0 - 0.85 * t), float(1.0 - 0.65 * t), float(1.0 - 0.25 * t));
}

void drawRateCell(QPainter& p, const QRect& r, double rate, const QString& text)
{
    p.fillRect(r, rateColour(rate));
    p.setPen(QColor(200, 200, 200));
    p.drawRect(r);
    p.setPen(rate > 0.55 ? Qt::white : Qt::black);
    p.drawText(r, Qt::AlignCenter, text);
}

}  // namespace faultline::views
