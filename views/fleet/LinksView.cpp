#include "views/fleet/LinksView.h"

#include <QComboBox>
#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPainter>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "views/heatmap/ElementValueLoader.h"
#include "views/heatmap/HeatmapView.h"
#include "views/plots/PlotStyle.h"
#include "views/replay/WorkerJob.h"
#include "views/shell/ViewText.h"

namespace faultline::views {
namespace {

// Cells: their colour, text that reads on it, a thick outline for a faulty link, a tinted
// diagonal for a faulty GPU, and the selection as an outline (so the colour stays visible).
class LinkCellDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        painter->save();
        const QRect r = option.rect.adjusted(1, 1, -1, -1);
        const QVariant background = index.data(Qt::BackgroundRole);
        QColor fill = option.palette.color(QPalette::Base);
        if (index.data(LinkMatrixModel::FaultyGpuRole).toBool())
            fill = PlotStyle::divergentColor();
        else if (background.canConvert<QBrush>())
            fill = background.value<QBrush>().color();
        else if (index.row() == index.column())
            fill = option.palette.color(QPalette::Window);
        painter->fillRect(r, fill);
        if (index.data(LinkMatrixModel::FaultyLinkRole).toBool()) {
            painter->setPen(QPen(PlotStyle::isDark() ? QColor(255, 255, 255) : QColor(0, 0, 0), 3));
            painter->drawRect(r.adjusted(2, 2, -2, -2));
        }
        if (option.state & QStyle::State_Selected) {
            painter->setPen(QPen(option.palette.color(QPalette::Highlight), 3, Qt::DashLine));
            painter->drawRect(r.adjusted(1, 1, -1, -1));
        }
        const QString text = index.data(Qt::DisplayRole).toString();
        if (!text.isEmpty() && r.width() > option.fontMetrics.horizontalAdvance(text) + 2) {
            painter->setPen(fill.lightnessF() > 0.55 ? QColor(0, 0, 0) : QColor(255, 255, 255));
            painter->drawText(r, Qt::AlignCenter, text);
        }
        painter->restore();
    }
};

constexpr int kMinCell = 14;  // pixels: 64 ranks fit in about 900

struct BlockAnswer {
    std::shared_ptr<const Incident> incident;
    QString error;
};

}  // namespace

LinksView::LinksView(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("linksView"));
    m_model = new LinkMatrixModel(this);
    m_summary = new QLabel(tr("No sweep or collective replay open"));
    m_summary->setObjectName(QStringLiteral("linksSummary"));
    m_summary->setWordWrap(true);
    m_metricBox = new QComboBox;
    m_metricBox->addItem(tr("Corrupted bytes (log)"));
    m_metricBox->addItem(tr("Bandwidth (GB/s)"));
    m_metricBox->setToolTip(tr("What colours the cells"));
    connect(m_metricBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        setMetric(i == 1 ? LinkMatrixModel::Metric::Bandwidth : LinkMatrixModel::Metric::CorruptedBytes);
    });
    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("linksTable"));
    m_table->setModel(m_model);
    m_table->setItemDelegate(new LinkCellDelegate(m_table));
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setSelectionBehavior(QAbstractItemView::SelectItems);
    m_table->setShowGrid(false);
    for (QHeaderView* h : {m_table->horizontalHeader(), m_table->verticalHeader()}) {
        h->setSectionResizeMode(QHeaderView::Fixed);
        h->setMinimumSectionSize(kMinCell);
    }
    m_table->installEventFilter(this);
    m_table->horizontalHeader()->setToolTip(tr("destination rank"));
    m_table->verticalHeader()->setToolTip(tr("source rank"));
    connect(m_table->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &LinksView::onCellChangedOnUi);
    m_detail = new QLabel;
    m_detail->setObjectName(QStringLiteral("linksDetail"));
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_legend = new QLabel;
    m_legend->setObjectName(QStringLiteral("linksLegend"));
    m_legend->setWordWrap(true);
    auto* colour = new QHBoxLayout;
    colour->addWidget(new QLabel(tr("Colour:")));
    colour->addWidget(m_metricBox, 1);
    m_blockMap = new HeatmapView;
    m_blockMap->setObjectName(QStringLiteral("linkBlockMap"));
    m_blockMap->setMinimumHeight(220);
    m_blockMap->hide();
    m_blockValues = new ElementValueLoader(this);
    connect(m_blockValues, &ElementValueLoader::loaded, m_blockMap,
            [this](quint64, std::shared_ptr<const ElementValues> v) {
                m_blockMap->setElementValues(std::move(v));
            });
    connect(m_blockValues, &ElementValueLoader::unavailable, m_blockMap,
            [this](quint64, const QString& reason) { m_blockMap->setElementValuesUnavailable(reason); });
    connect(m_blockMap, &HeatmapView::elementWindowWanted, this, [this](int entryId, ElementWindow window) {
        if (m_block && entryId == 0) m_blockValues->loadOnWorker(m_block, entryId, window);
    });
    auto* matrixPart = new QWidget;
    auto* matrixLayout = new QVBoxLayout(matrixPart);
    matrixLayout->setContentsMargins(0, 0, 0, 0);
    matrixLayout->addWidget(m_table, 1);
    matrixLayout->addWidget(m_detail);
    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("linksSplit"));
    split->addWidget(matrixPart);
    split->addWidget(m_blockMap);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addLayout(colour);
    layout->addWidget(m_legend);
    layout->addWidget(split, 1);
}

void LinksView::showBlockOnUi(std::shared_ptr<const Incident> block)
{
    drawBlockOnUi(block);
    emit blockShown(std::move(block));
}

void LinksView::drawBlockOnUi(std::shared_ptr<const Incident> block)
{
    m_block = std::move(block);
    m_blockValues->reset();
    const bool shown = m_block && !m_block->entries.empty();
    m_blockMap->setEntry(shown ? m_block : nullptr, shown ? 0 : -1);
    m_blockMap->setVisible(shown);
    if (shown) m_blockValues->loadOnWorker(m_block, 0);
}

void LinksView::setMatrix(std::shared_ptr<const LinkMatrix> matrix)
{
    ++m_job;  // answers for the previous matrix are stale
    m_selected = {-1, -1};
    m_matrix = matrix;
    drawBlockOnUi(nullptr);
    m_model->setMatrix(matrix);
    fitCellsOnUi();
    m_detail->clear();
    updateSummary();
    if (!matrix) return;
    // The story: the first faulty link, else the most corrupted cell that stored a block.
    const LinkCell* story = nullptr;
    for (const LinkCell& c : matrix->cells)
        if (c.faultyLink && (!story || !story->faultyLink)) story = &c;
    if (!story)
        for (const LinkCell& c : matrix->cells)
            if (c.hasBlock() && (!story || c.corruptedBytes > story->corruptedBytes)) story = &c;
    if (story) {
        selectCell(story->src, story->dst);
        return;
    }
    // Nothing failed with bytes to show: what the views showed before is not this sweep's.
    m_detail->setText(
        tr("No link stored a failing block: nothing to compare. Select a cell for its details."));
    showBlockOnUi(nullptr);
}

bool LinksView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_table && event->type() == QEvent::Resize) fitCellsOnUi();
    return QWidget::eventFilter(watched, event);
}

void LinksView::fitCellsOnUi()
{
    // Square cells as large as the table allows (scrolling below kMinCell pixels).
    const int n = m_model->rowCount();
    if (n == 0) return;
    const int frame = 2 * m_table->frameWidth();
    const int w = m_table->width() - frame - m_table->verticalHeader()->sizeHint().width();
    const int h = m_table->height() - frame - m_table->horizontalHeader()->sizeHint().height();
    const int side = std::max(kMinCell, std::min(w, h) / n);
    m_table->horizontalHeader()->setDefaultSectionSize(side);
    m_table->verticalHeader()->setDefaultSectionSize(side);
}

void LinksView::setMetric(LinkMatrixModel::Metric metric)
{
    m_model->setMetric(metric);
    updateSummary();
    const int i = metric == LinkMatrixModel::Metric::Bandwidth ? 1 : 0;
    if (m_metricBox->currentIndex() != i) m_metricBox->setCurrentIndex(i);
}

void LinksView::selectCell(size_t src, size_t dst)
{
    if (!m_matrix || src >= m_matrix->size() || dst >= m_matrix->size()) return;
    const QModelIndex index = m_model->index(int(src), int(dst));
    m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect);
    if (m_selected != std::pair<int, int>(int(src), int(dst))) onCellChangedOnUi();
}

void LinksView::onCellChangedOnUi()
{
    const QModelIndex index = m_table->selectionModel()->currentIndex();
    if (!m_matrix || !index.isValid()) return;
    const size_t src = size_t(index.row()), dst = size_t(index.column());
    if (m_selected == std::pair<int, int>(int(src), int(dst))) return;
    m_selected = {int(src), int(dst)};
    ++m_job;  // the previous cell's comparison is stale
    const LinkCell& c = m_matrix->at(src, dst);
    const QString what = m_model->describe(src, dst);
    if (c.hasBlock() && !m_matrix->path.empty()) {
        m_detail->setText(what + QStringLiteral("\n") + tr("Comparing the block…"));
        compareOnWorker(src, dst);
        return;
    }
    QString why = src == dst        ? tr("A rank does not send to itself: nothing to compare.")
                  : !c.tested()     ? tr("This link was not tested: nothing to compare.")
                  : c.failures == 0 ? tr("Every transfer arrived as sent: no divergence.")
                                    : tr("No block was stored for this link: nothing to compare.");
    m_detail->setText(what + QStringLiteral("\n") + why);
    showBlockOnUi(nullptr);
}

void LinksView::compareOnWorker(size_t src, size_t dst)
{
    const quint64 job = m_job;
    auto matrix = m_matrix;
    startWorkerJob<BlockAnswer>(
        this,
        [matrix, src, dst](QPromise<BlockAnswer>& promise) {
            auto cmp = compareLinkBlock(*matrix, src, dst);
            if (!cmp) {
                promise.addResult(BlockAnswer{nullptr, qs(cmp.message())});
                return;
            }
            auto incident = std::make_shared<Incident>();
            incident->paths = {qs(matrix->path)};
            incident->suspectFile = cmp->received;
            incident->referenceFile = cmp->expected;
            incident->compare = std::move(cmp->report);
            incident->buildEntries();
            promise.addResult(BlockAnswer{std::move(incident), {}});
        },
        [](int, int, int, const QString&) {},
        [this, job, src, dst](BlockAnswer answer) {
            if (job != m_job) return;  // stale: another cell or matrix since
            const QString what = m_model->describe(src, dst);
            if (!answer.incident) {
                m_detail->setText(what + QStringLiteral("\n") + answer.error);
                drawBlockOnUi(nullptr);
                emit blockFailed(answer.error);
                return;
            }
            const Divergence& d = answer.incident->compare->tensors.front();
            m_detail->setText(what + QStringLiteral("\n") +
                              tr("Block compared: %1 of %2 float32 words differ (%3)")
                                  .arg(d.mismatches)
                                  .arg(d.elements)
                                  .arg(qs(d.signature.detail)));
            showBlockOnUi(std::move(answer.incident));
        });
}

void LinksView::updateSummary()
{
    if (!m_matrix) {
        m_summary->setText(tr("No sweep or collective replay open"));
        m_legend->clear();
        return;
    }
    const QString scale = m_model->metric() == LinkMatrixModel::Metric::Bandwidth
                              ? tr("GB/s, linear from 0 to %1").arg(m_matrix->maxGbps(), 0, 'g', 3)
                              : tr("corrupted bytes, log scale from 1 B to %1; green: nothing corrupted")
                                    .arg(byteText(m_matrix->maxCorruptedBytes()));
    m_legend->setText(tr("Rows send, columns receive · ✗ faulty GPU · outlined: faulty link · blank: not "
                         "tested\nColour: %1 (dark to pale)")
                          .arg(scale));
    QStringList gpus, links;
    for (size_t g = 0; g < m_matrix->size(); ++g)
        if (m_matrix->faultyGpus[g]) gpus << QString::number(g);
    for (const LinkCell& c : m_matrix->cells)
        if (c.faultyLink) links << QStringLiteral("%1→%2").arg(c.src).arg(c.dst);
    m_summary->setText(tr("<b>%1</b> (%2), %3 ranks<br>faulty GPUs: %4 · faulty links: %5")
                           .arg(QFileInfo(qs(m_matrix->path)).fileName().toHtmlEscaped(), qs(m_matrix->kind))
                           .arg(m_matrix->size())
                           .arg(gpus.isEmpty() ? tr("none") : gpus.join(QStringLiteral(", ")))
                           .arg(links.isEmpty() ? tr("none") : links.join(QStringLiteral(", "))));
}

}  // namespace faultline::views
