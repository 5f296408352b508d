#pragma once
// The central page: the incident banner over the heatmap, the bit histogram, the error
// distribution and the model-wide divergence chart. Shows one entry at a time in every view and
// loads its element values off the GUI thread. Knows which plot the user worked with last (the
// one File > Export plot saves).
#include <QByteArray>
#include <QWidget>
#include <memory>

#include "views/incident/Incident.h"

class QCustomPlot;
class QSplitter;

namespace faultline::views {

class BitHistogramView;
class ElementValueLoader;
class ErrorDistributionView;
class HeatmapView;
class IncidentBanner;
class ModelDivergenceView;

class IncidentPage : public QWidget {
    Q_OBJECT
public:
    explicit IncidentPage(QWidget* parent = nullptr);

    // Resets every view to `incident` (nullptr clears); nothing selected yet.
    void setIncident(std::shared_ptr<const Incident> incident);
    // Shows an entry in every view and starts loading its element values.
    void showEntry(int entryId);
    int shownEntry() const { return m_entry; }

    IncidentBanner* banner() const { return m_banner; }
    HeatmapView* heatmap() const { return m_heatmap; }
    BitHistogramView* bits() const { return m_bits; }
    ErrorDistributionView* errors() const { return m_errors; }
    ModelDivergenceView* modelView() const { return m_model; }

    // The plot last clicked or focused (the heatmap until then).
    QCustomPlot* currentPlot() const { return m_currentPlot; }
    void setCurrentPlot(QCustomPlot* plot);

    QByteArray saveLayout() const;
    void restoreLayout(const QByteArray& state);

signals:
    // The model-wide chart was clicked on an entry.
    void entryClicked(int entryId);
    // Element values for the shown entry arrived (or cannot: `available` false).
    void elementValuesSettled(int entryId, bool available);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    std::shared_ptr<const Incident> m_incident;
    int m_entry = -1;
    IncidentBanner* m_banner = nullptr;
    HeatmapView* m_heatmap = nullptr;
    BitHistogramView* m_bits = nullptr;
    ErrorDistributionView* m_errors = nullptr;
    ModelDivergenceView* m_model = nullptr;
    ElementValueLoader* m_values = nullptr;
    QSplitter* m_vertical = nullptr;
    QSplitter* m_top = nullptr;
    QSplitter* m_side = nullptr;
    QCustomPlot* m_currentPlot = nullptr;
};

}  // namespace faultline::views
