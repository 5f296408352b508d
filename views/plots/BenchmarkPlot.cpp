#include "views/plots/BenchmarkPlot.h"

#include <QColor>
#include <QFont>
#include <QImage>
#include <QPainter>
#include <QString>
#include <algorithm>

#include "views/plots/RateCells.h"
#include "views/shell/OffscreenGui.h"

namespace faultline::views {
namespace {

using nlohmann::json;

constexpr int kCell = 34;
constexpr int kMargin = 24;

QString shortKind(const std::string& k)
{
    return QString::fromStdString(k).replace("single_bit_random", "single_bit").replace("_", " ");
}

}  // namespace

Status renderBenchmarkPlot(const json& s, const std::string& path)
{
    if (!s.is_object() || s.value("format", "") != "faultline-benchmark" || !s.contains("confusion") ||
        !s.contains("detection"))
        return Error{path + ": the JSON given is no benchmark scorecard", ErrorCode::Usage};
    ensureGuiApplication();
    const json& kinds = s["confusion"]["kinds"];
    const json& matrix = s["confusion"]["truth_by_result"];
    const json& byPattern = s["detection"]["by_pattern"];
    const json& detectors = s["detectors"];
    // Kinds that occur in the matrix, as truth or as result.
    std::vector<size_t> used;
    for (size_t k = 0; k < kinds.size(); ++k) {
        uint64_t total = 0;
        for (size_t j = 0; j < kinds.size(); ++j)
            total += matrix[k][j].get<uint64_t>() + matrix[j][k].get<uint64_t>();
        if (total) used.push_back(k);
    }
    const int label = 150, top = 140;
    const int matrixW = label + int(used.size()) * kCell;
    const int gridX = kMargin + matrixW + 60, patLabel = 150;
    const int gridW = patLabel + int(detectors.size()) * 90;
    const int width = gridX + gridW + kMargin;
    const int height = std::max(top + int(used.size()) * kCell + 140, top + int(byPattern.size()) * 24 + 120);
    QImage img(width, height, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing, false);
    QFont font("DejaVu Sans", 9);
    p.setFont(font);
    const json& acc = s["accuracy"]["single_pattern"];
    QFont title = font;
    title.setPointSize(12);
    title.setBold(true);
    p.setFont(title);
    p.setPen(Qt::black);
    p.drawText(
        kMargin, 28,
        QString(
            "faultline benchmark, seed %1, tolerance %2: single-pattern signature accuracy %3% of %4 cases")
            .arg(s.value("seed", 0))
            .arg(QString::fromStdString(s.value("tolerance", "")))
            .arg(100.0 * acc.value("kind", 0.0), 0, 'f', 1)
            .arg(acc.value("cases", 0)));
    p.setFont(font);
    p.drawText(kMargin, 54, "Signature kinds: planted (rows) vs named (columns)");
    p.drawText(gridX, 54, "Detection rate by pattern");
    // Confusion matrix, cells shaded by the share of their row.
    for (size_t c = 0; c < used.size(); ++c) {
        p.save();
        p.translate(kMargin + label + int(c) * kCell + kCell / 2 + 4, top - 4);
        p.rotate(-45);
        p.drawText(0, 0, shortKind(kinds[used[c]].get<std::string>()));
        p.restore();
    }
    for (size_t r = 0; r < used.size(); ++r) {
        uint64_t rowTotal = 0;
        for (size_t c = 0; c < kinds.size(); ++c) rowTotal += matrix[used[r]][c].get<uint64_t>();
        const int y = top + 20 + int(r) * kCell;
        p.setPen(Qt::black);
        p.drawText(QRect(kMargin, y, label - 6, kCell), Qt::AlignRight | Qt::AlignVCenter,
                   shortKind(kinds[used[r]].get<std::string>()));
        for (size_t c = 0; c < used.size(); ++c) {
            const uint64_t n = matrix[used[r]][used[c]].get<uint64_t>();
            drawRateCell(p, QRect(kMargin + label + int(c) * kCell, y, kCell, kCell),
                         rowTotal ? double(n) / double(rowTotal) : 0.0, n ? QString::number(n) : QString());
        }
    }
    // Detection rates: patterns x detectors.
    for (size_t d = 0; d < detectors.size(); ++d) {
        p.setPen(Qt::black);
        p.drawText(QRect(gridX + patLabel + int(d) * 90, top - 10, 90, 28),
                   Qt::AlignCenter | Qt::TextWordWrap,
                   QString::fromStdString(detectors[d].value("name", "")).replace("_", " "));
    }
    for (size_t r = 0; r < byPattern.size(); ++r) {
        const json& row = byPattern[r];
        const int y = top + 20 + int(r) * 24;
        p.setPen(Qt::black);
        p.drawText(QRect(gridX, y, patLabel - 6, 24), Qt::AlignRight | Qt::AlignVCenter,
                   QString::fromStdString(row.value("pattern", "")));
        for (size_t d = 0; d < detectors.size(); ++d) {
            const double rate = row["detected"].value(detectors[d].value("name", ""), 0.0);
            drawRateCell(p, QRect(gridX + patLabel + int(d) * 90, y, 90, 24), rate,
                         QString::number(100.0 * rate, 'f', 0) + "%");
        }
    }
    p.end();
    if (!img.save(QString::fromStdString(path), "PNG"))
        return Error{path + ": cannot be written", ErrorCode::Io};
    return {};
}

}  // namespace faultline::views
