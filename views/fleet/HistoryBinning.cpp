#include "views/fleet/HistoryBinning.h"

#include <algorithm>
#include <cmath>

namespace faultline::views {

const std::vector<double>& historyBinWidths()
{
    static const std::vector<double> widths = {86400.0, 7 * 86400.0, 30 * 86400.0, 365.25 * 86400.0};
    return widths;
}

QString historyBinName(double binSeconds)
{
    const auto& w = historyBinWidths();
    if (binSeconds == w[0]) return QStringLiteral("day");
    if (binSeconds == w[1]) return QStringLiteral("week");
    if (binSeconds == w[2]) return QStringLiteral("30 days");
    if (binSeconds == w[3]) return QStringLiteral("year");
    return {};
}

HistoryPoints historyPoints(const std::vector<HistoryMark>& marks, double from, double to, int maxRaw,
                            int maxBins)
{
    HistoryPoints p;
    const auto less = [](const HistoryMark& m, double t) { return m.t < t; };
    const auto begin = std::lower_bound(marks.begin(), marks.end(), from, less);
    const auto end = std::upper_bound(marks.begin(), marks.end(), to,
                                      [](double t, const HistoryMark& m) { return t < m.t; });
    p.marks = int(end - begin);
    if (p.marks <= maxRaw) {
        p.t.reserve(p.marks);
        p.counts.reserve(p.marks);
        for (auto it = begin; it != end; ++it) {
            p.t.push_back(it->t);
            p.counts.push_back(1);
        }
        return p;
    }
    const auto& widths = historyBinWidths();
    p.binSeconds = widths.back();
    for (double w : widths)
        if ((to - from) / w <= std::max(1, maxBins)) {
            p.binSeconds = w;
            break;
        }
    double bin = 0;
    for (auto it = begin; it != end; ++it) {
        const double b = std::floor(it->t / p.binSeconds);
        if (p.t.isEmpty() || b != bin) {
            bin = b;
            p.t.push_back((b + 0.5) * p.binSeconds);
            p.counts.push_back(0);
        }
        ++p.counts.back();
    }
    return p;
}

}  // namespace faultline::views
