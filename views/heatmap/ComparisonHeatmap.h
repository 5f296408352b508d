#pragma once
// A compare results file (`faultline compare --out RESULT.h5`) drawn, not only tabled: its
// tensors, most severe first, in a list, and the chosen one's tile pyramid in a HeatmapView
// (anomaly regions outlined, W / N / P, wheel, box and keyboard zoom, the hover naming each
// tile's counts). The file holds tiles, not element values: to read elements, open the suspect
// and reference snapshots as an incident. Shown as the first section of the file's ResultView.
#include <QWidget>
#include <memory>

#include "views/incident/Incident.h"

class QComboBox;

namespace faultline::views {

class HeatmapView;

class ComparisonHeatmap : public QWidget {
    Q_OBJECT
public:
    // `comparison`: an Incident holding only the file's report (Incident::compare).
    explicit ComparisonHeatmap(std::shared_ptr<const Incident> comparison, QWidget* parent = nullptr);

    QComboBox* tensors() const { return m_tensors; }
    HeatmapView* heatmap() const { return m_heatmap; }
    // Shows the tensor in row `row` of tensors().
    void showTensor(int row);

private:
    std::shared_ptr<const Incident> m_comparison;
    QComboBox* m_tensors = nullptr;
    HeatmapView* m_heatmap = nullptr;
};

}  // namespace faultline::views
