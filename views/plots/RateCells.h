#pragma once
// Table cells shaded by a rate, shared by the figures the CLI writes (BenchmarkPlot,
// DetectionFloorPlot): white (0) to dark blue (1), the text white on dark cells.
#include <QColor>
#include <QPainter>
#include <QRect>
#include <QString>

namespace faultline::views {

QColor rateColour(double rate);
void drawRateCell(QPainter& p, const QRect& r, double rate, const QString& text);

}  // namespace faultline::views
