#include "views/plots/DetectionFloorPlot.h"

#include <QColor>
#include <QFont>
#include <QImage>
#include <QPainter>
#include <QString>
#include <algorithm>
#include <optional>

#include "core/replay/ReplayVocabulary.h"
#include "views/plots/RateCells.h"
#include "views/shell/OffscreenGui.h"

namespace faultline::views {

using nlohmann::json;

namespace {

constexpr int kMargin = 24;
constexpr int kBit = 18;  // cell width per bit position
constexpr int kRow = 20;  // cell height per row
constexpr int kLabel = 330;

// Detected share of one bit position of a row, both directions; nullopt where nothing was planted.
std::optional<double> bitRate(const json& bit)
{
    const uint64_t planted =
        bit["set"].value("planted", uint64_t(0)) + bit["clear"].value("planted", uint64_t(0));
    const uint64_t detected =
        bit["set"].value("detected", uint64_t(0)) + bit["clear"].value("detected", uint64_t(0));
    if (!planted) return std::nullopt;
    return double(detected) / double(planted);
}

}  // namespace

Status renderDetectionFloorPlot(const json& f, const std::string& path)
{
    if (!f.is_object() || f.value("format", "") != "faultline-detection-floor" || !f.contains("rows") ||
        !f["rows"].is_array())
        return Error{path + ": the JSON given is no detection floor", ErrorCode::Usage};
    ensureGuiApplication();
    const json& rows = f["rows"];
    size_t widest = 16;
    for (const json& r : rows) widest = std::max(widest, r["bits"].size());
    const int top = 96;
    const int width = kMargin * 2 + kLabel + int(widest) * kBit + 40;
    const int height = top + int(std::max<size_t>(rows.size(), 1)) * kRow + 80;
    QImage img(width, height, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    QFont font("DejaVu Sans", 8);
    QFont title = font;
    title.setPointSize(11);
    title.setBold(true);
    p.setFont(title);
    p.setPen(Qt::black);
    const std::string peer = f["peer"].is_string() ? f["peer"].get<std::string>() : std::string();
    p.drawText(
        kMargin, 26,
        QString("Detection floor: %1 (suspect %2, %3)")
            .arg(QString::fromStdString(f.value("trace", "")).section('/', -1))
            .arg(QString::fromStdString(f.value("suspect", "")))
            .arg(peer.empty() ? QString("golden model alone") : "peer " + QString::fromStdString(peer)));
    p.setFont(font);
    p.drawText(kMargin, 46,
               QString("%1 recorded ops, %2 judged, %3 false alarm(s); %4 flips per bit position and "
                       "direction; share of flips detected, by bit position (the sign bit is the leftmost of "
                       "each dtype)")
                   .arg(f.value("recorded_ops", 0))
                   .arg(f.value("judged_ops", 0))
                   .arg(f.contains("false_alarms") ? f["false_alarms"].size() : 0)
                   .arg(f.value("elements_per_bit", 0)));
    const int gridX = kMargin + kLabel;
    for (size_t b = 0; b < widest; ++b) {
        const int bit = int(widest) - 1 - int(b);
        if (bit % 4 == 3 || bit == 0)
            p.drawText(QRect(gridX + int(b) * kBit, top - 22, kBit, 18), Qt::AlignCenter,
                       QString::number(bit));
    }
    for (size_t r = 0; r < rows.size(); ++r) {
        const json& row = rows[r];
        const int y = top + int(r) * kRow;
        std::string judge = row.value("judge", "");
        if (parseBisectJudge(judge) == BisectJudge::GoldenBound)
            judge += row.value("loose", false) ? " (loose)" : " (strict)";
        p.setPen(Qt::black);
        p.drawText(QRect(kMargin, y, kLabel - 8, kRow), Qt::AlignRight | Qt::AlignVCenter,
                   QString("%1  %2  %3  x%4")
                       .arg(QString::fromStdString(row.value("op", "")))
                       .arg(QString::fromStdString(row.value("dtype", "")))
                       .arg(QString::fromStdString(judge))
                       .arg(row.value("ops", 0)));
        const json& bits = row["bits"];
        const size_t n = bits.size();
        for (size_t b = 0; b < n; ++b) {
            // Bit b sits under its column label (widest - 1 - b from the left): a 16-bit row
            // fills the right half, its sign bit under 15.
            const json& bit = bits[b];
            const QRect cell(gridX + int(widest - 1 - b) * kBit, y, kBit, kRow);
            const auto rate = bitRate(bit);
            if (!rate) {
                p.fillRect(cell, QColor(225, 225, 225));
                p.setPen(QColor(200, 200, 200));
                p.drawRect(cell);
                continue;
            }
            drawRateCell(p, cell, *rate, QString());
        }
    }
    // Legend.
    const int ly = top + int(rows.size()) * kRow + 24;
    for (int i = 0; i <= 10; ++i) drawRateCell(p, QRect(gridX + i * kBit, ly, kBit, 14), i / 10.0, QString());
    p.setPen(Qt::black);
    p.drawText(gridX - 70, ly + 12, "detected 0%");
    p.drawText(gridX + 11 * kBit + 6, ly + 12, "100%   grey: no element to flip");
    p.end();
    if (!img.save(QString::fromStdString(path), "PNG"))
        return Error{path + ": cannot be written", ErrorCode::Io};
    return {};
}

}  // namespace faultline::views
