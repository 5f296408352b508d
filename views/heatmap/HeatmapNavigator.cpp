#include "views/heatmap/HeatmapNavigator.h"

#include <qcustomplot.h>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace faultline::views {
namespace {

// [lo, hi] scaled by `factor` about `at`, no smaller than `minSize`.
QCPRange scaled(const QCPRange& r, double factor, double at, double minSize)
{
    const double size = r.size();
    if (size * factor < minSize) factor = size > 0 ? minSize / size : 1.0;
    return QCPRange(at + (r.lower - at) * factor, at + (r.upper - at) * factor);
}

}  // namespace

HeatmapNavigator::HeatmapNavigator(QCustomPlot* plot) : QObject(plot), m_plot(plot)
{
    m_plot->setFocusPolicy(Qt::StrongFocus);
    m_plot->setSelectionRectMode(QCP::srmNone);
    m_plot->installEventFilter(this);
    connect(m_plot, &QCustomPlot::mouseWheel, this, &HeatmapNavigator::onWheelOnUi);
    connect(m_plot, &QCustomPlot::afterLayout, this, &HeatmapNavigator::keepAnchorOnUi);
    // Any other way of moving the view ends the wheel's anchor.
    auto dropAnchor = [this] {
        if (!m_adjusting) m_anchor.reset();
    };
    connect(m_plot, &QCustomPlot::mousePress, this, dropAnchor);
}

void HeatmapNavigator::setExtent(double rows, double cols)
{
    m_rows = rows;
    m_cols = cols;
    m_anchor.reset();
}

void HeatmapNavigator::zoomAbout(double factor, QPointF pixel)
{
    QCPAxis* x = m_plot->xAxis;
    QCPAxis* y = m_plot->yAxis;
    const double col = x->pixelToCoord(pixel.x()), row = y->pixelToCoord(pixel.y());
    // Zooming out stops at twice the whole tensor.
    const double maxSize = 2.0 * std::max({m_rows, m_cols, kMinVisible});
    if (factor > 1 && x->range().size() >= maxSize && y->range().size() >= maxSize) return;
    m_adjusting = true;
    x->setRange(scaled(x->range(), factor, col, kMinVisible));
    y->setRange(scaled(y->range(), factor, row, kMinVisible));
    m_adjusting = false;
    m_anchor = Anchor{pixel, col, row};
}

void HeatmapNavigator::zoomCentre(double factor)
{
    m_anchor.reset();
    QCPAxis* x = m_plot->xAxis;
    QCPAxis* y = m_plot->yAxis;
    const double maxSize = 2.0 * std::max({m_rows, m_cols, kMinVisible});
    if (factor > 1 && x->range().size() >= maxSize && y->range().size() >= maxSize) return;
    x->setRange(scaled(x->range(), factor, x->range().center(), kMinVisible));
    y->setRange(scaled(y->range(), factor, y->range().center(), kMinVisible));
    m_plot->replot();
}

void HeatmapNavigator::pan(double dx, double dy)
{
    m_anchor.reset();
    QCPAxis* x = m_plot->xAxis;
    QCPAxis* y = m_plot->yAxis;
    x->moveRange(dx * x->range().size());
    // Rows grow downwards (the axis is reversed): a positive dy shows lower rows.
    y->moveRange(dy * y->range().size());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapNavigator::onWheelOnUi(QWheelEvent* event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) return;
    zoomAbout(std::pow(kNotchFactor, steps), event->position());
    m_plot->replot();
}

void HeatmapNavigator::keepAnchorOnUi()
{
    if (!m_anchor || m_adjusting) return;
    QCPAxis* x = m_plot->xAxis;
    QCPAxis* y = m_plot->yAxis;
    const double dx = m_anchor->col - x->pixelToCoord(m_anchor->pixel.x());
    const double dy = m_anchor->row - y->pixelToCoord(m_anchor->pixel.y());
    // Less than a tenth of a pixel off: leave the ranges (and the cells binned for them) alone.
    const double px = x->range().size() / std::max(1, m_plot->axisRect()->width());
    const double py = y->range().size() / std::max(1, m_plot->axisRect()->height());
    if (std::fabs(dx) < 0.1 * px && std::fabs(dy) < 0.1 * py) return;
    m_adjusting = true;
    x->moveRange(dx);
    y->moveRange(dy);
    m_adjusting = false;
    emit rangesMovedInReplot();
}

bool HeatmapNavigator::eventFilter(QObject* watched, QEvent* event)
{
    if (watched != m_plot) return QObject::eventFilter(watched, event);
    switch (event->type()) {
        case QEvent::MouseButtonPress: {
            // Shift+drag: a box to zoom into; a plain drag pans.
            auto* mouse = static_cast<QMouseEvent*>(event);
            m_anchor.reset();
            m_plot->setSelectionRectMode(mouse->modifiers() & Qt::ShiftModifier ? QCP::srmZoom
                                                                                : QCP::srmNone);
            break;
        }
        case QEvent::KeyPress: {
            auto* key = static_cast<QKeyEvent*>(event);
            if (key->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)) break;
            switch (key->key()) {
                case Qt::Key_Plus:
                case Qt::Key_Equal:
                    zoomCentre(kKeyFactor);
                    return true;
                case Qt::Key_Minus:
                    zoomCentre(1.0 / kKeyFactor);
                    return true;
                case Qt::Key_0:
                    emit fitRequested();
                    return true;
                case Qt::Key_Left:
                    pan(-0.25, 0);
                    return true;
                case Qt::Key_Right:
                    pan(0.25, 0);
                    return true;
                case Qt::Key_Up:
                    pan(0, -0.25);
                    return true;
                case Qt::Key_Down:
                    pan(0, 0.25);
                    return true;
                case Qt::Key_W:
                    emit worstRequested();
                    return true;
                case Qt::Key_N:
                    if (key->modifiers() & Qt::ShiftModifier)
                        emit previousRequested();
                    else
                        emit nextRequested();
                    return true;
                case Qt::Key_P:
                    emit previousRequested();
                    return true;
                default:
                    break;
            }
            break;
        }
        default:
            break;
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace faultline::views
