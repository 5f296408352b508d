#pragma once
// The failure rate by condition of an explore report (core/incident/RateByCondition.h): one
// column per condition, grouped by kind (scale, block by dimension, dtype, placement) between
// separators and named above them; per target, where the defect fired a filled disc at its rate
// with the interval as an error bar, where it never fired a hollow down-pointing triangle at the
// rate the clean runs rule out, with a dashed bar down to the axis (the rate is below it). The
// rate axis is logarithmic (rare defects) or linear. Shows what it is given; no file reading.
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

#include "core/incident/RateByCondition.h"

class QCheckBox;
class QCustomPlot;

namespace faultline::views {

class RateByConditionPlot : public QWidget {
    Q_OBJECT
public:
    explicit RateByConditionPlot(std::shared_ptr<const RateByCondition> rates, QWidget* parent = nullptr);

    // A point as drawn: fired ones at their rate with [low, high]; never-fired ones at the bound
    // they rule out (rate = high = the bound, low = the axis' floor). Not replayable: not drawn.
    struct Point {
        QString target, condition, kind;
        double x = 0, rate = 0, low = 0, high = 0;
        bool fired = false;
    };
    std::vector<Point> shownPoints() const;
    // The kinds named above their groups, left to right.
    QStringList groupLabels() const;
    void setLogScale(bool log);
    bool logScale() const { return m_log; }
    QCustomPlot* plot() const { return m_plot; }
    QCheckBox* logBox() const { return m_logBox; }

private:
    void rebuild();
    double floorRate() const;

    std::shared_ptr<const RateByCondition> m_rates;
    QCustomPlot* m_plot = nullptr;
    QCheckBox* m_logBox = nullptr;
    std::vector<Point> m_points;
    QStringList m_groupLabels;
    bool m_log = true;
};

}  // namespace faultline::views
