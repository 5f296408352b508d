#include "views/shell/Theme.h"

#include "views/shell/IndicatorStyle.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>

namespace faultline::views {

void Theme::apply(bool dark)
{
    if (QApplication::style()->objectName() != QLatin1String("faultline-fusion"))
        QApplication::setStyle(new IndicatorStyle);  // Fusion; the application owns the style
    if (!dark) {
        QApplication::setPalette(QApplication::style()->standardPalette());
        return;
    }
    QPalette p;
    const QColor text(220, 223, 228), disabled(120, 124, 130);
    p.setColor(QPalette::Window, QColor(37, 41, 48));
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, QColor(28, 31, 36));
    p.setColor(QPalette::AlternateBase, QColor(44, 49, 58));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::BrightText, Qt::white);
    p.setColor(QPalette::Button, QColor(44, 49, 58));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::Light, QColor(70, 76, 86));
    p.setColor(QPalette::Midlight, QColor(56, 61, 70));
    p.setColor(QPalette::Mid, QColor(90, 96, 106));
    p.setColor(QPalette::Dark, QColor(20, 22, 26));
    p.setColor(QPalette::Shadow, QColor(10, 10, 12));
    p.setColor(QPalette::Highlight, QColor(62, 115, 190));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(120, 180, 255));
    p.setColor(QPalette::ToolTipBase, QColor(44, 49, 58));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Disabled, QPalette::Text, disabled);
    p.setColor(QPalette::Disabled, QPalette::WindowText, disabled);
    p.setColor(QPalette::Disabled, QPalette::ButtonText, disabled);
    QApplication::setPalette(p);
}

}  // namespace faultline::views
