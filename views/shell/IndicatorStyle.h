#pragma once
// Fusion, with check box and radio button indicators outlined in a visible colour on dark
// palettes (Qt 6.4's Fusion outlines them with a darker shade of the window colour, which
// vanishes on a dark background).
#include <QProxyStyle>

namespace faultline::views {

class IndicatorStyle : public QProxyStyle {
    Q_OBJECT
public:
    IndicatorStyle();
    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget = nullptr) const override;
};

}  // namespace faultline::views
