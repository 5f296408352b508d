#include "views/plots/PlotStyle.h"

#include <QApplication>
#include <QPalette>
#include <algorithm>
#include <cmath>

namespace faultline::views {

bool PlotStyle::isDark()
{
    const QColor window = QApplication::palette().color(QPalette::Window);
    return window.lightness() < 128;
}

QColor PlotStyle::divergentColor()
{
    return isDark() ? QColor(255, 107, 90) : QColor(205, 45, 35);
}

QColor PlotStyle::firstDivergentColor()
{
    return isDark() ? QColor(255, 200, 60) : QColor(230, 120, 0);
}

QColor PlotStyle::warningColor()
{
    return isDark() ? QColor(240, 170, 80) : QColor(180, 100, 0);
}

QColor PlotStyle::okColor()
{
    return isDark() ? QColor(110, 200, 120) : QColor(40, 140, 60);
}

QColor PlotStyle::neutralBarColor()
{
    return isDark() ? QColor(110, 150, 210) : QColor(70, 110, 180);
}

QColor PlotStyle::selectionColor()
{
    return isDark() ? QColor(120, 200, 255) : QColor(20, 110, 200);
}

QColor PlotStyle::fieldColor(const QString& field)
{
    if (field == QLatin1String("sign")) return isDark() ? QColor(255, 110, 110) : QColor(200, 40, 40);
    if (field == QLatin1String("exponent")) return isDark() ? QColor(255, 190, 70) : QColor(220, 140, 0);
    if (field == QLatin1String("mantissa")) return isDark() ? QColor(100, 170, 255) : QColor(40, 100, 200);
    return neutralBarColor();
}

QColor PlotStyle::verdictColor(std::optional<faultline::Verdict> verdict)
{
    switch (verdict.value_or(faultline::Verdict::NoVerdict)) {
        case faultline::Verdict::Healthy:
            return okColor();
        case faultline::Verdict::Transient:
            return warningColor();
        case faultline::Verdict::Persistent:
        case faultline::Verdict::DeviceSpecific:
            return divergentColor();
        case faultline::Verdict::NoVerdict:
            break;
    }
    return QApplication::palette().color(QPalette::Disabled, QPalette::Text);
}

QCPColorGradient PlotStyle::errorGradient()
{
    QCPColorGradient g;
    g.clearColorStops();
    g.setColorStopAt(0.0, isDark() ? QColor(85, 45, 160) : QColor(40, 12, 90));
    g.setColorStopAt(0.3, QColor(120, 28, 109));
    g.setColorStopAt(0.55, QColor(200, 50, 80));
    g.setColorStopAt(0.8, QColor(245, 125, 21));
    g.setColorStopAt(1.0, QColor(252, 240, 150));
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(emptyCellColor());
    g.setLevelCount(256);
    return g;
}

std::vector<QColor> PlotStyle::categoricalColours(size_t n)
{
    static const QRgb kKelly[kCategoricalPaletteSize] = {
        0xF3C300, 0x875692, 0xF38400, 0xA1CAF1, 0xBE0032, 0xC2B280, 0x848482, 0x008856, 0xE68FAC, 0x0067A5,
        0xF99379, 0x604E97, 0xF6A600, 0xB3446C, 0xDCD300, 0x882D17, 0x8DB600, 0x654522, 0xE25822, 0x2B3D26};
    std::vector<QColor> out;
    out.reserve(n);
    if (n <= kCategoricalPaletteSize) {
        for (size_t i = 0; i < n; ++i) out.emplace_back(kKelly[i]);
        return out;
    }
    // Golden-angle hues at three saturation/value steps; one within 2 of an earlier colour in
    // every channel (drawing may round a channel by 1) is darkened 3/255 at a time until apart.
    static const double kSat[3] = {0.78, 1.0, 0.55};
    static const double kVal[3] = {0.92, 0.69, 0.84};
    auto near = [&out](const QColor& c) {
        for (const QColor& u : out)
            if (std::abs(u.red() - c.red()) <= 2 && std::abs(u.green() - c.green()) <= 2 &&
                std::abs(u.blue() - c.blue()) <= 2)
                return true;
        return false;
    };
    for (size_t i = 0; i < n; ++i) {
        const double hue = std::fmod(double(i) * 0.3819660112501051, 1.0);
        QColor c;
        for (int darker = 0; darker < 60; ++darker) {
            c = QColor::fromHsvF(float(hue), float(kSat[i % 3]),
                                 float(std::max(0.2, kVal[i % 3] - 3.0 * darker / 255.0)));
            if (!near(c)) break;
        }
        out.push_back(c);
    }
    return out;
}

QCPColorGradient PlotStyle::categoricalGradient(size_t n)
{
    const std::vector<QColor> colours = categoricalColours(std::max<size_t>(n, 1));
    QCPColorGradient g;
    g.clearColorStops();
    const size_t levels = std::max<size_t>(colours.size(), 2);
    // Stop i sits just below level i's position, so each level takes its stop's colour exactly
    // (the gradient's interpolation weight toward the next stop is ~0, never ~1).
    for (size_t i = 0; i < levels; ++i)
        g.setColorStopAt(std::max(0.0, double(i) / double(levels - 1) - 1e-9),
                         colours[std::min(i, colours.size() - 1)]);
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setLevelCount(int(levels));
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(emptyCellColor());
    return g;
}

QColor PlotStyle::regionOutlineColor()
{
    return isDark() ? QColor(80, 220, 240) : QColor(0, 150, 190);
}

QColor PlotStyle::emptyCellColor()
{
    return isDark() ? QColor(36, 40, 46) : QColor(236, 238, 242);
}

void PlotStyle::styleAxis(QCPAxis* axis)
{
    const QPalette pal = QApplication::palette();
    const QColor text = pal.color(QPalette::Text);
    const QColor line = pal.color(QPalette::Mid);
    QColor grid = isDark() ? QColor(70, 76, 86) : QColor(215, 218, 224);
    axis->setBasePen(QPen(line));
    axis->setTickPen(QPen(line));
    axis->setSubTickPen(QPen(line));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
    axis->grid()->setSubGridVisible(false);
    axis->grid()->setZeroLinePen(Qt::NoPen);
}

void PlotStyle::styleLegend(QCPLegend* legend)
{
    const QPalette pal = QApplication::palette();
    legend->setBrush(pal.color(QPalette::Base));
    legend->setTextColor(pal.color(QPalette::Text));
}

void PlotStyle::placeLegendInRow(QCustomPlot* plot, int row)
{
    QCPLegend* legend = plot->legend;
    plot->axisRect()->insetLayout()->take(legend);
    plot->axisRect()->insetLayout()->simplify();
    plot->plotLayout()->insertRow(row);
    auto* holder = new QCPLayoutGrid;
    plot->plotLayout()->addElement(row, 0, holder);
    // The legend between two empty cells that take the spare width: a grid's maximum width is
    // its elements', so the legend alone (8 px when empty) would cap the whole column, and with
    // it the axis rect below.
    holder->addElement(0, 1, legend);
    holder->expandTo(1, 3);
    holder->setColumnStretchFactors({1.0, 0.001, 1.0});
    holder->setMargins(QMargins(0, 0, 0, 0));
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setBorderPen(Qt::NoPen);
    legend->setMargins(QMargins(4, 0, 4, 0));
    legend->setRowSpacing(0);
    legend->setColumnSpacing(10);
    legend->setIconSize(14, 10);
    legend->setIconTextPadding(4);
    plot->plotLayout()->setRowStretchFactor(row, 0.001);
    plot->plotLayout()->setRowSpacing(0);
}

QFont PlotStyle::titleFont(const QFont& base)
{
    QFont f = base;
    f.setBold(true);
    if (f.pointSizeF() > 0) f.setPointSizeF(f.pointSizeF() * 0.95);
    return f;
}

void PlotStyle::apply(QCustomPlot* plot)
{
    const QPalette pal = QApplication::palette();
    plot->setBackground(pal.color(QPalette::Base));
    for (int i = 0; i < plot->axisRectCount(); ++i) {
        QCPAxisRect* rect = plot->axisRect(i);
        rect->setBackground(pal.color(QPalette::Base));
        for (QCPAxis* axis : rect->axes()) styleAxis(axis);
    }
    if (plot->legend) styleLegend(plot->legend);
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i)
        if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
            title->setTextColor(pal.color(QPalette::Text));
    plot->setNoAntialiasingOnDrag(true);
}

}  // namespace faultline::views
