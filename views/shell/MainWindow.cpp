#include "views/shell/MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QShowEvent>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QTreeView>

#include "views/evidence/EvidenceExportDialog.h"
#include "views/fleet/FleetView.h"
#include "views/fleet/HealthPanel.h"
#include "views/fleet/LinksView.h"
#include "views/heatmap/HeatmapView.h"
#include "views/incident/IncidentBanner.h"
#include "views/incident/IncidentLoader.h"
#include "views/incident/IncidentPage.h"
#include "views/incident/OpenIncidentDialog.h"
#include "views/incident/OpenedFiles.h"
#include "views/incident/TensorTreePanel.h"
#include "views/replay/DevicesPanel.h"
#include "views/replay/ReplayPanel.h"
#include "views/replay/WorkerJob.h"
#include "views/results/ResultTabs.h"
#include "views/results/ResultView.h"
#include "views/shell/Exporter.h"
#include "views/shell/HelpDialog.h"
#include "views/shell/RecentFiles.h"
#include "views/shell/ScreenshotDriver.h"
#include "views/shell/Theme.h"

namespace faultline::views {

namespace {
const char* const kDarkKey = "darkTheme";
const char* const kGeometryKey = "geometry";
const char* const kStateKey = "windowState";
const char* const kPageKey = "pageLayout";
constexpr int kStateVersion = 2;

bool isWithin(const QWidget* w, const QWidget* ancestor)
{
    for (; w; w = w->parentWidget())
        if (w == ancestor) return true;
    return false;
}
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setObjectName(QStringLiteral("MainWindow"));
    setWindowTitle(tr("Faultline"));
    setAcceptDrops(true);
    setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
    Theme::apply(QSettings().value(QLatin1String(kDarkKey), false).toBool());

    m_loader = new IncidentLoader(this);
    connect(m_loader, &IncidentLoader::loaded, this, &MainWindow::onLoadedOnUi);
    connect(m_loader, &IncidentLoader::failed, this, &MainWindow::onLoadFailedOnUi);
    connect(m_loader, &IncidentLoader::progress, this, [this](quint64, double fraction, const QString& what) {
        m_page->banner()->showProgress(fraction, what);
        m_statusLabel->setText(what);
    });
    connect(m_loader, &IncidentLoader::cancelled, this, [this] {
        m_page->banner()->hideProgress();
        statusBar()->showMessage(tr("Opening cancelled; the incident shown before is still open"), 8000);
        m_statusLabel->setText(m_incident ? m_incident->summary() : tr("Nothing open"));
        emit loadingCancelled();
    });

    m_page = new IncidentPage;
    setCentralWidget(m_page);
    connect(m_page->banner(), &IncidentBanner::cancelRequested, this, &MainWindow::cancelLoading);
    createDocks();

    m_statusLabel = new QLabel(tr("Nothing open"));
    m_statusLabel->setObjectName(QStringLiteral("statusSummary"));
    statusBar()->addPermanentWidget(m_statusLabel, 1);

    createActions();
    connect(qApp, &QApplication::focusChanged, this, [this](QWidget*, QWidget* now) {
        if (isWithin(now, m_replay->resultsView()))
            m_lastTableView = m_replay->resultsView();
        else if (isWithin(now, m_tree->view()))
            m_lastTableView = m_tree->view();
        else if (isWithin(now, m_devices->traceDevices()))
            m_lastTableView = m_devices->traceDevices();
    });

    QSize size(1680, 1000);
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        size = size.boundedTo(screen->availableGeometry().size() * 0.96);
    resize(size);
    QSettings settings;
    const QByteArray state = settings.value(QLatin1String(kStateKey)).toByteArray();
    restoreGeometry(settings.value(QLatin1String(kGeometryKey)).toByteArray());
    if (state.isEmpty() || !restoreState(state, kStateVersion)) {
        // First start: size the docks once the window is laid out.
        QTimer::singleShot(0, this, [this] {
            resizeDocks({m_treeDock, m_replayDock}, {410, 460}, Qt::Horizontal);
            m_defaultState = saveState(kStateVersion);
        });
    }
    m_defaultState = saveState(kStateVersion);
    m_page->restoreLayout(settings.value(QLatin1String(kPageKey)).toByteArray());
    m_screenshot = ScreenshotDriver::fromEnvironment(this);
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks()
{
    m_tree = new TensorTreePanel;
    m_treeDock = new QDockWidget(tr("Tensors and ops"), this);
    m_treeDock->setObjectName(QStringLiteral("tensorTreeDock"));
    m_treeDock->setWidget(m_tree);
    addDockWidget(Qt::LeftDockWidgetArea, m_treeDock);
    connect(m_tree, &TensorTreePanel::entrySelected, this, &MainWindow::onEntrySelectedOnUi);
    connect(m_page, &IncidentPage::entryClicked, m_tree, &TensorTreePanel::selectEntry);
    connect(m_tree, &TensorTreePanel::toleranceRequested, this, &MainWindow::compareAgain);

    m_replay = new ReplayPanel;
    m_replayDock = new QDockWidget(tr("Replay"), this);
    m_replayDock->setObjectName(QStringLiteral("replayDock"));
    m_replayDock->setWidget(m_replay);
    addDockWidget(Qt::RightDockWidgetArea, m_replayDock);
    connect(m_replay, &ReplayPanel::stateChanged, this,
            [this](const QString& s) { statusBar()->showMessage(s, 6000); });
    // Tile->SM maps a replay recorded are in the incident now: the heatmap re-reads them.
    connect(m_replay, &ReplayPanel::smMapsRecorded, m_page->heatmap(), &HeatmapView::refreshSmMap);

    m_devices = new DevicesPanel;
    m_devicesDock = new QDockWidget(tr("Devices"), this);
    m_devicesDock->setObjectName(QStringLiteral("devicesDock"));
    m_devicesDock->setWidget(m_devices);
    addDockWidget(Qt::RightDockWidgetArea, m_devicesDock);
    tabifyDockWidget(m_replayDock, m_devicesDock);

    m_fleet = new FleetView;
    m_fleetDock = new QDockWidget(tr("Fleet"), this);
    m_fleetDock->setObjectName(QStringLiteral("fleetDock"));
    m_fleetDock->setWidget(m_fleet);
    // The replay and devices docks keep the full height on the right (their controls need it);
    // the fleet table spans the bottom under the tree and the central views.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    addDockWidget(Qt::BottomDockWidgetArea, m_fleetDock);
    m_fleetDock->hide();
    connect(m_fleet, &FleetView::gpuSelected, this, [this](const QString& file, const QString& target) {
        statusBar()->showMessage(tr("%1: its node's campaign is %2").arg(target, file), 10000);
    });
    connect(m_devices, &DevicesPanel::localGpusListed, m_replay, &ReplayPanel::setLocalGpus);
    connect(m_devices, &DevicesPanel::localGpuUuidsListed, m_page->heatmap(), &HeatmapView::setLocalGpus);

    // The links view of a sweep shares the left side with the tree; the block of the selected
    // link is shown by the central page like any compared pair.
    m_links = new LinksView;
    m_linksDock = new QDockWidget(tr("Links"), this);
    m_linksDock->setObjectName(QStringLiteral("linksDock"));
    m_linksDock->setWidget(m_links);
    addDockWidget(Qt::LeftDockWidgetArea, m_linksDock);
    tabifyDockWidget(m_treeDock, m_linksDock);
    m_linksDock->hide();
    connect(m_links, &LinksView::blockShown, this, &MainWindow::onLinkBlockShownOnUi);
    connect(m_links, &LinksView::blockFailed, this, [this](const QString& message) {
        showError(tr("Could not compare the link's block:"), message);
    });

    // Results files (campaigns, comparisons, health, evidence) open read-only, one tab each,
    // below the central page: the incident stays as it is.
    m_results = new ResultTabs;
    m_resultsDock = new QDockWidget(tr("Results"), this);
    m_resultsDock->setObjectName(QStringLiteral("resultsDock"));
    m_resultsDock->setWidget(m_results);
    addDockWidget(Qt::BottomDockWidgetArea, m_resultsDock);
    tabifyDockWidget(m_fleetDock, m_resultsDock);
    m_resultsDock->hide();
    m_replayDock->raise();
}

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open Incident…"), this, [this] { openIncidentDialog(); });
    open->setShortcut(QKeySequence::Open);
    QAction* openResults = file->addAction(tr("Open Re&sults…"), this, [this] {
        const QStringList paths = QFileDialog::getOpenFileNames(
            this,
            tr("Open results beside the incident: campaigns, comparisons, sweeps, fleets, health, bundles"),
            QString(), tr("Results (*.h5 *.hdf5 *.json *.tar);;All files (*)"));
        if (!paths.isEmpty()) openFiles(paths);
    });
    openResults->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    file->addAction(tr("Open Evidence &Bundle Folder…"), this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Open an evidence bundle (its folder)"));
        if (!dir.isEmpty()) openFiles({dir});
    });
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    QAction* close = file->addAction(tr("&Close Incident"), this, &MainWindow::closeIncident);
    close->setShortcut(QKeySequence::Close);
    file->addSeparator();
    QAction* png = file->addAction(tr("Export Plot as &PNG…"), this,
                                   [this] { exportPlotWithDialog(QStringLiteral("png")); });
    png->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction* pdf = file->addAction(tr("Export Plot as P&DF…"), this,
                                   [this] { exportPlotWithDialog(QStringLiteral("pdf")); });
    pdf->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    QAction* csv = file->addAction(tr("Export &Table as CSV…"), this, &MainWindow::exportTableWithDialog);
    csv->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T));
    file->addAction(tr("Export E&vidence…"), this, [this] {
        EvidenceExportDialog dialog(this);
        const QString results = m_replay->resultsPath();
        dialog.setIncidentFiles(m_incident ? m_incident->tracePath : QString(),
                                QFileInfo::exists(results) ? results : QString());
        const HealthPanel* health = m_devices->healthPanel();
        dialog.setHealthFiles(health->loadedLogs(), health->loadedNvidiaSmi());
        dialog.exec();
    });
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    m_viewMenu->addAction(m_treeDock->toggleViewAction());
    m_viewMenu->addAction(m_replayDock->toggleViewAction());
    m_viewMenu->addAction(m_devicesDock->toggleViewAction());
    m_viewMenu->addAction(m_linksDock->toggleViewAction());
    m_viewMenu->addAction(m_fleetDock->toggleViewAction());
    m_viewMenu->addAction(m_resultsDock->toggleViewAction());
    m_viewMenu->addSeparator();
    QAction* fit = m_viewMenu->addAction(tr("&Fit Heatmap"), m_page->heatmap(), &HeatmapView::fitAll);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    QAction* dark = m_viewMenu->addAction(tr("&Dark Theme"));
    dark->setCheckable(true);
    dark->setChecked(QSettings().value(QLatin1String(kDarkKey), false).toBool());
    connect(dark, &QAction::toggled, this, [](bool on) {
        QSettings().setValue(QLatin1String(kDarkKey), on);
        Theme::apply(on);
    });
    m_viewMenu->addAction(tr("&Reset Layout"), this, [this] { restoreState(m_defaultState, kStateVersion); });

    QMenu* replay = menuBar()->addMenu(tr("&Replay"));
    QAction* run = replay->addAction(tr("&Run Campaign"), this, [this] {
        m_replayDock->show();
        m_replayDock->raise();
        m_replay->start();
    });
    run->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    QAction* cancel = replay->addAction(tr("&Cancel Campaign"), m_replay, &ReplayPanel::cancel);
    cancel->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    QAction* stop = replay->addAction(tr("Cancel &Opening"), this, &MainWindow::cancelLoading);
    stop->setShortcut(QKeySequence(Qt::Key_Escape));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* guide = help->addAction(tr("&Guide and Shortcuts"), this, [this] {
        auto* dialog = new HelpDialog(menuBar(), this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->show();
    });
    guide->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&About Faultline"), this, [this] {
        QMessageBox::about(
            this, tr("About Faultline"),
            tr("<b>Faultline %1</b><br>GPU forensics workbench: where, which bits and how often a suspect "
               "device diverges.<br>Licensed under the GPL-3.0-or-later (QCustomPlot).")
                .arg(QApplication::applicationVersion()));
    });
}

void MainWindow::openFiles(const QStringList& paths)
{
    if (paths.isEmpty()) return;
    const quint64 job = ++m_openJob;
    m_probing = true;
    m_page->banner()->clearError();
    m_page->banner()->showProgress(0, tr("Opening %1…").arg(RecentFiles::label(paths)));
    // What each file is (a trace, a snapshot or a results file) is decided by its content, off
    // the GUI thread, where results files are also read and summarised.
    startWorkerJob<std::shared_ptr<const OpenedFiles>>(
        this,
        [paths](QPromise<std::shared_ptr<const OpenedFiles>>& promise) {
            promise.addResult(std::make_shared<const OpenedFiles>(OpenedFiles::probeOnWorker(paths)));
        },
        [](int, int, int, const QString&) {},
        [this, job](std::shared_ptr<const OpenedFiles> opened) { onFilesProbedOnUi(job, opened); });
}

void MainWindow::showOpenedResultOnUi(quint64 job, std::shared_ptr<const OpenedFiles> opened, size_t index)
{
    if (job != m_openJob || index >= opened->results.size()) return;  // a newer open superseded it
    const OpenedResult& r = opened->results[index];
    auto next = [this, job, opened, index] {
        if (index + 1 < opened->results.size())
            QTimer::singleShot(0, this,
                               [this, job, opened, index] { showOpenedResultOnUi(job, opened, index + 1); });
    };
    if (r.fleet) {
        showFleetOnUi(r.path, *r.fleet);
        next();
    } else if (r.links) {
        showLinksOnUi(r.path, r.links);
        next();
    } else {
        ResultView* view = m_results->showResult(r.path, r.kind, r.summary);
        if (r.comparison) view->showComparison(r.comparison);
        if (r.rates) view->showRates(r.rates);
        m_resultsDock->show();
        m_resultsDock->raise();
        statusBar()->showMessage(tr("%1 opened beside the incident").arg(r.path), 6000);
        // With an incident to open too, the screenshot waits for the incident.
        const bool grab = m_screenshot && opened->incidentPaths.isEmpty();
        // The next result after this one's dock is sized, in a turn of its own.
        QTimer::singleShot(0, this, [this, path = r.path, grab, next] {
            resizeDocks({m_resultsDock}, {height() * 2 / 5}, Qt::Vertical);
            emit resultShown(path);
            if (grab) m_screenshot->fleetShownOnUi();
            next();
        });
    }
}

OpenIncidentDialog* MainWindow::openIncidentDialog()
{
    auto* dialog = new OpenIncidentDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    // The open incident's files fill the slots: a second Open adds to them (Clear for a new one).
    if (m_incident && !m_showingLinkBlock) {
        QStringList snapshots = m_incident->paths;
        snapshots.removeAll(m_incident->tracePath);
        dialog->setIncidentFiles(m_incident->tracePath, snapshots.value(0), snapshots.value(1));
    }
    connect(dialog, &QDialog::accepted, this, [this, dialog] { openFiles(dialog->paths()); });
    dialog->open();
    return dialog;
}

void MainWindow::onFilesProbedOnUi(quint64 job, std::shared_ptr<const OpenedFiles> opened)
{
    if (job != m_openJob || !opened) return;  // stale: a newer open superseded it, or cancelled
    m_probing = false;
    m_page->banner()->hideProgress();
    // One result per event-loop turn: a bundle's and a health report's tables laid out together
    // stalled the window past 100 ms under load.
    if (!opened->results.empty()) showOpenedResultOnUi(job, opened, 0);
    if (!opened->errors.isEmpty()) onLoadFailedOnUi(job, opened->errors.join(QLatin1Char('\n')));
    if (!opened->incidentPaths.isEmpty()) loadIncidentOnWorker(opened->incidentPaths);
}

void MainWindow::showFleetOnUi(const QString& path, const nlohmann::json& report)
{
    m_fleet->setReport(report);
    m_fleetDock->show();
    m_fleetDock->raise();
    statusBar()->showMessage(tr("Fleet campaign %1").arg(path), 6000);
    // The dock is sized once the layout has placed it (a resize before that is dropped): it asks
    // for three fifths of the window; the views' minimum sizes may leave it less.
    QTimer::singleShot(0, this, [this, path] {
        resizeDocks({m_fleetDock}, {height() * 3 / 5}, Qt::Vertical);
        emit fleetShown(path);
        if (m_screenshot) m_screenshot->fleetShownOnUi();
    });
}

void MainWindow::showLinksOnUi(const QString& path, std::shared_ptr<const LinkMatrix> links)
{
    m_page->banner()->clearError();
    m_linksDock->show();
    m_linksDock->raise();
    RecentFiles::add({path});
    rebuildRecentMenu();
    statusBar()->showMessage(tr("Links of %1").arg(path), 6000);
    // The story cell's block (if any) arrives as an incident; the screenshot waits for it.
    m_links->setMatrix(links);
    const auto [src, dst] = m_links->selectedCell();
    const bool blockPending = src >= 0 && links->at(size_t(src), size_t(dst)).hasBlock();
    QTimer::singleShot(0, this, [this, path, blockPending] {
        // The matrix wants width; the replay panel (no trace here) gives some of it.
        resizeDocks({m_linksDock, m_replayDock}, {width() * 2 / 5, 300}, Qt::Horizontal);
        emit linksShown(path);
        if (m_screenshot && !blockPending) m_screenshot->fleetShownOnUi();
    });
}

void MainWindow::onLinkBlockShownOnUi(std::shared_ptr<const Incident> incident)
{
    // An incident opened from files stays open: the links view draws the block beside it.
    if (m_incident && !m_showingLinkBlock) {
        if (incident)
            statusBar()->showMessage(
                tr("The link's block is drawn under the links matrix, beside the incident"), 8000);
        return;
    }
    if (incident) {
        onLoadedOnUi(0, incident);
        m_showingLinkBlock = true;
        return;
    }
    // A link without a stored block (healthy, untested, or a collective replay, which keeps none):
    // nothing to show; the links view says which.
    m_incident.reset();
    m_showingLinkBlock = false;
    m_tree->setIncident(nullptr);
    m_page->setIncident(nullptr);
    m_replay->setIncident(nullptr);
    m_devices->setIncident(nullptr);
    m_statusLabel->setText(tr("No block to show for the selected link"));
}

void MainWindow::loadIncidentOnWorker(const QStringList& paths)
{
    m_reselect.clear();
    m_page->banner()->clearError();
    m_page->banner()->showProgress(0, tr("Opening %1…").arg(RecentFiles::label(paths)));
    m_statusLabel->setText(tr("Opening %1…").arg(RecentFiles::label(paths)));
    m_loader->loadOnWorker(paths);
}

void MainWindow::compareAgain(const QString& toleranceText)
{
    if (!m_incident || !m_incident->hasPair()) return;
    auto tolerance = parseTolerance(toleranceText.toStdString());
    if (!tolerance) {
        showError(tr("Could not compare:"), QString::fromStdString(tolerance.message()));
        return;
    }
    // The same files through the same loader: the answer replaces the incident like any load,
    // and a newer request (another tolerance, another file) supersedes this one.
    const IncidentEntry* shown = m_incident->entry(m_tree->selectedEntry());
    m_reselect = shown ? shown->name : QString();
    m_page->banner()->clearError();
    m_page->banner()->showProgress(0, tr("Comparing with %1…").arg(toleranceText));
    m_statusLabel->setText(tr("Comparing with %1…").arg(toleranceText));
    m_loader->loadOnWorker(m_incident->paths, *tolerance);
}

void MainWindow::cancelLoading()
{
    if (m_probing) {
        // Still finding out what the files are: their answer is dropped.
        m_probing = false;
        ++m_openJob;
        m_page->banner()->hideProgress();
        statusBar()->showMessage(tr("Opening cancelled; the incident shown before is still open"), 8000);
        emit loadingCancelled();
        return;
    }
    m_loader->cancel();
}

void MainWindow::closeIncident()
{
    m_loader->cancel();
    m_incident.reset();
    m_showingLinkBlock = false;
    m_tree->setIncident(nullptr);
    m_page->setIncident(nullptr);
    m_replay->setIncident(nullptr);
    m_devices->setIncident(nullptr);
    m_page->banner()->hideProgress();
    setWindowTitle(tr("Faultline"));
    m_statusLabel->setText(tr("Nothing open"));
}

void MainWindow::onLoadedOnUi(quint64, std::shared_ptr<const Incident> incident)
{
    // A new incident resets every view.
    m_incident = incident;
    m_showingLinkBlock = false;
    m_page->banner()->hideProgress();
    m_page->banner()->clearError();
    m_tree->setIncident(incident);
    m_page->setIncident(incident);
    m_replay->setIncident(incident);
    m_devices->setIncident(incident);
    setWindowTitle(tr("%1 — Faultline").arg(incident->title()));
    m_statusLabel->setText(incident->summary());
    if (!incident->warnings.isEmpty()) statusBar()->showMessage(incident->warnings.front(), 15000);
    RecentFiles::add(incident->paths);
    rebuildRecentMenu();
    // Compared again: the entry that was shown stays shown; otherwise the story leads.
    std::optional<int> select = incident->storyEntry;
    if (!m_reselect.isEmpty())
        for (const IncidentEntry& e : incident->entries)
            if (e.name == m_reselect) select = e.id;
    m_reselect.clear();
    if (select) m_tree->selectEntry(*select);
    emit incidentShown();
    if (m_screenshot) m_screenshot->incidentShownOnUi();
}

void MainWindow::onLoadFailedOnUi(quint64, const QString& message)
{
    // What was open stays open; the error shows where the user looks, not in a modal dialog.
    m_page->banner()->hideProgress();
    m_statusLabel->setText(m_incident ? m_incident->summary() : tr("Nothing open"));
    showError(tr("Could not open:"), message);
    if (m_screenshot) m_screenshot->failedOnUi(message);
}

void MainWindow::showError(const QString& title, const QString& message)
{
    m_lastError = message;
    statusBar()->showMessage(title + QLatin1Char(' ') + message, 20000);
    m_page->banner()->showError(message, title);
    emit errorShown(message);
}

void MainWindow::onEntrySelectedOnUi(int entryId)
{
    m_page->showEntry(entryId);
    const IncidentEntry* e = m_incident ? m_incident->entry(entryId) : nullptr;
    m_replay->setSelectedOp(e && e->source == EntrySource::TraceOp ? std::optional<size_t>(e->opIndex)
                                                                   : std::nullopt);
}

QAbstractItemModel* MainWindow::currentTableModel() const
{
    if (m_lastTableView == m_replay->resultsView()) return m_replay->resultsView()->model();
    if (m_lastTableView == m_devices->traceDevices()) return m_devices->traceDevices()->model();
    return m_tree->proxy();
}

QString MainWindow::exportCurrentPlot(const QString& path)
{
    const QString error = Exporter::savePlot(m_page->currentPlot(), path);
    if (error.isEmpty())
        statusBar()->showMessage(tr("Plot exported to %1").arg(path), 8000);
    else
        showError(tr("Export failed:"), error);
    return error;
}

QString MainWindow::exportCurrentTable(const QString& path)
{
    const QString error = Exporter::writeCsv(currentTableModel(), path);
    if (error.isEmpty())
        statusBar()->showMessage(tr("Table exported to %1").arg(path), 8000);
    else
        showError(tr("Export failed:"), error);
    return error;
}

void MainWindow::exportPlotWithDialog(const QString& suffix)
{
    const QString filter = suffix == QLatin1String("pdf") ? tr("PDF (*.pdf)") : tr("PNG image (*.png)");
    QString path = QFileDialog::getSaveFileName(this, tr("Export plot"),
                                                QStringLiteral("faultline-plot.") + suffix, filter);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QLatin1Char('.') + suffix;
    exportCurrentPlot(path);
}

void MainWindow::exportTableWithDialog()
{
    QString path = QFileDialog::getSaveFileName(this, tr("Export table"),
                                                QStringLiteral("faultline-table.csv"), tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".csv");
    exportCurrentTable(path);
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QList<QStringList> recent = RecentFiles::load();
    for (const QStringList& paths : recent) {
        QAction* a =
            m_recentMenu->addAction(RecentFiles::label(paths), this, [this, paths] { openFiles(paths); });
        a->setToolTip(paths.join(QLatin1Char('\n')));
    }
    if (!recent.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear Menu"), this, [this] {
            RecentFiles::clear();
            rebuildRecentMenu();
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    if (!m_inventoryAsked) {
        m_inventoryAsked = true;
        m_devices->refreshInventory();
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    QSettings settings;
    settings.setValue(QLatin1String(kGeometryKey), saveGeometry());
    settings.setValue(QLatin1String(kStateKey), saveState(kStateVersion));
    settings.setValue(QLatin1String(kPageKey), m_page->saveLayout());
    m_replay->cancel();
    m_loader->cancel();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile()) paths << url.toLocalFile();
    openFiles(paths);
}

}  // namespace faultline::views
