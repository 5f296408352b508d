#pragma once
// The workbench's colours and the look of every QCustomPlot, taken from the application
// palette so plots follow the light/dark setting. Colours are chosen to read on both.
#include <qcustomplot.h>
#include <QColor>
#include <QString>
#include <optional>
#include <vector>

#include "core/replay/ReplayVocabulary.h"

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
    // Replay verdicts; nullopt (queued, running, failed, no runs): the disabled text colour.
    static QColor verdictColor(std::optional<faultline::Verdict> verdict);

    // Heatmap magnitudes (dark purple -> red -> pale yellow; readable on both themes).
    static QCPColorGradient errorGradient();
    // Categorical colours for n categories (SMs), never two alike: the first
    // kCategoricalPaletteSize are a fixed palette of distinct colours (Kelly's maximum-contrast
    // set); past that, category i takes hue i x 0.381966 turns (the golden angle: hues never
    // repeat and neighbours differ most) at one of three saturation/value steps (i mod 3); one
    // within 2 of an earlier colour in every channel is darkened until it is not.
    static constexpr size_t kCategoricalPaletteSize = 20;
    static std::vector<QColor> categoricalColours(size_t n);
    // A gradient whose levels 0..n-1 are categoricalColours(n) exactly (data range [0, n-1]).
    static QCPColorGradient categoricalGradient(size_t n);
    // The outline of anomaly regions on the heatmap (apart from every gradient colour).
    static QColor regionOutlineColor();
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
