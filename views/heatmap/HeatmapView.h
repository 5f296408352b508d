#pragma once
// Where a tensor diverges: per-tile max |error| (or mismatch / beyond-tolerance counts) of the
// selected entry's tile pyramid as a QCPColorMap on a log colour scale. The level is chosen so
// that no more cells than the widget's pixels are drawn and re-chosen on every zoom or pan, down
// to the finest tiles, then to single elements when their values are loaded (small tensors).
// Hover names the element, its tile's counts and, at element zoom, both values and bits.
// "Colour by SM" colours the divergent tiles by the SM that computed them, where a tile->SM map
// is known: one a replay of the op recorded (the incident's replaySmMaps), else the layout of
// the suspect device's simulated defect.
#include <QPointer>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "core/compare/AnomalyRegions.h"
#include "views/heatmap/ElementValues.h"
#include "views/heatmap/HeatmapBinning.h"
#include "views/heatmap/HeatmapOutlines.h"
#include "views/heatmap/HeatmapSmColouring.h"
#include "views/incident/Incident.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QTimer;
class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;
class QCPItemText;

namespace faultline::views {

class HeatmapNavigator;

class HeatmapView : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapView(QWidget* parent = nullptr);
    ~HeatmapView() override;

    // Shows entry `entryId` of `incident` (resets zoom and element values); nullptr clears.
    void setEntry(std::shared_ptr<const Incident> incident, int entryId);
    // Element values for the current entry (ignored for another entry).
    void setElementValues(std::shared_ptr<const ElementValues> values);
    // Says why there are no element values (shown under the plot).
    void setElementValuesUnavailable(const QString& reason);

    void setMetric(HeatmapMetric metric);
    HeatmapMetric metric() const { return m_metric; }
    // Colour by SM: only where a tile->SM layout is known (smAvailable()).
    void setColourBySm(bool on);
    bool colourBySm() const { return m_bySm; }
    bool smAvailable() const { return m_sm.available(); }
    // The SMs holding divergent tiles, ascending: SM smCategories()[i] is drawn in
    // PlotStyle::categoricalColours(n)[i] (n = their count), labelled on the colour scale.
    const std::vector<int32_t>& smCategories() const { return m_sm.categories(); }
    static constexpr size_t kMaxSmLegend = 24;  // labels on the scale (every k-th past that)
    // This machine's GPUs ("cuda:N" -> UUID, DevicesPanel's inventory): a replay's map is the
    // suspect's own only on the GPU with the suspect's UUID (SmAttribution).
    void setLocalGpus(const QStringList& specs, const QStringList& uuids);
    // Where the tile->SM map comes from, in words ("" when there is none).
    QString smSource() const { return m_sm.source(); }
    // Re-reads the tile->SM map (after a replay recorded one) and redraws.
    void refreshSmMap();
    // Zooms to element rows [r0, r1) x cols [c0, c1); fitAll() shows the whole tensor.
    void zoomTo(double r0, double r1, double c0, double c1);
    void fitAll();

    // Anomaly regions (findAnomalyRegions), worst first: all outlined at any zoom; the view steps
    // through them (keys W, N, P on the map; buttons above it).
    const AnomalyRegions& regions() const { return m_regions; }
    int currentRegion() const { return m_regionIndex; }
    void zoomToWorst();
    void nextRegion();
    void previousRegion();
    void zoomToRegion(int index);
    // The outlines drawn now, in element coordinates (each at least kMinOutlinePixels wide on
    // screen, so a region smaller than a pixel at fit still stands out).
    static constexpr int kMinOutlinePixels = HeatmapOutlines::kMinPixels;
    std::vector<QRectF> shownOutlines() const;
    HeatmapNavigator* navigator() const { return m_navigator; }

    // What is drawn now (tests, export).
    const HeatmapGrid& shownGrid() const { return m_grid; }
    bool showingElements() const { return m_grid.level == HeatmapGrid::kElementLevel; }
    bool hasElementValues() const { return m_values != nullptr; }
    QCustomPlot* plot() const { return m_plot; }
    QCPColorMap* colorMap() const { return m_map; }
    // The hover text for element (row, col) of the 2-D view.
    QString describeElement(uint64_t row, uint64_t col) const;
    // Shows describeElement() in the details line under the map, as hovering does.
    void hoverElement(uint64_t row, uint64_t col);
    QString infoText() const;

signals:
    void gridChanged();
    // The view shows single elements over `window` of entry `entryId` but holds no values there:
    // read them (IncidentPage hands this to ElementValueLoader).
    void elementWindowWanted(int entryId, faultline::views::ElementWindow window);

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void scheduleRebinOnUi();
    void rebinOnUi();
    void showGrid(const HeatmapGrid& grid, double lo, double hi, bool logScale);
    void showMessage(const QString& message);
    void updateOutlinesOnUi();
    void requestWindowOnUi(const ElementWindow& visible);
    void updateTitle();
    void updateSmAvailability();
    void onMouseMoveOnUi(QMouseEvent* event);
    std::optional<std::pair<double, double>> errorRange() const;
    double levelMax(int level) const;
    const Divergence* divergence() const;

    QCustomPlot* m_plot = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPItemText* m_message = nullptr;
    QComboBox* m_metricBox = nullptr;
    QCheckBox* m_smBox = nullptr;
    QLabel* m_levelLabel = nullptr;
    QLabel* m_hoverLabel = nullptr;
    QLabel* m_infoLabel = nullptr;
    QTimer* m_rebinTimer = nullptr;
    HeatmapNavigator* m_navigator = nullptr;
    std::unique_ptr<HeatmapOutlines> m_outlines;

    std::shared_ptr<const Incident> m_incident;
    int m_entryId = -1;
    std::shared_ptr<const ElementValues> m_values;
    std::optional<ElementWindow> m_requestedWindow;  // asked for and not superseded
    AnomalyRegions m_regions;
    int m_regionIndex = -1;
    QString m_valuesNote;
    HeatmapMetric m_metric = HeatmapMetric::MaxAbsError;
    bool m_bySm = false;
    HeatmapSmColouring m_sm;
    QString m_smSummary;
    HeatmapGrid m_grid;
    bool m_settingRange = false;
    bool m_rebinInReplot = false;            // re-binning from beforeReplot: that replot draws the cells
    mutable bool m_errorRangeKnown = false;  // errorRange() of this entry and values, cached
    mutable std::optional<std::pair<double, double>> m_errorRange;
    QSize m_binnedPixels;
};

}  // namespace faultline::views
