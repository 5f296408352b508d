#include "views/evidence/EvidenceRendering.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QTextDocument>
#include <QUrl>
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/DType.h"
#include "views/shell/OffscreenGui.h"

namespace faultline::views {
namespace {

// Perceptually ordered dark-to-bright colours for a value in [0, 1].
QColor heatColour(double t)
{
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromHsvF(float(0.75 - 0.75 * t), 0.85f, float(0.25 + 0.75 * t));
}

Status savePng(const QImage& image, const QString& path)
{
    if (QFile::exists(path)) return fileError(path.toStdString(), "already exists");
    if (!image.save(path, "PNG")) return fileError(path.toStdString(), "cannot write the PNG");
    return {};
}

// Max |error| per tile of the finest level that fits, on a log colour scale.
QImage heatmap(const EvidenceFigureInput& in)
{
    const TilePyramid& p = in.divergence.tiles;
    const int w = 900, h = 640, margin = 60;
    QImage img(w, h, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter g(&img);
    g.setRenderHint(QPainter::Antialiasing, false);
    g.drawText(QRect(0, 8, w, 24), Qt::AlignHCenter,
               QString("op %1 %2 (%3): max |error| per tile vs the golden model")
                   .arg(in.opIndex)
                   .arg(QString::fromStdString(in.op), QString::fromStdString(in.name)));
    if (!p.hasCounts()) return img;
    // The finest level with at most 256 tiles per side.
    size_t level = 0;
    while (level + 1 < p.levels().size() &&
           (p.levels()[level].gridRows > 256 || p.levels()[level].gridCols > 256))
        ++level;
    const TileLevel& L = p.levels()[level];
    double maxErr = 0, minErr = HUGE_VAL;
    for (double e : L.maxAbsError)
        if (e > 0 && std::isfinite(e)) maxErr = std::max(maxErr, e), minErr = std::min(minErr, e);
    const QRect area(margin, margin, w - 2 * margin - 60, h - 2 * margin);
    const double cw = double(area.width()) / double(L.gridCols),
                 ch = double(area.height()) / double(L.gridRows);
    for (uint64_t r = 0; r < L.gridRows; ++r)
        for (uint64_t c = 0; c < L.gridCols; ++c) {
            const double e = L.maxAbsError[r * L.gridCols + c];
            QColor col(235, 235, 235);
            if (!std::isfinite(e))
                col = QColor(255, 0, 255);
            else if (e > 0 && maxErr > 0) {
                const double t = maxErr > minErr ? std::log10(e / minErr) / std::log10(maxErr / minErr) : 1.0;
                col = heatColour(t);
            }
            g.fillRect(QRectF(area.left() + double(c) * cw, area.top() + double(r) * ch, cw + 0.5, ch + 0.5),
                       col);
        }
    g.setPen(Qt::black);
    g.drawRect(area);
    g.drawText(QRect(area.left(), area.bottom() + 6, area.width(), 20), Qt::AlignHCenter,
               QString("columns (%1 per tile, %2 in all)").arg(L.tileCols).arg(p.cols()));
    g.save();
    g.translate(area.left() - 10, area.center().y());
    g.rotate(-90);
    g.drawText(QRect(-area.height() / 2, -20, area.height(), 20), Qt::AlignHCenter,
               QString("rows (%1 per tile, %2 in all)").arg(L.tileRows).arg(p.rows()));
    g.restore();
    // Colour scale.
    const QRect scale(area.right() + 20, area.top(), 16, area.height());
    for (int y = 0; y < scale.height(); ++y)
        g.fillRect(scale.left(), scale.bottom() - y, scale.width(), 1,
                   heatColour(double(y) / scale.height()));
    g.drawRect(scale);
    if (maxErr > 0) {
        g.drawText(QPoint(scale.left() - 4, scale.top() - 6), QString::number(maxErr, 'g', 3));
        g.drawText(QPoint(scale.left() - 4, scale.bottom() + 16), QString::number(minErr, 'g', 3));
    }
    return img;
}

// Elements per flipped bit position: sign, exponent and mantissa bits in their own colours.
QImage bitHistogram(const EvidenceFigureInput& in)
{
    const std::vector<uint64_t>& flips = in.divergence.bits.flips;
    const int w = 900, h = 420, margin = 50;
    QImage img(w, h, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter g(&img);
    g.drawText(QRect(0, 8, w, 24), Qt::AlignHCenter,
               QString("op %1: differing elements per bit position (%2)")
                   .arg(in.opIndex)
                   .arg(QString::fromStdString(std::string(dtypeName(in.divergence.dtype)))));
    if (flips.empty()) return img;
    const uint64_t top = std::max<uint64_t>(1, *std::max_element(flips.begin(), flips.end()));
    const int bits = int(flips.size());
    const QRect area(margin, margin, w - 2 * margin, h - 2 * margin);
    const double bw = double(area.width()) / bits;
    // Float layouts: sign = top bit; exponent widths for the common float types.
    int exponentBits = 0;
    switch (in.divergence.dtype) {
        case DType::Float32:
            exponentBits = 8;
            break;
        case DType::BFloat16:
            exponentBits = 8;
            break;
        case DType::Float16:
            exponentBits = 5;
            break;
        case DType::Float64:
            exponentBits = 11;
            break;
        default:
            exponentBits = 0;
            break;
    }
    for (int b = 0; b < bits; ++b) {
        const double hgt = double(area.height()) * double(flips[size_t(b)]) / double(top);
        QColor col(70, 110, 200);  // mantissa
        if (exponentBits && b == bits - 1)
            col = QColor(200, 60, 60);  // sign
        else if (exponentBits && b >= bits - 1 - exponentBits)
            col = QColor(230, 150, 40);                // exponent
        const double x = area.right() - (b + 1) * bw;  // bit 0 at the right, as bits are written
        g.fillRect(QRectF(x + 1, area.bottom() - hgt, bw - 2, hgt), col);
        if (bits <= 32 || b % 4 == 0)
            g.drawText(QRectF(x, area.bottom() + 4, bw, 16), Qt::AlignHCenter, QString::number(b));
    }
    g.drawRect(area);
    g.drawText(QPoint(area.left() + 4, area.top() + 14), QString("max %1").arg(top));
    if (exponentBits)
        g.drawText(QRect(0, h - 22, w, 20), Qt::AlignHCenter,
                   "bit position (0 = least significant); red: sign, orange: exponent, blue: mantissa");
    return img;
}

Result<std::vector<std::string>> renderFigures(const std::string& dir, const EvidenceFigureInput& in)
{
    ensureGuiApplication();
    const QString root = QString::fromStdString(dir);
    if (!QDir(root).mkpath("figures")) return fileError(dir + "/figures", "cannot create");
    if (Status st = savePng(heatmap(in), root + "/figures/heatmap.png"); !st) return st.error();
    if (Status st = savePng(bitHistogram(in), root + "/figures/bit-histogram.png"); !st) return st.error();
    return std::vector<std::string>{"figures/heatmap.png", "figures/bit-histogram.png"};
}

Status renderPdf(const std::string& markdownPath, const std::string& pdfPath)
{
    ensureGuiApplication();
    QFile md(QString::fromStdString(markdownPath));
    if (!md.open(QIODevice::ReadOnly)) return fileError(markdownPath, "cannot read");
    const QString text = QString::fromUtf8(md.readAll());
    const QString pdf = QString::fromStdString(pdfPath);
    if (QFile::exists(pdf)) return fileError(pdfPath, "already exists");
    QTextDocument doc;
    const QDir base = QFileInfo(md).absoluteDir();
    doc.setBaseUrl(QUrl::fromLocalFile(base.absolutePath() + "/"));
    for (const QString& f : {QString("figures/heatmap.png"), QString("figures/bit-histogram.png")}) {
        QImage img(base.filePath(f));
        if (!img.isNull())
            doc.addResource(QTextDocument::ImageResource, QUrl(f),
                            img.scaledToWidth(560, Qt::SmoothTransformation));
    }
    doc.setMarkdown(text);
    QPdfWriter writer(pdf);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    writer.setTitle("GPU RMA evidence");
    writer.setCreator("faultline");
    doc.print(&writer);
    if (!QFile::exists(pdf) || QFileInfo(pdf).size() == 0) return fileError(pdfPath, "cannot write the PDF");
    return {};
}

}  // namespace

void attachEvidenceRendering(EvidenceOptions& options)
{
    options.renderFigures = renderFigures;
    options.renderPdf = renderPdf;
}

}  // namespace faultline::views
