#pragma once
// The main window only wires: menus and shortcuts, docks (tensor tree, replay, devices, fleet, links), the
// incident loader, the central incident page, recent files, drag and drop, the theme setting,
// and window/dock layout persistence. Views and models hold the logic.
#include <QMainWindow>
#include <QStringList>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/collectives/LinkMatrix.h"
#include "views/incident/Incident.h"

class QAbstractItemModel;
class QDockWidget;
class QLabel;
class QMenu;

namespace faultline::views {

class DevicesPanel;
class FleetView;
class IncidentLoader;
class IncidentPage;
class LinksView;
class OpenIncidentDialog;
class ReplayPanel;
class ResultTabs;
class ScreenshotDriver;
struct OpenedFiles;
class TensorTreePanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens files by what they hold (decided off the GUI thread, core/incident/ResultFile.h):
    // traces and snapshots make an incident (a trace, a suspect and a reference snapshot, in that
    // order, or both); what is open stays until the new incident is ready. Results files open
    // read-only beside the open incident, which stays open: a campaign (`replay --out`), a
    // comparison (`compare --out`), a health report (`health --json`) and an evidence bundle
    // (`evidence --out`, with `verify`'s result) each in a tab of the Results dock, a merged fleet
    // campaign (`merge --out`) in the fleet table, a sweep or collective replay in the links view.
    void openFiles(const QStringList& paths);
    // Compares the open snapshot pair again under `tolerance` ("abs:1e-3", …), off the GUI
    // thread; every view is refreshed when it is done, and a bad tolerance is shown as an error.
    void compareAgain(const QString& tolerance);
    // File > Open Incident: the dialog with a slot per file, filled with the open incident's
    // files; Open loads what the slots name. Window-modal, not blocking; deletes itself.
    OpenIncidentDialog* openIncidentDialog();
    // Cancels a load in flight.
    void cancelLoading();
    void closeIncident();

    // Exports the current plot (PNG/PDF by suffix) / the current table (CSV); "" or the error,
    // which is also shown.
    QString exportCurrentPlot(const QString& path);
    QString exportCurrentTable(const QString& path);
    QAbstractItemModel* currentTableModel() const;

    std::shared_ptr<const Incident> incident() const { return m_incident; }
    TensorTreePanel* treePanel() const { return m_tree; }
    IncidentPage* page() const { return m_page; }
    ReplayPanel* replayPanel() const { return m_replay; }
    DevicesPanel* devicesPanel() const { return m_devices; }
    FleetView* fleetView() const { return m_fleet; }
    LinksView* linksView() const { return m_links; }
    ResultTabs* resultTabs() const { return m_results; }
    IncidentLoader* loader() const { return m_loader; }
    QString lastError() const { return m_lastError; }

signals:
    // An incident was loaded and every view reset to it (its story entry selected).
    void incidentShown();
    void errorShown(const QString& message);
    void loadingCancelled();
    // A merged fleet campaign is shown in the fleet table.
    void fleetShown(const QString& path);
    // A sweep results file is shown in the links view.
    void linksShown(const QString& path);
    // A results file is shown in its tab of the Results dock.
    void resultShown(const QString& path);

protected:
    void closeEvent(QCloseEvent* event) override;
    // The first show asks for this machine's GPU inventory (off the GUI thread), so the replay
    // panel can offer the local GPUs as targets without the Devices tab being opened.
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createDocks();
    void createActions();
    void rebuildRecentMenu();
    void showError(const QString& title, const QString& message);
    void onLoadedOnUi(quint64 job, std::shared_ptr<const Incident> incident);
    void onLoadFailedOnUi(quint64 job, const QString& message);
    void onEntrySelectedOnUi(int entryId);
    void loadIncidentOnWorker(const QStringList& paths);
    void onFilesProbedOnUi(quint64 job, std::shared_ptr<const OpenedFiles> opened);
    // Shows results file `index` of `opened`, then the next one in the next event-loop turn.
    void showOpenedResultOnUi(quint64 job, std::shared_ptr<const OpenedFiles> opened, size_t index);
    void showFleetOnUi(const QString& path, const nlohmann::json& report);
    void showLinksOnUi(const QString& path, std::shared_ptr<const LinkMatrix> links);
    void onLinkBlockShownOnUi(std::shared_ptr<const Incident> incident);
    void exportPlotWithDialog(const QString& suffix);
    void exportTableWithDialog();

    IncidentLoader* m_loader = nullptr;
    std::shared_ptr<const Incident> m_incident;
    TensorTreePanel* m_tree = nullptr;
    IncidentPage* m_page = nullptr;
    ReplayPanel* m_replay = nullptr;
    DevicesPanel* m_devices = nullptr;
    FleetView* m_fleet = nullptr;
    QDockWidget* m_fleetDock = nullptr;
    LinksView* m_links = nullptr;
    QDockWidget* m_linksDock = nullptr;
    ResultTabs* m_results = nullptr;
    QDockWidget* m_resultsDock = nullptr;
    bool m_probing = false;           // an openFiles is finding out what its files are
    bool m_showingLinkBlock = false;  // the incident shown is a link's block, not opened files
    quint64 m_openJob = 0;            // the latest openFiles: older answers are dropped
    bool m_inventoryAsked = false;
    QDockWidget* m_treeDock = nullptr;
    QDockWidget* m_replayDock = nullptr;
    QDockWidget* m_devicesDock = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QLabel* m_statusLabel = nullptr;
    QString m_lastError;
    QString m_reselect;  // the entry to show again after comparing with another tolerance
    QWidget* m_lastTableView = nullptr;
    QByteArray m_defaultState;
    ScreenshotDriver* m_screenshot = nullptr;
};

}  // namespace faultline::views
