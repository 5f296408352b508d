#pragma once
// Divergence across the model: one bar per op (trace order) or per tensor (name order) with its
// beyond-tolerance count on a log axis, the bisect's first divergent op highlighted and
// labelled, the selected entry framed. Shows where divergence starts and how it grows; a click
// selects the entry.
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "views/incident/Incident.h"

class QComboBox;
class QCustomPlot;
class QCPBars;
class QCPItemRect;
class QCPItemText;
class QCPTextElement;
class QMouseEvent;

namespace faultline::views {

class ModelDivergenceView : public QWidget {
    Q_OBJECT
public:
    explicit ModelDivergenceView(QWidget* parent = nullptr);

    // Shows `incident` (nullptr clears): trace ops when it has a trace, else tensors.
    void setIncident(std::shared_ptr<const Incident> incident);
    // Frames the selected entry (switching to its source).
    void setSelectedEntry(int entryId);
    void setSource(EntrySource source);
    EntrySource source() const { return m_source; }

    QCustomPlot* plot() const { return m_plot; }
    // The entries drawn, left to right, and their bar heights (0 = none).
    const std::vector<int>& shownEntries() const { return m_order; }
    std::vector<double> shownValues() const;
    // The entry drawn with the first-divergent highlight, if any.
    std::optional<int> highlightedEntry() const { return m_highlighted; }

signals:
    void entryClicked(int entryId);

protected:
    void changeEvent(QEvent* event) override;

private:
    void refresh();
    int entryAtPixel(double x) const;
    void onMouseMoveOnUi(QMouseEvent* event);

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPBars* m_bars = nullptr;
    QCPBars* m_firstBars = nullptr;
    QCPItemRect* m_selectionFrame = nullptr;
    QCPItemText* m_firstLabel = nullptr;
    QCPItemText* m_message = nullptr;
    QComboBox* m_sourceBox = nullptr;
    std::shared_ptr<const Incident> m_incident;
    EntrySource m_source = EntrySource::TraceOp;
    std::vector<int> m_order;
    std::optional<int> m_highlighted;
    int m_selected = -1;
};

}  // namespace faultline::views
