// Heatmap redraw: how long one pan or zoom step of the real HeatmapView takes on a 16384 x 16384
// float32 tensor. The tile pyramid comes from the same compare code as a real comparison
// (TensorComparer on the two tensors in memory, default options) with a sparse corruption: every
// 132nd 128 x 128 tile (a "bad SM") with 1/16 of its elements a few ulp off, a band of 40 rows
// 1 ulp off, and 20000 scattered single-bit flips (some in the exponent: huge errors, Inf/NaN).
// The view (--width x --height, 1600 x 1000 by default) gets the user's events: wheel steps
// zooming from the whole tensor down to a few elements across, mouse drags panning at several
// zoom levels, wheel steps back out and a double-click to fit. Each step is timed from sending
// the event until the view has re-binned and the plot has been replotted and painted (the event
// loop is run until then, as it runs in the application).
//
//   bench_heatmap_redraw [--size N] [--width W] [--height H]
//
// Prints one line per step (visible extent, pyramid level, cells drawn, wall and GUI-thread CPU
// ms, replot ms and count) and the median and max per-step time (on a shared machine, wall minus
// CPU is time spent waiting for a core). Exit code 0, 2 on bad arguments. The goal (< 30 ms per
// step) is reported, not judged.
#include <qcustomplot.h>
#include <QApplication>
#include <QElapsedTimer>
#include <QMouseEvent>
#include <QPointingDevice>
#include <QWheelEvent>
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "ThreadCpu.h"
#include "core/compare/TensorComparer.h"
#include "views/heatmap/HeatmapView.h"
#include "views/incident/Incident.h"

using namespace faultline;
using namespace faultline::views;

namespace {

double msSince(const QElapsedTimer& t)
{
    return double(t.nsecsElapsed()) / 1e6;
}

// The benchmark tensors: reference values in [1, 2), the suspect a sparsely corrupted copy.
void makeTensors(uint64_t n, std::vector<float>& reference, std::vector<float>& suspect, uint64_t* corrupted)
{
    reference.resize(size_t(n * n));
    for (uint64_t r = 0; r < n; ++r)
        for (uint64_t c = 0; c < n; ++c)
            reference[size_t(r * n + c)] = 1.0f + float((r * 31 + c * 17) & 1023) / 1024.0f;
    suspect = reference;
    auto addUlps = [&](uint64_t i, uint32_t ulps) {
        uint32_t bits = std::bit_cast<uint32_t>(suspect[size_t(i)]);
        suspect[size_t(i)] = std::bit_cast<float>(bits + ulps);
    };
    const uint64_t tile = 128, tilesPerRow = (n + tile - 1) / tile;
    for (uint64_t r = 0; r < n; ++r)
        for (uint64_t c = 0; c < n; ++c)
            if ((r / tile * tilesPerRow + c / tile) % 132 == 17 && ((r ^ c) & 15) == 0)
                addUlps(r * n + c, 1 + uint32_t((r * c) & 255));
    const uint64_t band = std::min<uint64_t>(n / 2 + n / 20, n - 40);
    for (uint64_t r = band; r < band + 40 && r < n; ++r)
        for (uint64_t c = 0; c < n; ++c) addUlps(r * n + c, 1);
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < 20000; ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t i = (state >> 11) % (n * n);
        const unsigned bit =
            unsigned(state >> 3) % 100 == 0 ? 23 + unsigned(state >> 7) % 8 : unsigned(state >> 7) % 23;
        const uint32_t bits = std::bit_cast<uint32_t>(suspect[size_t(i)]) ^ (uint32_t(1) << bit);
        suspect[size_t(i)] = std::bit_cast<float>(bits);
    }
    uint64_t differing = 0;
    for (size_t i = 0; i < suspect.size(); ++i)
        differing += std::memcmp(&suspect[i], &reference[i], sizeof(float)) != 0;
    *corrupted = differing;
}

struct Step {
    std::string kind;
    double visibleRows = 0, visibleCols = 0;
    int level = 0;
    uint64_t cells = 0;
    double totalMs = 0, cpuMs = 0, replotMs = 0;
    int replots = 0;
};

// Times one user event: from sending it until the view has re-binned and the plot has been
// replotted (and painted: QCustomPlot repaints inside replot with phImmediateRefresh, else a
// paint is awaited).
class StepTimer : public QObject {
public:
    StepTimer(HeatmapView* view) : m_view(view)
    {
        QCustomPlot* plot = view->plot();
        connect(view, &HeatmapView::gridChanged, this, [this] { m_grids++; });
        connect(plot, &QCustomPlot::beforeReplot, this, [this] { m_replotStart.start(); });
        connect(plot, &QCustomPlot::afterReplot, this, [this] {
            m_replotMs += msSince(m_replotStart);
            m_replots++;
            if (m_grids > 0) m_replotAfterGrid = true;
            m_paintAfterReplot = m_immediate;
        });
        m_immediate = plot->plottingHints().testFlag(QCP::phImmediateRefresh);
        plot->installEventFilter(this);
    }

    Step run(const std::string& kind, QObject* target, QEvent* event)
    {
        m_grids = 0;
        m_replots = 0;
        m_replotMs = 0;
        m_replotAfterGrid = false;
        m_paintAfterReplot = false;
        QElapsedTimer t;
        t.start();
        const double cpu0 = threadCpuMs();
        QApplication::sendEvent(target, event);
        while (!(m_replotAfterGrid && m_paintAfterReplot) && t.elapsed() < 2000)
            QApplication::processEvents(QEventLoop::AllEvents);
        QApplication::processEvents(QEventLoop::AllEvents);  // whatever this step still queued
        Step s;
        s.kind = kind;
        s.totalMs = msSince(t);
        s.cpuMs = threadCpuMs() - cpu0;
        s.replotMs = m_replotMs;
        s.replots = m_replots;
        const QCustomPlot* plot = m_view->plot();
        s.visibleRows = plot->yAxis->range().size();
        s.visibleCols = plot->xAxis->range().size();
        s.level = m_view->shownGrid().level;
        s.cells = m_view->shownGrid().rows * m_view->shownGrid().cols;
        return s;
    }

    bool immediate() const { return m_immediate; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Paint && m_replots > 0) m_paintAfterReplot = true;
        return QObject::eventFilter(watched, event);
    }

private:
    HeatmapView* m_view;
    QElapsedTimer m_replotStart;
    int m_grids = 0, m_replots = 0;
    double m_replotMs = 0;
    bool m_replotAfterGrid = false, m_paintAfterReplot = false, m_immediate = false;
};

bool parseInt(const QString& s, int* out)
{
    bool ok = false;
    const int v = s.toInt(&ok);
    if (!ok || v <= 0) return false;
    *out = v;
    return true;
}

}  // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    int size = 16384, width = 1600, height = 1000;
    const QStringList args = QApplication::arguments();
    for (int i = 1; i < args.size(); ++i) {
        int* target = args[i] == QLatin1String("--size")     ? &size
                      : args[i] == QLatin1String("--width")  ? &width
                      : args[i] == QLatin1String("--height") ? &height
                                                             : nullptr;
        if (!target || i + 1 >= args.size() || !parseInt(args[++i], target)) {
            std::fprintf(stderr, "usage: bench_heatmap_redraw [--size N] [--width W] [--height H]\n");
            return 2;
        }
    }
    const uint64_t n = uint64_t(size);

    QElapsedTimer t;
    t.start();
    uint64_t corrupted = 0;
    auto incident = std::make_shared<Incident>();
    {
        std::vector<float> reference, suspect;
        makeTensors(n, reference, suspect, &corrupted);
        const double madeMs = msSince(t);
        t.restart();
        TensorComparer comparer;
        auto d = comparer.compare(DType::Float32, {n, n}, suspect.data(), reference.data(), "bench.weight");
        if (!d) {
            std::fprintf(stderr, "compare failed: %s\n", d.message().c_str());
            return 1;
        }
        std::printf(
            "tensor: %llu x %llu float32, %llu elements differ (made in %.0f ms, compared in %.0f ms)\n",
            (unsigned long long)n, (unsigned long long)n, (unsigned long long)corrupted, madeMs, msSince(t));
        CompareReport report;
        report.tensors.push_back(std::move(d).value());
        incident->compare = std::move(report);
    }
    incident->buildEntries();
    const Divergence& div = incident->compare->tensors.front();
    std::printf("pyramid: %zu levels, level 0 tiles %llux%llu elements, grid %llux%llu; %llu mismatches\n",
                div.tiles.levels().size(), (unsigned long long)div.tiles.levels().front().tileRows,
                (unsigned long long)div.tiles.levels().front().tileCols,
                (unsigned long long)div.tiles.levels().front().gridRows,
                (unsigned long long)div.tiles.levels().front().gridCols, (unsigned long long)div.mismatches);

    HeatmapView view;
    view.resize(width, height);
    view.show();
    view.setEntry(incident, 0);
    {
        QElapsedTimer settle;
        settle.start();
        while (settle.elapsed() < 500) QApplication::processEvents(QEventLoop::AllEvents, 50);
    }
    QCustomPlot* plot = view.plot();
    StepTimer timer(&view);
    const QRect rect = plot->axisRect()->rect();
    std::printf("view: %dx%d, plot axis rect %dx%d px, phImmediateRefresh %s\n", width, height, rect.width(),
                rect.height(), timer.immediate() ? "on" : "off");

    std::vector<Step> steps;
    // Zoom towards the corrupted band, near the middle of the columns.
    const double bandRow = double(std::min<uint64_t>(n / 2 + n / 20, n - 40) + 20);
    // (kept inside the axis rect: on an axis, the wheel zooms that axis only).
    auto focus = [&] {
        const QRectF inner = QRectF(rect).adjusted(20, 20, -20, -20);
        return QPointF(std::clamp(plot->xAxis->coordToPixel(double(n) * 0.41), inner.left(), inner.right()),
                       std::clamp(plot->yAxis->coordToPixel(bandRow), inner.top(), inner.bottom()));
    };
    auto wheel = [&](int notches, const char* kind) {
        const QPointF pos = focus();
        QWheelEvent e(pos, plot->mapToGlobal(pos), QPoint(), QPoint(0, 120 * notches), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
        steps.push_back(timer.run(kind, plot, &e));
    };
    auto mouse = [&](QEvent::Type type, QPointF pos, Qt::MouseButton button, Qt::MouseButtons buttons) {
        QMouseEvent e(type, pos, plot->mapToGlobal(pos), button, buttons, Qt::NoModifier);
        QApplication::sendEvent(plot, &e);
    };
    // A drag of four moves of (dx, dy) pixels: two away and two back; every move is one timed step.
    auto pan = [&](double dx, double dy) {
        QPointF pos = QPointF(rect.center());
        mouse(QEvent::MouseButtonPress, pos, Qt::LeftButton, Qt::LeftButton);
        for (int k = 0; k < 4; ++k) {
            pos += k < 2 ? QPointF(dx, dy) : QPointF(-dx, -dy);
            QMouseEvent e(QEvent::MouseMove, pos, plot->mapToGlobal(pos), Qt::NoButton, Qt::LeftButton,
                          Qt::NoModifier);
            steps.push_back(timer.run("pan", plot, &e));
        }
        mouse(QEvent::MouseButtonRelease, pos, Qt::LeftButton, Qt::NoButton);
        QApplication::processEvents();
    };
    auto fit = [&] {
        const QPointF pos = QPointF(rect.center());
        mouse(QEvent::MouseButtonPress, pos, Qt::LeftButton, Qt::LeftButton);
        mouse(QEvent::MouseButtonRelease, pos, Qt::LeftButton, Qt::NoButton);
        QMouseEvent e(QEvent::MouseButtonDblClick, pos, plot->mapToGlobal(pos), Qt::LeftButton,
                      Qt::LeftButton, Qt::NoModifier);
        steps.push_back(timer.run("fit (double-click)", plot, &e));
        mouse(QEvent::MouseButtonRelease, pos, Qt::LeftButton, Qt::NoButton);
        QApplication::processEvents();
    };

    fit();
    pan(150, 90);
    for (int round = 0; round < 4; ++round) {
        for (int k = 0; k < 4; ++k) wheel(3, "zoom in");
        pan(round % 2 ? -150 : 150, round % 2 ? 90 : -90);
    }
    while (plot->xAxis->range().size() < double(n) && steps.size() < 200) wheel(-3, "zoom out");
    fit();

    std::printf("%-20s %12s %12s %5s %9s %9s %9s %9s %7s\n", "step", "rows shown", "cols shown", "level",
                "cells", "total ms", "CPU ms", "replot ms", "replots");
    std::vector<double> totals, cpus;
    for (const Step& s : steps) {
        std::printf("%-20s %12.1f %12.1f %5d %9llu %9.2f %9.2f %9.2f %7d\n", s.kind.c_str(), s.visibleRows,
                    s.visibleCols, s.level, (unsigned long long)s.cells, s.totalMs, s.cpuMs, s.replotMs,
                    s.replots);
        totals.push_back(s.totalMs);
        cpus.push_back(s.cpuMs);
    }
    std::sort(totals.begin(), totals.end());
    std::sort(cpus.begin(), cpus.end());
    const double median = totals[totals.size() / 2], worst = totals.back();
    std::printf(
        "steps: %zu, per-step median %.2f ms, max %.2f ms (GUI thread CPU: median %.2f ms, max %.2f ms)\n",
        totals.size(), median, worst, cpus[cpus.size() / 2], cpus.back());
    std::printf("goal: < 30 ms per step: %s\n", worst < 30.0 ? "met" : "NOT met");
    return 0;
}
