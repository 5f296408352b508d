#pragma once
// The workbench's colours and the look of every QCustomPlot, taken from the application
// palette so plots follow the light/dark setting. Colours are chosen to read on both.
#include <qcustomplot.h>
#include <QColor>
#include <QString>

namespace faultline::views {

class PlotStyle {
public:
    static bool isDark();
    static QColor divergentColor();       // rows, bars beyond tolerance
    static QColor firstDivergentColor();  // the first divergent op: the story's anchor
    static QColor warningColor();         // errors, unpaired, skipped
    static QColor okColor();              // healthy
    static QColor neutralBarColor();      // bars without a verdict
    static QColor selectionColor();       // the selected entry in model-wide charts
    // Bit fields: sign | exponent | mantissa | value (integers).
    static QColor fieldColor(const QString& field);
    // Replay verdicts: healthy | transient | persistent | device-specific | running | cancelled.
    static QColor verdictColor(const QString& verdict);

    // Heatmap magnitudes (dark purple -> red -> pale yellow; readable on both themes).
    static QCPColorGradient errorGradient();
    // Categorical-ish hues for SM ids.
    static QCPColorGradient smGradient();
    // Cells with nothing to show (no mismatch).
    static QColor emptyCellColor();

    // Applies the palette's colours to the plot's background, axes, grids and legend.
    static void apply(QCustomPlot* plot);
    static void styleAxis(QCPAxis* axis);
    static void styleLegend(QCPLegend* legend);
    // Moves the plot's legend out of the axis rect into a one-line row at layout row `row`
    // (under a title in row 0), so it never covers data.
    static void placeLegendInRow(QCustomPlot* plot, int row);
    // A bold title font a little smaller than the widget font (titles must fit narrow plots).
    static QFont titleFont(const QFont& base);
};

}  // namespace faultline::views
