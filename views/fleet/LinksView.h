#pragma once
// The links view: the rank × rank matrix of a sweep or collective replay (LinkMatrixModel),
// coloured by corrupted bytes (log scale) or bandwidth, faulty GPUs and links marked, a tooltip
// per cell. Selecting a cell compares that link's stored block (received against expected, as
// float32 words) with the compare engine off the GUI thread; the answer arrives as an Incident
// (one tensor pair) for the heatmap and bit views, tagged with a job id so that the answer for a
// cell no longer selected is dropped. A cell without a block (it passed, or nothing was stored)
// answers nullptr and says why in the detail line. The block's divergence is drawn under the
// matrix in a HeatmapView (blockMap()), so it reads beside an incident opened from files.
#include <QWidget>
#include <memory>

#include "views/fleet/LinkMatrixModel.h"
#include "views/incident/Incident.h"

class QComboBox;
class QLabel;
class QTableView;

namespace faultline::views {

class ElementValueLoader;
class HeatmapView;

class LinksView : public QWidget {
    Q_OBJECT
public:
    explicit LinksView(QWidget* parent = nullptr);

    // Shows `matrix` (read off the GUI thread by the caller) and selects its story cell: the
    // first faulty link, else the most corrupted cell with a block (without one it answers
    // blockShown(nullptr), so that no older block stays shown). nullptr clears.
    void setMatrix(std::shared_ptr<const LinkMatrix> matrix);
    void setMetric(LinkMatrixModel::Metric metric);
    // Selects cell (src, dst) and compares its block on a worker.
    void selectCell(size_t src, size_t dst);
    // The selected cell, or (-1, -1).
    std::pair<int, int> selectedCell() const { return m_selected; }
    quint64 currentJob() const { return m_job; }

    LinkMatrixModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    QComboBox* metricBox() const { return m_metricBox; }
    QLabel* summary() const { return m_summary; }
    QLabel* detail() const { return m_detail; }
    // The selected cell's block compared, drawn (hidden while no block is shown).
    HeatmapView* blockMap() const { return m_blockMap; }
    // The Incident blockMap() draws (one tensor pair: received against expected), or null.
    std::shared_ptr<const Incident> shownBlock() const { return m_block; }

signals:
    // The selected cell's block compared (nullptr: the cell has no block to compare).
    void blockShown(std::shared_ptr<const faultline::views::Incident> incident);
    // Comparing the selected cell's block failed (the message names the file).
    void blockFailed(const QString& message);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void fitCellsOnUi();
    void onCellChangedOnUi();
    void compareOnWorker(size_t src, size_t dst);
    void updateSummary();
    // Draws `block` under the matrix (nullptr hides the map); showBlockOnUi also announces it.
    void drawBlockOnUi(std::shared_ptr<const Incident> block);
    void showBlockOnUi(std::shared_ptr<const Incident> block);

    std::shared_ptr<const LinkMatrix> m_matrix;
    LinkMatrixModel* m_model = nullptr;
    QTableView* m_table = nullptr;
    QComboBox* m_metricBox = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_legend = nullptr;
    QLabel* m_detail = nullptr;
    HeatmapView* m_blockMap = nullptr;
    ElementValueLoader* m_blockValues = nullptr;  // the block's words, for the map's readout
    std::shared_ptr<const Incident> m_block;
    std::pair<int, int> m_selected{-1, -1};
    quint64 m_job = 0;
};

}  // namespace faultline::views
