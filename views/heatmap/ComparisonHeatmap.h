#pragma once
// A compare results file (`faultline compare --out RESULT.h5`) drawn, not only tabled: its
// tensors, most severe first, in a list, and the chosen one's tile pyramid in a HeatmapView
// (anomaly regions outlined, W / N / P, wheel, box and keyboard zoom, the hover naming each
// tile's counts) beside its bit-position histogram and its ULP / error-size distribution, both
// drawn from the per-tensor counts the file's report holds. The file holds tiles and counts, not
// element values: the readouts say so; to read elements, open the suspect and reference
// snapshots as an incident. Shown as the first section of the file's ResultView.
#include <QWidget>
#include <memory>

#include "views/incident/Incident.h"

class QComboBox;
class QLabel;

namespace faultline::views {

class BitHistogramView;
class ErrorDistributionView;
class HeatmapView;

class ComparisonHeatmap : public QWidget {
    Q_OBJECT
public:
    // `comparison`: an Incident holding only the file's report (Incident::compare).
    explicit ComparisonHeatmap(std::shared_ptr<const Incident> comparison, QWidget* parent = nullptr);

    QComboBox* tensors() const { return m_tensors; }
    HeatmapView* heatmap() const { return m_heatmap; }
    BitHistogramView* bitHistogram() const { return m_bits; }
    ErrorDistributionView* errorDistribution() const { return m_errors; }
    // What the plots are drawn from, and that element values are not in the file.
    QLabel* plotsNote() const { return m_plotsNote; }
    // Shows the tensor in row `row` of tensors(): its tiles, bits and error sizes.
    void showTensor(int row);

private:
    std::shared_ptr<const Incident> m_comparison;
    QComboBox* m_tensors = nullptr;
    HeatmapView* m_heatmap = nullptr;
    BitHistogramView* m_bits = nullptr;
    ErrorDistributionView* m_errors = nullptr;
    QLabel* m_plotsNote = nullptr;
};

}  // namespace faultline::views
