#include "views/shell/ScreenshotDriver.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QPixmap>
#include <QPointer>
#include <QTimer>
#include <algorithm>
#include <cstdio>

#include "views/heatmap/HeatmapView.h"
#include "views/incident/IncidentPage.h"
#include "views/plots/BitHistogramView.h"
#include "views/plots/ErrorDistributionView.h"
#include "views/plots/ModelDivergenceView.h"
#include "views/replay/DevicesPanel.h"
#include "views/replay/ReplayPanel.h"
#include "views/shell/MainWindow.h"

namespace faultline::views {

ScreenshotDriver* ScreenshotDriver::fromEnvironment(MainWindow* window)
{
    const QString path = qEnvironmentVariable("FAULTLINE_SCREENSHOT");
    if (path.isEmpty()) return nullptr;
    return new ScreenshotDriver(window, path, qEnvironmentVariable("FAULTLINE_SCREENSHOT_DIR"),
                                qEnvironmentVariable("FAULTLINE_SCREENSHOT_REPLAY") == QLatin1String("1"));
}

ScreenshotDriver::ScreenshotDriver(MainWindow* window, QString path, QString dir, bool replay)
    : QObject(window), m_window(window), m_path(std::move(path)), m_dir(std::move(dir)), m_replay(replay)
{
}

void ScreenshotDriver::incidentShownOnUi()
{
    if (m_started) return;
    m_started = true;
    // The devices view is grabbed last: ask the worker for the inventory now, while values load.
    m_window->devicesPanel()->refreshInventory();
    IncidentPage* page = m_window->page();
    // Wait for the element values (at most 5 s), then for the replay if asked.
    auto* fallback = new QTimer(this);
    fallback->setSingleShot(true);
    connect(fallback, &QTimer::timeout, this, &ScreenshotDriver::afterValuesOnUi);
    connect(page, &IncidentPage::elementValuesSettled, this, [this, fallback] {
        if (!fallback->isActive()) return;
        fallback->stop();
        afterValuesOnUi();
    });
    fallback->start(5000);
}

void ScreenshotDriver::afterValuesOnUi()
{
    ReplayPanel* replay = m_window->replayPanel();
    if (m_replay && replay->start()) {
        connect(replay, &ReplayPanel::finished, this,
                [this] { QTimer::singleShot(400, this, &ScreenshotDriver::grabOnUi); });
        connect(replay, &ReplayPanel::failed, this,
                [this] { QTimer::singleShot(400, this, &ScreenshotDriver::grabOnUi); });
        return;
    }
    QTimer::singleShot(400, this, &ScreenshotDriver::grabOnUi);
}

void ScreenshotDriver::fleetShownOnUi()
{
    QTimer::singleShot(400, this, [this] {
        m_ok = m_window->grab().save(m_path);
        std::fprintf(stderr, "screenshot: %s %s\n", m_ok ? "wrote" : "could not write", qPrintable(m_path));
        QApplication::exit(m_ok ? 0 : 2);
    });
}

void ScreenshotDriver::grabOnUi()
{
    m_ok = m_window->grab().save(m_path);
    std::fprintf(stderr, "screenshot: %s %s\n", m_ok ? "wrote" : "could not write", qPrintable(m_path));
    if (m_dir.isEmpty()) {
        QApplication::exit(m_ok ? 0 : 2);
        return;
    }
    QDir().mkpath(m_dir);
    IncidentPage* page = m_window->page();
    m_steps = {
        {QStringLiteral("heatmap.png"), page->heatmap()},
        {QStringLiteral("bits.png"), page->bits()},
        {QStringLiteral("errors.png"), page->errors()},
        {QStringLiteral("model.png"), page->modelView()},
        {QStringLiteral("tree.png"), m_window->findChild<QDockWidget*>(QStringLiteral("tensorTreeDock"))},
        {QStringLiteral("replay.png"), m_window->findChild<QDockWidget*>(QStringLiteral("replayDock"))},
        {QStringLiteral("devices.png"), m_window->findChild<QDockWidget*>(QStringLiteral("devicesDock"))}};
    nextViewOnUi();
}

void ScreenshotDriver::nextViewOnUi()
{
    if (m_steps.isEmpty()) {
        QApplication::exit(m_ok ? 0 : 2);
        return;
    }
    const auto [name, widget] = m_steps.takeFirst();
    if (!widget) {
        nextViewOnUi();
        return;
    }
    // A tabbed dock is raised first and drawn once laid out.
    widget->raise();
    if (name == QLatin1String("heatmap.png")) zoomHeatmapToTheStoryOnUi();
    QTimer::singleShot(250, this, [this, name = name, widget = QPointer<QWidget>(widget)] {
        if (widget) {
            const QString file = QDir(m_dir).filePath(name);
            const bool saved = widget->grab().save(file);
            m_ok = m_ok && saved;
            std::fprintf(stderr, "screenshot: %s %s\n", saved ? "wrote" : "could not write",
                         qPrintable(file));
        }
        nextViewOnUi();
    });
}

void ScreenshotDriver::zoomHeatmapToTheStoryOnUi()
{
    // The docs' heatmap shows the corrupted region up close with one element's details.
    HeatmapView* heatmap = m_window->page()->heatmap();
    const auto incident = m_window->incident();
    const IncidentEntry* e = incident ? incident->entry(m_window->page()->shownEntry()) : nullptr;
    if (!e || !e->divergence || !e->divergence->beyondRegion) return;
    const Region& r = *e->divergence->beyondRegion;
    const double padR = std::max(4.0, 0.4 * double(r.rowEnd - r.rowBegin));
    const double padC = std::max(4.0, 0.4 * double(r.colEnd - r.colBegin));
    heatmap->zoomTo(double(r.rowBegin) - padR, double(r.rowEnd) + padR, double(r.colBegin) - padC,
                    double(r.colEnd) + padC);
    const HeatmapGrid& g = heatmap->shownGrid();
    if (const auto hot = g.hottestCell())
        heatmap->hoverElement((g.firstRow + hot->first) * g.cellRows,
                              (g.firstCol + hot->second) * g.cellCols);
}

void ScreenshotDriver::failedOnUi(const QString& message)
{
    std::fprintf(stderr, "screenshot: not taken: %s\n", qPrintable(message));
    QApplication::exit(2);
}

}  // namespace faultline::views
