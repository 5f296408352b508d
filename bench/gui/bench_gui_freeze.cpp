// Never freeze: how long the GUI thread's event loop goes without turning while the main window
// opens a large suspect/reference pair. The real MainWindow, on whatever platform Qt runs
// (QT_QPA_PLATFORM=offscreen here), opens the pair through MainWindow::openFiles, as File > Open
// and drag and drop do: the loader compares on a worker thread, then every view is reset on the
// GUI thread and the story entry selected. A precise timer of --interval-ms (1 by default; 0 =
// every loop iteration) samples the loop from just before openFiles until --settle-ms after the
// incident is shown, so the deferred redraws after the show are counted too.
//
//   bench_gui_freeze SUSPECT REFERENCE [--interval-ms N] [--settle-ms N] [--top N] [--breakdown R]
//
// --breakdown R then repeats, R times, the view resets the main window makes on `loaded` and
// prints each one's wall and CPU time (warm caches: a diagnosis aid, not the measurement).
// Prints the load time (openFiles to incidentShown), the number of samples, the longest and
// 99th percentile gap between samples, and the longest gaps with the GUI thread's CPU time in
// each (a gap with little CPU time is the thread waiting for a core, not working). Exit code 0
// when the incident was shown, 1 otherwise, 2 on bad arguments. The goal (longest gap < 50 ms)
// is reported, not judged.
#include <QAbstractEventDispatcher>
#include <QApplication>
#include <QElapsedTimer>
#include <QSettings>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "ThreadCpu.h"
#include "views/incident/IncidentPage.h"
#include "views/incident/TensorTreePanel.h"
#include "views/replay/DevicesPanel.h"
#include "views/replay/ReplayPanel.h"
#include "views/shell/MainWindow.h"

using namespace faultline::views;

namespace {

// Reads a file once so that the load measures the GUI, not the disk.
double warmPageCache(const QString& path)
{
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::vector<char> buf(size_t(16) << 20);
    double bytes = 0;
    while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0) bytes += double(in.gcount());
    return bytes;
}

struct Gap {
    double atMs = 0;  // end of the gap, from openFiles
    double wallMs = 0;
    double cpuMs = 0;  // GUI thread CPU time inside the gap
};

bool parseInt(const QString& s, int* out)
{
    bool ok = false;
    const int v = s.toInt(&ok);
    if (!ok || v < 0) return false;
    *out = v;
    return true;
}

}  // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("FaultlineBench"));
    QApplication::setApplicationName(QStringLiteral("bench_gui_freeze"));
    // Settings (recent files, layout) go to a throw-away directory.
    QTemporaryDir settingsDir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir.path());

    QStringList files;
    bool bad = false;
    int intervalMs = 1, settleMs = 1500, top = 8, breakdown = 0;
    const QStringList args = QApplication::arguments();
    for (int i = 1; i < args.size(); ++i) {
        const QString& a = args[i];
        int* target = a == QLatin1String("--interval-ms") ? &intervalMs
                      : a == QLatin1String("--settle-ms") ? &settleMs
                      : a == QLatin1String("--top")       ? &top
                      : a == QLatin1String("--breakdown") ? &breakdown
                                                          : nullptr;
        if (target) {
            bad = bad || i + 1 >= args.size() || !parseInt(args[i + 1], target);
            ++i;
        } else {
            files << a;
        }
    }
    if (bad || files.size() != 2) {
        std::fprintf(stderr,
                     "usage: bench_gui_freeze SUSPECT REFERENCE [--interval-ms N] [--settle-ms N] [--top N] "
                     "[--breakdown REPEATS]\n");
        return 2;
    }
    double bytes = 0;
    for (const QString& f : files) bytes += warmPageCache(f);

    MainWindow window;
    window.show();
    // Let the first layout and paint happen before measuring.
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 500) QApplication::processEvents(QEventLoop::AllEvents, 50);
    }

    QElapsedTimer clock;
    std::vector<Gap> gaps;
    gaps.reserve(1 << 20);
    double lastMs = 0, lastCpu = 0;
    double shownMs = -1;
    quint64 wakeUps = 0;
    bool measuring = false;
    QTimer sampler;
    sampler.setTimerType(Qt::PreciseTimer);
    sampler.setInterval(intervalMs);
    QObject::connect(&sampler, &QTimer::timeout, [&] {
        if (!measuring) return;
        const double now = double(clock.nsecsElapsed()) / 1e6, cpu = threadCpuMs();
        gaps.push_back({now, now - lastMs, cpu - lastCpu});
        lastMs = now;
        lastCpu = cpu;
    });
    QObject::connect(QAbstractEventDispatcher::instance(), &QAbstractEventDispatcher::awake, [&] {
        if (measuring) ++wakeUps;
    });
    QObject::connect(&window, &MainWindow::incidentShown, [&] {
        shownMs = double(clock.nsecsElapsed()) / 1e6;
        QTimer::singleShot(settleMs, &app, [&] {
            measuring = false;
            QApplication::quit();
        });
    });
    QObject::connect(&window, &MainWindow::errorShown, [&](const QString& message) {
        std::fprintf(stderr, "error: %s\n", qPrintable(message));
        measuring = false;
        QApplication::quit();
    });

    timespec monotonic{};
    sampler.start();
    clock_gettime(CLOCK_MONOTONIC, &monotonic);
    clock.start();
    lastCpu = threadCpuMs();
    measuring = true;
    window.openFiles(files);
    QTimer::singleShot(600000, &app, [&] {  // a load that never ends is reported, not waited for
        measuring = false;
        QApplication::quit();
    });
    const double openMs = double(clock.nsecsElapsed()) / 1e6;
    QApplication::exec();
    const double endMs = double(clock.nsecsElapsed()) / 1e6;
    sampler.stop();

    if (shownMs < 0 || gaps.empty()) {
        std::fprintf(stderr, "the incident was not shown\n");
        return 1;
    }
    std::vector<double> walls;
    walls.reserve(gaps.size());
    for (const Gap& g : gaps) walls.push_back(g.wallMs);
    std::sort(walls.begin(), walls.end());
    const double p99 = walls[std::min(walls.size() - 1, size_t(double(walls.size()) * 0.99))];
    const double p50 = walls[walls.size() / 2];
    const double longest = walls.back();
    size_t over16 = 0, over50 = 0;
    for (double w : walls) {
        over16 += w > 16.0;
        over50 += w > 50.0;
    }
    const auto incident = window.incident();
    std::printf("pair: %s + %s, %.2f GiB, %zu entries\n", qPrintable(files[0]), qPrintable(files[1]),
                bytes / 1073741824.0, incident ? incident->entries.size() : size_t(0));
    std::printf(
        "sampler: %d ms precise timer; openFiles() called at CLOCK_MONOTONIC %lld.%06ld s (for perf -k "
        "CLOCK_MONOTONIC), returned after %.2f ms\n",
        intervalMs, (long long)monotonic.tv_sec, monotonic.tv_nsec / 1000, openMs);
    std::printf("load time (openFiles -> incidentShown): %.0f ms; measured until %.0f ms\n", shownMs, endMs);
    std::printf("event-loop samples: %zu (dispatcher wake-ups: %llu)\n", gaps.size(),
                (unsigned long long)wakeUps);
    std::printf(
        "gap between samples: median %.2f ms, p99 %.2f ms, longest %.2f ms; %zu over 16 ms, %zu over 50 ms\n",
        p50, p99, longest, over16, over50);
    std::vector<Gap> byLength = gaps;
    std::sort(byLength.begin(), byLength.end(),
              [](const Gap& a, const Gap& b) { return a.wallMs > b.wallMs; });
    std::printf("longest gaps (end time from openFiles; GUI thread CPU time inside):\n");
    for (size_t k = 0; k < byLength.size() && k < size_t(top); ++k) {
        const Gap& g = byLength[k];
        const bool show = g.atMs - g.wallMs <= shownMs && shownMs <= g.atMs;
        std::printf("  %8.2f ms ending at %8.1f ms, CPU %7.2f ms%s\n", g.wallMs, g.atMs, g.cpuMs,
                    show ? "  <- contains incidentShown (views reset on the GUI thread)" : "");
    }
    std::printf("goal: longest gap < 50 ms: %s\n", longest < 50.0 ? "met" : "NOT met");

    // Where the GUI thread's time goes when an incident is shown: the view resets the main window
    // makes on `loaded`, in its order, repeated on the loaded incident (diagnosis only: caches
    // are warm after the first time).
    for (int rep = 0; rep < breakdown && incident; ++rep) {
        std::printf("breakdown %d (wall / GUI thread CPU ms):", rep + 1);
        auto timed = [](const char* what, const auto& f) {
            QElapsedTimer w;
            w.start();
            const double c0 = threadCpuMs();
            f();
            std::printf(" %s %.2f/%.2f;", what, double(w.nsecsElapsed()) / 1e6, threadCpuMs() - c0);
        };
        window.closeIncident();
        QApplication::processEvents();
        timed("tree", [&] { window.treePanel()->setIncident(incident); });
        timed("page", [&] { window.page()->setIncident(incident); });
        timed("replay", [&] { window.replayPanel()->setIncident(incident); });
        timed("devices", [&] { window.devicesPanel()->setIncident(incident); });
        timed("select story", [&] {
            if (incident->storyEntry) window.treePanel()->selectEntry(*incident->storyEntry);
        });
        timed("events", [&] {
            for (int k = 0; k < 5; ++k) QApplication::processEvents();
        });
        std::printf("\n");
    }
    return 0;
}
