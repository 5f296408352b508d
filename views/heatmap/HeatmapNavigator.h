#pragma once
// How the heatmap is moved around, on its QCustomPlot: the wheel zooms about the element under
// the cursor (it stays under the cursor, whatever the layout does next), Shift+drag draws a box
// to zoom into, keys zoom (+ / -), fit (0) and pan (arrows); W, N and P are handed to the view
// as "worst region", "next region" and "previous region". Drag pans (QCustomPlot's own).
#include <QObject>
#include <QPointF>
#include <optional>

class QCustomPlot;
class QWheelEvent;

namespace faultline::views {

class HeatmapNavigator : public QObject {
    Q_OBJECT
public:
    // Zoom factor of one wheel notch (120 units of angle) and of one + / - key press.
    static constexpr double kNotchFactor = 0.85;
    static constexpr double kKeyFactor = 0.5;
    // The fewest elements a zoom leaves visible along an axis.
    static constexpr double kMinVisible = 4.0;

    explicit HeatmapNavigator(QCustomPlot* plot);

    // The extent (rows, cols) of what is shown, for limits; 0 x 0 when nothing is.
    void setExtent(double rows, double cols);
    // Scales both ranges by `factor` (< 1 zooms in) about the element at plot pixel `pixel`,
    // which keeps its pixel.
    void zoomAbout(double factor, QPointF pixel);
    // Scales both ranges by `factor` about their centres (keys).
    void zoomCentre(double factor);
    // Ends the last wheel's anchor (the view was moved another way).
    void forgetAnchor() { m_anchor.reset(); }
    // Moves the view by the given fractions of its size (positive: right / down).
    void pan(double dx, double dy);

signals:
    void fitRequested();
    void worstRequested();
    void nextRequested();
    void previousRequested();
    // The ranges moved inside a replot, after its layout and before it draws (the wheel's
    // anchor kept): the view re-bins now so that this replot draws the right cells.
    void rangesMovedInReplot();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void onWheelOnUi(QWheelEvent* event);
    void keepAnchorOnUi();

    QCustomPlot* m_plot = nullptr;
    double m_rows = 0, m_cols = 0;
    // The last wheel's pixel and the element coordinates under it, kept there through the
    // layout changes that follow (tick labels widening, text under the plot wrapping).
    struct Anchor {
        QPointF pixel;
        double col = 0, row = 0;
    };
    std::optional<Anchor> m_anchor;
    bool m_adjusting = false;
};

}  // namespace faultline::views
