#pragma once
// What one lane of the device history view draws for the visible time range: its marks themselves
// while few enough fall in the range, else their counts per bin (a day, a week, 30 days or a year:
// the finest whose bins across the range stay within `maxBins`), one point per non-empty bin at its
// middle. Ten years of a busy GPU then draw as a few hundred points, and zooming in brings the raw
// marks back.
#include <QString>
#include <QVector>
#include <vector>

#include "views/fleet/DeviceHistory.h"

namespace faultline::views {

struct HistoryPoints {
    QVector<double> t;      // the marks' times, or the bins' middles
    QVector<int> counts;    // marks per point (1 for raw marks)
    double binSeconds = 0;  // 0: raw marks
    int marks = 0;          // marks in the range
};

// The bin widths, finest first (seconds).
const std::vector<double>& historyBinWidths();
// "day", "week", "30 days", "year"; "" for raw marks.
QString historyBinName(double binSeconds);

// `marks` (in time order) within [from, to] as drawn.
HistoryPoints historyPoints(const std::vector<HistoryMark>& marks, double from, double to, int maxRaw,
                            int maxBins);

}  // namespace faultline::views
