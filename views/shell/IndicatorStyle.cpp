#include "views/shell/IndicatorStyle.h"

#include <QPainter>
#include <QStyleFactory>
#include <QStyleOption>
#include <algorithm>

namespace faultline::views {

IndicatorStyle::IndicatorStyle() : QProxyStyle(QStyleFactory::create(QStringLiteral("Fusion")))
{
    setObjectName(QStringLiteral("faultline-fusion"));
}

void IndicatorStyle::drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                                   const QWidget* widget) const
{
    QProxyStyle::drawPrimitive(element, option, painter, widget);
    const bool check = element == PE_IndicatorCheckBox || element == PE_IndicatorItemViewItemCheck;
    const bool radio = element == PE_IndicatorRadioButton;
    if ((!check && !radio) || option->palette.color(QPalette::Window).lightness() >= 128) return;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, radio);
    QColor edge = option->palette.color(QPalette::Mid).lighter(130);
    if (!(option->state & State_Enabled)) edge = option->palette.color(QPalette::Mid);
    painter->setPen(QPen(edge, 1));
    painter->setBrush(Qt::NoBrush);
    QRectF r = QRectF(option->rect).adjusted(0.5, 0.5, -0.5, -0.5);
    if (check) {
        const qreal side = std::min(r.width(), r.height());
        r = QRectF(r.left(), r.center().y() - side / 2, side, side);
        painter->drawRect(r);
    } else {
        painter->drawEllipse(r);
    }
    painter->restore();
}

}  // namespace faultline::views
