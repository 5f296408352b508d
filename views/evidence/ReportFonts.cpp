#include "views/evidence/ReportFonts.h"

#include <QFontMetrics>
#include <QImage>
#include <QPainter>
#include <QTextBlock>
#include <QTextDocument>

namespace faultline::views {

QList<QFont> documentFonts(const QTextDocument& doc)
{
    QList<QFont> fonts;
    auto add = [&fonts](const QFont& f) {
        if (!fonts.contains(f)) fonts.push_back(f);
    };
    for (QTextBlock block = doc.begin(); block.isValid(); block = block.next()) {
        add(block.charFormat().font());
        for (auto it = block.begin(); !it.atEnd(); ++it)
            if (it.fragment().isValid()) add(it.fragment().charFormat().font());
    }
    return fonts;
}

void meetFontOnUi(const QFont& font)
{
    QString ascii;
    for (char c = ' '; c <= '~'; ++c) ascii += QLatin1Char(c);
    const QFontMetrics metrics(font);
    QImage canvas(metrics.horizontalAdvance(ascii) + 2, metrics.height() + 2,
                  QImage::Format_ARGB32_Premultiplied);
    canvas.fill(Qt::transparent);
    QPainter painter(&canvas);
    painter.setFont(font);
    painter.drawText(QPointF(1, metrics.ascent() + 1), ascii);
}

}  // namespace faultline::views
