#pragma once
// How large the errors are: the selected entry's ULP-distance histogram (log2 bins) next to its
// relative-error (or absolute-error) decade histogram, both on log count axes. Rounding noise
// sits at 1-2 ulp; a flipped exponent or high mantissa bit stands far to the right.
#include <QWidget>
#include <memory>
#include <vector>

#include "views/incident/Incident.h"

class QComboBox;
class QCustomPlot;
class QCPAxisRect;
class QCPBars;
class QCPTextElement;

namespace faultline::views {

class ErrorDistributionView : public QWidget {
    Q_OBJECT
public:
    explicit ErrorDistributionView(QWidget* parent = nullptr);

    void setEntry(std::shared_ptr<const Incident> incident, int entryId);
    // Right panel: relative (default) or absolute error decades.
    void setAbsolute(bool absolute);

    QCustomPlot* plot() const { return m_plot; }
    // (bin key, count) as drawn: ULP bins k (0 = 0 ulp, k = [2^(k-1), 2^k)); error decades.
    std::vector<std::pair<double, double>> ulpBars() const;
    std::vector<std::pair<double, double>> decadeBars() const;

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void refresh();
    // How many tick labels fit under each of the two plots at the current width.
    int labelsThatFit() const;

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPAxisRect* m_ulpRect = nullptr;
    QCPAxisRect* m_decadeRect = nullptr;
    QCPBars* m_ulpBars = nullptr;
    QCPBars* m_decadeBars = nullptr;
    QComboBox* m_kindBox = nullptr;
    std::shared_ptr<const Incident> m_incident;
    int m_entryId = -1;
    bool m_absolute = false;
    int m_labels = 0;  // labelsThatFit() when the ticks were made
};

}  // namespace faultline::views
