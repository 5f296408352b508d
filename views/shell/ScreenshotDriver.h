#pragma once
// Screenshots for the docs, without a CLI flag: with FAULTLINE_SCREENSHOT=PATH.png set, the main
// window grabs itself to PATH once the incident is shown (element values loaded), then quits.
// FAULTLINE_SCREENSHOT_DIR=DIR also writes one PNG per view there (heatmap.png, bits.png,
// errors.png, model.png, tree.png, replay.png, devices.png); FAULTLINE_SCREENSHOT_REPLAY=1 first
// runs the replay panel's campaign (as preselected) and waits for its verdicts.
#include <QList>
#include <QObject>
#include <QString>
#include <utility>

class QWidget;

namespace faultline::views {

class MainWindow;

class ScreenshotDriver : public QObject {
    Q_OBJECT
public:
    // nullptr when FAULTLINE_SCREENSHOT is not set.
    static ScreenshotDriver* fromEnvironment(MainWindow* window);

    // Called by the window once an incident is shown with its story entry selected.
    void incidentShownOnUi();
    // A merged fleet campaign is shown: the window is grabbed once the table has laid out.
    void fleetShownOnUi();
    // Called by the window when opening failed: quits with status 2.
    void failedOnUi(const QString& message);

private:
    ScreenshotDriver(MainWindow* window, QString path, QString dir, bool replay);
    void afterValuesOnUi();
    void grabOnUi();
    void nextViewOnUi();
    void zoomHeatmapToTheStoryOnUi();

    MainWindow* m_window;
    QString m_path, m_dir;
    bool m_replay;
    bool m_started = false;
    bool m_ok = true;
    QList<std::pair<QString, QWidget*>> m_steps;
};

}  // namespace faultline::views
