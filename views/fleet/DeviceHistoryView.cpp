#include "views/fleet/DeviceHistoryView.h"

#include <qcustomplot.h>

#include <QAbstractItemView>
#include <QAction>
#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSplitter>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/ledger/LedgerLocation.h"
#include "views/plots/PlotStyle.h"
#include "views/replay/WorkerJob.h"

namespace faultline::views {
namespace {

// A row draws its marks themselves while at most this many fall in the visible range.
constexpr int kMaxRawMarks = 1000;
// Pixels per bin, at least, once a row draws counts.
constexpr int kPixelsPerBin = 3;
// How near (pixels) a click must be to a fact to name it.
constexpr double kPickPixels = 6;

double laneY(HistoryLane lane)
{
    return double(kHistoryLaneCount - 1 - size_t(lane));
}

QString dayText(double seconds)
{
    return QDateTime::fromSecsSinceEpoch(qint64(seconds), Qt::UTC).toString(QStringLiteral("yyyy-MM-dd"));
}

QColor laneColour(HistoryLane lane)
{
    switch (lane) {
        case HistoryLane::Xid:
        case HistoryLane::SXid:
        case HistoryLane::Flags:
            return PlotStyle::divergentColor();
        case HistoryLane::Reset:
            return PlotStyle::warningColor();
        case HistoryLane::Evidence:
            return PlotStyle::selectionColor();
        case HistoryLane::Health:
            return PlotStyle::okColor();
        default:
            return PlotStyle::neutralBarColor();
    }
}

QCPScatterStyle::ScatterShape laneShape(HistoryLane lane)
{
    switch (lane) {
        case HistoryLane::Identity:
            return QCPScatterStyle::ssSquare;
        case HistoryLane::Boot:
            return QCPScatterStyle::ssTriangle;
        case HistoryLane::Reset:
            return QCPScatterStyle::ssTriangleInverted;
        case HistoryLane::Campaign:
            return QCPScatterStyle::ssDiamond;
        case HistoryLane::Evidence:
            return QCPScatterStyle::ssStar;
        default:
            return QCPScatterStyle::ssDisc;
    }
}

QCPGraph* pointsGraph(QCustomPlot* plot, QCPAxisRect* rect, const QColor& colour,
                      QCPScatterStyle::ScatterShape shape, const QString& name)
{
    QCPGraph* g = plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(shape, colour, colour, 6));
    g->setPen(QPen(colour));
    g->setName(name);
    return g;
}

QCPErrorBars* intervalBars(QCPGraph* graph, const QColor& colour)
{
    auto* bars = new QCPErrorBars(graph->keyAxis(), graph->valueAxis());
    bars->setDataPlottable(graph);
    bars->setPen(QPen(colour));
    bars->setWhiskerWidth(5);
    bars->removeFromLegend();
    return bars;
}

}  // namespace

QString deviceHistoryKey(const QString& serial, const QString& uuid)
{
    const QString s = serial.trimmed();
    const bool noSerial = s.isEmpty() || s.compare(QStringLiteral("n/a"), Qt::CaseInsensitive) == 0 ||
                          s.compare(QStringLiteral("[N/A]"), Qt::CaseInsensitive) == 0;
    if (!noSerial) return s;
    const QString u = uuid.trimmed();
    return u.compare(QStringLiteral("n/a"), Qt::CaseInsensitive) == 0 ? QString() : u;
}

QAction* addDeviceHistoryAction(QAbstractItemView* view, std::function<QString(const QModelIndex&)> keyOf)
{
    auto* action = new QAction(DeviceHistoryView::tr("Device &history…"), view);
    action->setObjectName(QStringLiteral("deviceHistoryAction"));
    action->setToolTip(
        DeviceHistoryView::tr("This GPU's history from the ledger: events, health, campaigns, rules"));
    view->setContextMenuPolicy(Qt::ActionsContextMenu);
    view->addAction(action);
    QObject::connect(action, &QAction::triggered, view, [view, keyOf = std::move(keyOf)] {
        openDeviceHistory(view, keyOf(view->currentIndex()));
    });
    return action;
}

DeviceHistoryView* openDeviceHistory(QWidget* from, const QString& key, const QString& ledgerSpec)
{
    auto* view = new DeviceHistoryView(from ? from->window() : nullptr);
    view->setWindowFlag(Qt::Window);
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->resize(1400, 800);
    view->show();
    view->load(ledgerSpec, key);
    return view;
}

DeviceHistoryView::DeviceHistoryView(QWidget* parent)
    : QWidget(parent), m_history(std::make_shared<DeviceHistory>()), m_maxRawMarks(kMaxRawMarks)
{
    setObjectName(QStringLiteral("deviceHistoryView"));
    setWindowTitle(tr("Device history"));
    auto* form = new QHBoxLayout;
    form->addWidget(new QLabel(tr("Ledger")));
    m_ledger = new QLineEdit;
    m_ledger->setObjectName(QStringLiteral("historyLedger"));
    const auto defaultPath = defaultLedgerPath();
    m_ledger->setPlaceholderText(defaultPath ? tr("default: %1").arg(QString::fromStdString(*defaultPath))
                                             : tr("path or postgresql:// URL"));
    m_ledger->setToolTip(
        tr("As --ledger takes it: a path, sqlite:///abs/path or postgresql://…; empty: the "
           "default ledger in your data directory"));
    form->addWidget(m_ledger, 3);
    form->addWidget(new QLabel(tr("GPU")));
    m_key = new QLineEdit;
    m_key->setObjectName(QStringLiteral("historyKey"));
    m_key->setPlaceholderText(tr("board serial or UUID"));
    form->addWidget(m_key, 1);
    m_show = new QPushButton(tr("&Show"));
    m_show->setObjectName(QStringLiteral("historyShow"));
    form->addWidget(m_show);
    m_all = new QPushButton(tr("&Whole history"));
    m_all->setObjectName(QStringLiteral("historyAll"));
    m_all->setToolTip(tr("Zoom out to the whole history (the wheel zooms, dragging pans)"));
    form->addWidget(m_all);

    m_status = new QLabel(tr("Name a GPU by its board serial or UUID."));
    m_status->setObjectName(QStringLiteral("historyStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_plot = new QCustomPlot;
    m_plot->setObjectName(QStringLiteral("historyPlot"));
    m_plot->setMinimumSize(400, 300);
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, QString(), PlotStyle::titleFont(font()));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_lanesRect = m_plot->axisRect();
    m_ratesRect = new QCPAxisRect(m_plot);
    m_plot->plotLayout()->addElement(2, 0, m_ratesRect);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.01);
    m_plot->plotLayout()->setRowStretchFactor(1, 3);
    m_plot->plotLayout()->setRowStretchFactor(2, 2);
    auto* margins = new QCPMarginGroup(m_plot);
    for (QCPAxisRect* rect : {m_lanesRect, m_ratesRect}) {
        rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
        rect->setRangeDrag(Qt::Horizontal);
        rect->setRangeZoom(Qt::Horizontal);
        QSharedPointer<QCPAxisTickerDateTime> ticker(new QCPAxisTickerDateTime);
        ticker->setDateTimeFormat(QStringLiteral("yyyy-MM-dd"));
        ticker->setDateTimeSpec(Qt::UTC);
        rect->axis(QCPAxis::atBottom)->setTicker(ticker);
        rect->axis(QCPAxis::atRight)->setVisible(true);
    }
    m_lanesRect->axis(QCPAxis::atRight)->setTickLabels(false);
    m_lanesRect->axis(QCPAxis::atLeft)->setTicker(QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText));
    m_lanesRect->axis(QCPAxis::atLeft)->setRange(-0.7, double(kHistoryLaneCount) - 0.3);
    m_lanesRect->axis(QCPAxis::atLeft)->grid()->setVisible(true);
    m_ratesRect->axis(QCPAxis::atLeft)->setLabel(tr("failure rate (95% interval)"));
    m_ratesRect->axis(QCPAxis::atRight)->setLabel(tr("health counters"));
    for (size_t i = 0; i < kHistoryLaneCount; ++i) {
        const auto lane = HistoryLane(i);
        m_laneGraphs[i] =
            pointsGraph(m_plot, m_lanesRect, laneColour(lane), laneShape(lane), historyLaneName(lane));
        m_laneGraphs[i]->removeFromLegend();
    }
    m_failing = pointsGraph(m_plot, m_ratesRect, PlotStyle::divergentColor(), QCPScatterStyle::ssDisc,
                            tr("campaigns that failed"));
    m_clean = pointsGraph(m_plot, m_ratesRect, PlotStyle::okColor(), QCPScatterStyle::ssCircle,
                          tr("clean campaigns"));
    m_failingBars = intervalBars(m_failing, PlotStyle::divergentColor());
    m_cleanBars = intervalBars(m_clean, PlotStyle::okColor());
    m_plot->legend->setVisible(true);
    m_lanesRect->insetLayout()->take(m_plot->legend);
    m_ratesRect->insetLayout()->addElement(m_plot->legend, Qt::AlignTop | Qt::AlignLeft);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    // Marks, bars, steps, grids and axes drawn without antialiasing and lines as fast polylines: a replot of
    // the whole history stays within a frame (bench/RESULTS.md, "Device history view").
    m_plot->setNotAntialiasedElements(QCP::aePlottables | QCP::aeScatters | QCP::aeGrid | QCP::aeSubGrid |
                                      QCP::aeAxes);
    m_plot->setPlottingHint(QCP::phFastPolylines, true);
    PlotStyle::apply(m_plot);
    // The two time axes move together; a range change re-bins the rows once per turn.
    QCPAxis* lanesX = m_lanesRect->axis(QCPAxis::atBottom);
    QCPAxis* ratesX = m_ratesRect->axis(QCPAxis::atBottom);
    connect(lanesX, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), ratesX,
            qOverload<const QCPRange&>(&QCPAxis::setRange));
    connect(ratesX, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), lanesX,
            qOverload<const QCPRange&>(&QCPAxis::setRange));
    connect(lanesX, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            &DeviceHistoryView::scheduleRebinOnUi);
    connect(m_plot, &QCustomPlot::mousePress, this, &DeviceHistoryView::onPlotClickOnUi);

    m_detail = new QLabel(tr("Click a mark to name it."));
    m_detail->setObjectName(QStringLiteral("historyDetail"));
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_rules = new QTreeWidget;
    m_rules->setObjectName(QStringLiteral("historyRules"));
    m_rules->setHeaderLabels({tr("Rule that fired"), tr("Reason")});
    m_rules->setWordWrap(true);
    // Sized from the few distinct conclusions (fillRulesOnUi), not by measuring every row.
    m_rules->header()->setSectionResizeMode(0, QHeaderView::Interactive);
    m_rules->header()->setStretchLastSection(true);
    m_rules->setMinimumWidth(300);
    // The reason of the chosen rule, whole, where the marks are named.
    connect(m_rules, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        if (item != nullptr && !item->toolTip(1).isEmpty()) m_detail->setText(item->toolTip(1));
    });

    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_plot, 1);
    leftLayout->addWidget(m_detail);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    split->addWidget(m_rules);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({1000, 500});

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);

    connect(m_show, &QPushButton::clicked, this, &DeviceHistoryView::reload);
    connect(m_key, &QLineEdit::returnPressed, this, &DeviceHistoryView::reload);
    connect(m_all, &QPushButton::clicked, this, &DeviceHistoryView::showAll);
    clearPlotOnUi();
}

void DeviceHistoryView::load(const QString& ledgerSpec, const QString& key)
{
    m_ledger->setText(ledgerSpec);
    m_key->setText(key);
    reload();
}

void DeviceHistoryView::reload()
{
    const QString spec = m_ledger->text().trimmed();
    const QString key = m_key->text().trimmed();
    const quint64 job = ++m_job;
    if (key.isEmpty()) {
        m_loading = false;
        m_status->setText(tr("Name a GPU by its board serial or UUID."));
        return;
    }
    m_loading = true;
    setWindowTitle(tr("Device history — %1").arg(key));
    m_status->setText(
        tr("Reading the history of %1 from %2…").arg(key, spec.isEmpty() ? tr("the default ledger") : spec));
    using Answer = std::shared_ptr<const DeviceHistory>;
    startWorkerJob<Answer>(
        this,
        [spec, key](QPromise<Answer>& promise) {
            promise.addResult(std::make_shared<const DeviceHistory>(loadDeviceHistoryOnWorker(spec, key)));
        },
        [](int, int, int, const QString&) {},
        [this, job](Answer history) { showHistoryOnUi(job, std::move(history)); });
}

void DeviceHistoryView::showHistoryOnUi(quint64 job, std::shared_ptr<const DeviceHistory> history)
{
    if (job != m_job) return;  // a newer request superseded it
    m_loading = false;
    if (!history) history = std::make_shared<DeviceHistory>();
    m_history = history;
    clearPlotOnUi();
    if (!history->error.isEmpty()) {
        m_status->setText(tr("<b>Could not read the history:</b> %1").arg(history->error.toHtmlEscaped()));
        emit failed(history->error);
        return;
    }
    auto* ticker = static_cast<QCPAxisTickerText*>(m_lanesRect->axis(QCPAxis::atLeft)->ticker().data());
    ticker->clear();
    const QLocale locale;
    for (size_t i = 0; i < kHistoryLaneCount; ++i) {
        const auto lane = HistoryLane(i);
        ticker->addTick(laneY(lane),
                        QStringLiteral("%1 (%2)").arg(historyLaneName(lane),
                                                      locale.toString(qulonglong(history->lanes[i].size()))));
    }
    fillRatesOnUi();
    QStringList ids;
    if (!history->serials.isEmpty()) ids << tr("serial %1").arg(history->serials.join(QStringLiteral(", ")));
    if (!history->uuids.isEmpty()) ids << tr("UUID %1").arg(history->uuids.join(QStringLiteral(", ")));
    QString text = tr("%1: %2 facts from %3 to %4 in %5")
                       .arg(ids.join(QStringLiteral("; ")), locale.toString(qulonglong(history->entries)),
                            dayText(history->first), dayText(history->last), history->location);
    if (history->undated > 0) text += tr(" (%1 without a readable time, not drawn)").arg(history->undated);
    showAll();
    rebinOnUi();
    // The status line and the rules' list (over a hundred word-wrapped rows on a long history)
    // change the window's layout: laid out and painted in a turn of their own, after the plot's
    // first frame (together they took the first frame from about 12 to 20-30 ms).
    QTimer::singleShot(1, this, [this, job, text] {
        if (job != m_job) return;
        m_status->setText(text.toHtmlEscaped());
        fillRulesOnUi();
        emit historyShown();
    });
}

void DeviceHistoryView::clearPlotOnUi()
{
    for (QCPGraph* g : m_laneGraphs) g->data()->clear();
    for (HistoryPoints& p : m_points) p = {};
    m_failing->data()->clear();
    m_clean->data()->clear();
    m_failingBars->data()->clear();
    m_cleanBars->data()->clear();
    for (QCPGraph* g : m_counterGraphs) m_plot->removeGraph(g);
    m_counterGraphs.clear();
    m_rules->clear();
    m_title->setText(QString());
    m_detail->setText(tr("Click a mark to name it."));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void DeviceHistoryView::fillRatesOnUi()
{
    QVector<double> ft, fr, flo, fhi, ct, cr, clo, chi;
    double top = 0.05;
    for (const HistoryRate& r : m_history->rates) {
        auto [t, rate, lo, hi] = r.failing ? std::tie(ft, fr, flo, fhi) : std::tie(ct, cr, clo, chi);
        t.push_back(r.t);
        rate.push_back(r.rate);
        lo.push_back(std::max(0.0, r.rate - r.low));
        hi.push_back(std::max(0.0, r.high - r.rate));
        top = std::max(top, r.high);
    }
    m_failing->setData(ft, fr, true);
    m_failingBars->setData(flo, fhi);
    m_clean->setData(ct, cr, true);
    m_cleanBars->setData(clo, chi);
    m_ratesRect->axis(QCPAxis::atLeft)->setRange(0, std::min(1.0, top * 1.1));
    const auto colours = PlotStyle::categoricalColours(m_history->counters.size() + 2);
    double counterTop = 1;
    for (size_t i = 0; i < m_history->counters.size(); ++i) {
        const HistoryCounter& c = m_history->counters[i];
        QCPGraph* g =
            m_plot->addGraph(m_ratesRect->axis(QCPAxis::atBottom), m_ratesRect->axis(QCPAxis::atRight));
        g->setName(c.name);
        g->setPen(QPen(colours[i + 2], 1.5));
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setData(c.t, c.value, true);
        for (double v : c.value) counterTop = std::max(counterTop, v);
        m_counterGraphs.push_back(g);
    }
    m_ratesRect->axis(QCPAxis::atRight)->setRange(0, counterTop * 1.1);
}

void DeviceHistoryView::fillRulesOnUi()
{
    m_rules->clear();
    if (m_history->findings.empty()) {
        auto* item =
            new QTreeWidgetItem(m_rules, {tr("nothing to conclude"), tr("No rule fired on this history.")});
        item->setDisabled(true);
        return;
    }
    // One row per rule and conclusion, in the order they first fired; a rule that fired more than
    // once holds its findings as children (collapsed), and says how often and the latest reason.
    // Ten years can fire a hundred rules: the first frame then lays out and draws a few rows.
    std::vector<std::vector<const HistoryFinding*>> groups;
    for (const HistoryFinding& f : m_history->findings) {
        auto same = std::find_if(groups.begin(), groups.end(), [&f](const auto& g) {
            return g.front()->rule == f.rule && g.front()->conclusion == f.conclusion;
        });
        if (same == groups.end())
            groups.push_back({&f});
        else
            same->push_back(&f);
    }
    int width = m_rules->fontMetrics().horizontalAdvance(m_rules->headerItem()->text(0));
    auto addFinding = [](QTreeWidgetItem* item, const HistoryFinding& f) {
        item->setToolTip(1, f.reason);
        item->setData(0, Qt::UserRole, f.rule);
        if (f.rule == QStringLiteral("rma_candidate")) item->setForeground(0, PlotStyle::divergentColor());
    };
    for (const auto& group : groups) {
        const HistoryFinding& latest = *group.back();
        width = std::max(width, m_rules->fontMetrics().horizontalAdvance(latest.conclusion));
        if (group.size() == 1) {
            addFinding(new QTreeWidgetItem(m_rules, {latest.conclusion, latest.reason}), latest);
            continue;
        }
        auto* top = new QTreeWidgetItem(
            m_rules,
            {latest.conclusion, tr("%1 times; the latest: %2").arg(group.size()).arg(latest.reason)});
        addFinding(top, latest);
        for (const HistoryFinding* f : group)
            addFinding(new QTreeWidgetItem(top, {f->conclusion, f->reason}), *f);
    }
    m_rules->header()->resizeSection(
        0, width + m_rules->indentation() + 2 * m_rules->fontMetrics().averageCharWidth());
}

void DeviceHistoryView::setTimeRange(double from, double to)
{
    m_lanesRect->axis(QCPAxis::atBottom)->setRange(from, to);
}

void DeviceHistoryView::showAll()
{
    const double span = std::max(86400.0, m_history->last - m_history->first);
    setTimeRange(m_history->first - span * 0.02, m_history->last + span * 0.02);
}

void DeviceHistoryView::setMaxRawMarks(int marks)
{
    m_maxRawMarks = marks;
    rebinOnUi();
}

void DeviceHistoryView::scheduleRebinOnUi()
{
    if (m_rebinQueued) return;
    m_rebinQueued = true;
    QTimer::singleShot(0, this, [this] {
        if (!m_rebinQueued) return;  // a direct rebinOnUi already drew this range
        rebinOnUi();
    });
}

void DeviceHistoryView::rebinOnUi()
{
    m_rebinQueued = false;
    const QCPRange range = m_lanesRect->axis(QCPAxis::atBottom)->range();
    const int maxBins = std::max(50, m_lanesRect->width() / kPixelsPerBin);
    QString binned;
    for (size_t i = 0; i < kHistoryLaneCount; ++i) {
        HistoryPoints p =
            historyPoints(m_history->lanes[i], range.lower, range.upper, m_maxRawMarks, maxBins);
        QVector<double> y(p.t.size(), laneY(HistoryLane(i)));
        m_laneGraphs[i]->setData(p.t, y, true);
        if (p.binSeconds > 0 && binned.isEmpty()) binned = historyBinName(p.binSeconds);
        m_points[i] = std::move(p);
    }
    QString title = m_history->key;
    if (!binned.isEmpty()) title += tr(" — busy rows drawn as counts per %1 at this zoom").arg(binned);
    m_title->setText(title);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString DeviceHistoryView::factAt(const QPointF& pixel) const
{
    const QLocale locale;
    if (m_lanesRect->rect().contains(pixel.toPoint())) {
        QCPAxis* x = m_lanesRect->axis(QCPAxis::atBottom);
        const long row = std::lround(m_lanesRect->axis(QCPAxis::atLeft)->pixelToCoord(pixel.y()));
        if (row < 0 || row >= long(kHistoryLaneCount)) return {};
        const size_t lane = kHistoryLaneCount - 1 - size_t(row);
        const double t = x->pixelToCoord(pixel.x());
        const double tol = std::abs(x->pixelToCoord(pixel.x() + kPickPixels) - t);
        const HistoryPoints& p = m_points[lane];
        int best = -1;
        for (int i = int(std::lower_bound(p.t.begin(), p.t.end(), t - tol) - p.t.begin());
             i < p.t.size() && p.t[i] <= t + tol; ++i)
            if (best < 0 || std::abs(p.t[i] - t) < std::abs(p.t[best] - t)) best = i;
        if (best < 0) return {};
        const auto& marks = m_history->lanes[lane];
        if (p.binSeconds == 0) {
            auto it = std::lower_bound(marks.begin(), marks.end(), p.t[best],
                                       [](const HistoryMark& m, double v) { return m.t < v; });
            return it == marks.end() ? QString() : dayText(it->t) + QStringLiteral("  ") + it->summary;
        }
        const double start = p.t[best] - p.binSeconds / 2;
        auto it = std::lower_bound(marks.begin(), marks.end(), start,
                                   [](const HistoryMark& m, double v) { return m.t < v; });
        return tr("%1 × %2 in the %3 from %4; the first: %5")
            .arg(locale.toString(p.counts[best]), historyLaneName(HistoryLane(lane)),
                 historyBinName(p.binSeconds), dayText(start), it == marks.end() ? QString() : it->summary);
    }
    if (m_ratesRect->rect().contains(pixel.toPoint())) {
        QCPAxis* x = m_ratesRect->axis(QCPAxis::atBottom);
        const double t = x->pixelToCoord(pixel.x());
        const double tol = std::abs(x->pixelToCoord(pixel.x() + kPickPixels) - t);
        const HistoryRate* best = nullptr;
        for (const HistoryRate& r : m_history->rates)
            if (std::abs(r.t - t) <= tol && (!best || std::abs(r.t - t) < std::abs(best->t - t))) best = &r;
        return best ? dayText(best->t) + QStringLiteral("  ") + best->summary : QString();
    }
    return {};
}

void DeviceHistoryView::onPlotClickOnUi(QMouseEvent* event)
{
    const QString fact = factAt(event->position());
    if (!fact.isEmpty()) m_detail->setText(fact);
}

}  // namespace faultline::views
