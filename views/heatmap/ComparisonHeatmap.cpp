#include "views/heatmap/ComparisonHeatmap.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "views/heatmap/HeatmapView.h"
#include "views/plots/BitHistogramView.h"
#include "views/plots/ErrorDistributionView.h"

namespace faultline::views {

ComparisonHeatmap::ComparisonHeatmap(std::shared_ptr<const Incident> comparison, QWidget* parent)
    : QWidget(parent), m_comparison(std::move(comparison))
{
    setObjectName(QStringLiteral("comparisonHeatmap"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Tensor:")));
    m_tensors = new QComboBox;
    m_tensors->setObjectName(QStringLiteral("comparisonTensors"));
    m_tensors->setToolTip(tr("The compared tensors, most severe first"));
    bar->addWidget(m_tensors, 1);
    layout->addLayout(bar);

    // The map on the left; which bits and how large the errors are on the right.
    auto* split = new QSplitter(Qt::Horizontal);
    split->setObjectName(QStringLiteral("comparisonSplit"));
    m_heatmap = new HeatmapView;
    split->addWidget(m_heatmap);
    auto* plots = new QWidget;
    auto* plotsLayout = new QVBoxLayout(plots);
    plotsLayout->setContentsMargins(0, 0, 0, 0);
    m_bits = new BitHistogramView;
    m_errors = new ErrorDistributionView;
    plotsLayout->addWidget(m_bits, 1);
    plotsLayout->addWidget(m_errors, 1);
    m_plotsNote = new QLabel(tr(
        "Bits and error sizes are the file's per-tensor counts over every element. The file holds no element "
        "values (tiles only): open the suspect and reference snapshots as an incident to read elements."));
    m_plotsNote->setObjectName(QStringLiteral("comparisonPlotsNote"));
    m_plotsNote->setWordWrap(true);
    plotsLayout->addWidget(m_plotsNote);
    split->addWidget(plots);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    // The report's order is the severity order; entries are in name order.
    if (m_comparison && m_comparison->compare)
        for (const Divergence& d : m_comparison->compare->tensors)
            for (const IncidentEntry& e : m_comparison->entries)
                if (e.divergence == &d)
                    m_tensors->addItem(tr("%1 — %2, %3 of %4 beyond tolerance")
                                           .arg(e.name, e.verdict)
                                           .arg(d.beyondTolerance)
                                           .arg(d.elements),
                                       e.id);
    connect(m_tensors, qOverload<int>(&QComboBox::currentIndexChanged), this, &ComparisonHeatmap::showTensor);
    showTensor(m_tensors->currentIndex());
}

void ComparisonHeatmap::showTensor(int row)
{
    if (row < 0 || row >= m_tensors->count()) {
        m_heatmap->setEntry(nullptr, -1);
        m_bits->setEntry(nullptr, -1);
        m_errors->setEntry(nullptr, -1);
        return;
    }
    if (m_tensors->currentIndex() != row) {
        m_tensors->setCurrentIndex(row);  // shows it through the signal
        return;
    }
    const int entry = m_tensors->itemData(row).toInt();
    m_heatmap->setEntry(m_comparison, entry);
    m_heatmap->setElementValuesUnavailable(
        tr("a compare results file holds the tiles, not the values; open the suspect and reference snapshots "
           "as an incident to read elements"));
    m_bits->setEntry(m_comparison, entry);
    m_errors->setEntry(m_comparison, entry);
}

}  // namespace faultline::views
