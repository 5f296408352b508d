// What a replay campaign in the GUI leaves behind, on the demo incident: every campaign writes a
// results file and its journal (the CLI's `replay --out`); a cancelled campaign keeps its
// journal and Resume finishes it without redoing the journaled runs; and the tile->SM maps
// replays record reach the incident while "Colour by SM" keeps the suspect's own layout (a
// simulated target's map is never the suspect's).
#include <QCheckBox>
#include <QFile>
#include <QFileInfo>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "DemoWindow.h"
#include "core/demo/DemoIncident.h"
#include "core/replay/Campaign.h"
#include "core/replay/TargetSpec.h"
#include "views/heatmap/HeatmapView.h"
#include "views/incident/IncidentPage.h"
#include "views/incident/TensorTreePanel.h"
#include "views/replay/ReplayPanel.h"
#include "views/replay/ReplayResultsModel.h"
#include "views/shell/MainWindow.h"

using namespace faultline;
using namespace faultline::views;

namespace {

// The journal's run lines (its header line left out).
QList<QByteArray> journalLines(const QString& resultsPath)
{
    QFile f(QString::fromStdString(Campaign::journalPath(resultsPath.toStdString())));
    if (!f.open(QIODevice::ReadOnly)) return {};
    QList<QByteArray> lines;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (!line.isEmpty() && !line.contains("\"journal\":\"faultline-campaign\"")) lines << line;
    return lines;
}

QString normalised(const std::string& spec)
{
    return QString::fromStdString(parseTargetSpec(spec)->text);
}

}  // namespace

class TestCampaignEvidence : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    DemoIncident m_demo;
    std::unique_ptr<MainWindow> m_window;

    // Runs the panel's campaign to its end; false when it failed or did not end.
    bool runToEnd(ReplayPanel* panel, bool resume, bool* cancelled = nullptr)
    {
        QSignalSpy finished(panel, &ReplayPanel::finished);
        QSignalSpy failed(panel, &ReplayPanel::failed);
        if (!(resume ? panel->resume() : panel->start())) return false;
        if (!QTest::qWaitFor([&] { return finished.count() + failed.count() > 0; }, 120000)) return false;
        if (!failed.isEmpty()) return false;
        if (cancelled) *cancelled = finished.front().front().toBool();
        return true;
    }

    // The tile->SM map the last campaign recorded for `op` on `target`.
    TileSmMap recordedMap(ReplayPanel* panel, size_t op, const QString& target)
    {
        for (const RunRecord& r : panel->lastReport()->runs)
            if (r.opIndex == op && QString::fromStdString(r.target) == target && r.smMap.valid())
                return r.smMap;
        return {};
    }

private slots:
    void initTestCase()
    {
        const QString error = openDemoWindow(m_dir, "test_campaign_evidence", m_demo, m_window);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    void cleanupTestCase() { m_window.reset(); }

    void everyCampaignWritesResultsNextToTheTrace()
    {
        ReplayPanel* panel = m_window->replayPanel();
        panel->setResultsPath({});
        panel->setOpSelection(ReplayPanel::OpSelection::Divergent);
        QVERIFY(panel->setCheckedTargets({"cpu"}));
        panel->setReps(1);
        panel->setTimeoutMs(30000);
        bool cancelled = true;
        QVERIFY2(runToEnd(panel, false, &cancelled), qPrintable(panel->lastError()));
        QVERIFY(!cancelled);
        const QString path = panel->lastResultsPath();
        const QFileInfo info(path);
        const QFileInfo trace(QString::fromStdString(m_demo.tracePath));
        QCOMPARE(info.absolutePath(), trace.absolutePath());
        QVERIFY2(info.fileName().startsWith(trace.completeBaseName() + "-replay-"), qPrintable(path));
        QVERIFY(info.exists());
        const qsizetype ops = m_window->incident()->divergentOpSelection().split(',').size();
        QCOMPARE(journalLines(path).size(), ops);
        auto results = readCampaignResults(path.toStdString());
        QVERIFY2(results.ok(), results.ok() ? "" : results.message().c_str());
        QCOMPARE(qsizetype((*results)["runs"].size()), ops);
        QCOMPARE((*results)["cancelled"].get<bool>(), false);

        // The next campaign gets a file of its own, not the journal of this one.
        QVERIFY2(runToEnd(panel, false), qPrintable(panel->lastError()));
        QVERIFY(panel->lastResultsPath() != path);
        QCOMPARE(journalLines(path).size(), ops);
    }

    void cancelledCampaignResumesFromItsJournal()
    {
        ReplayPanel* panel = m_window->replayPanel();
        const QString path = m_dir.filePath("chosen/results.h5");
        QVERIFY(QDir().mkpath(m_dir.filePath("chosen")));
        panel->setResultsPath(path);
        // cpu and a device that hangs on every third op it runs (0.5 s each): a campaign that
        // takes long enough to cancel half-way.
        const QString hang = normalised("sim:hang:after=2");
        panel->setOpSelection(ReplayPanel::OpSelection::Divergent);
        QVERIFY(panel->setCheckedTargets({"cpu", hang}));
        const int reps = 3;
        panel->setReps(reps);
        panel->setTimeoutMs(500);
        std::vector<std::string> warnings;
        const auto ops =
            selectOps(*m_window->incident()->trace, panel->opSelectionText().toStdString(), warnings);
        QVERIFY(ops.ok());
        const qsizetype total = qsizetype(ops->size()) * reps * 2;

        QSignalSpy finished(panel, &ReplayPanel::finished);
        QSignalSpy failed(panel, &ReplayPanel::failed);
        QVERIFY2(panel->start(), qPrintable(panel->lastError()));
        QCOMPARE(panel->lastResultsPath(), path);
        QTRY_VERIFY_WITH_TIMEOUT(
            panel->resultsModel()->runsOf(hang) >= 2 && panel->resultsModel()->runsOf("cpu") >= 2, 60000);
        panel->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() >= 1, 30000);
        QVERIFY2(failed.isEmpty(), qPrintable(panel->lastError()));
        QCOMPARE(finished.front().front().toBool(), true);

        // The cancelled campaign's evidence: its journal and a results file saying it was cancelled.
        const QList<QByteArray> before = journalLines(path);
        QVERIFY(!before.isEmpty());
        QVERIFY2(before.size() < total, qPrintable(QString("%1 of %2").arg(before.size()).arg(total)));
        auto partial = readCampaignResults(path.toStdString());
        QVERIFY2(partial.ok(), partial.ok() ? "" : partial.message().c_str());
        QCOMPARE((*partial)["cancelled"].get<bool>(), true);
        QCOMPARE(qsizetype((*partial)["runs"].size()), before.size());

        // A new campaign may not overwrite it; Resume is offered.
        QVERIFY(!panel->start());
        QVERIFY2(panel->lastError().contains("Resume"), qPrintable(panel->lastError()));
        QVERIFY(panel->canResume());
        QVERIFY(m_window->findChild<QPushButton*>("replayResume")->isEnabled());

        // Resuming with other settings would mix two campaigns: refused, nothing run.
        panel->setReps(1);
        {
            QSignalSpy refused(panel, &ReplayPanel::failed);
            QVERIFY(panel->resume());
            QTRY_VERIFY_WITH_TIMEOUT(refused.count() == 1, 30000);
            QVERIFY2(panel->lastError().contains("cannot resume"), qPrintable(panel->lastError()));
            QCOMPARE(journalLines(path), before);
        }
        panel->setReps(reps);

        bool cancelled = true;
        QVERIFY2(runToEnd(panel, true, &cancelled), qPrintable(panel->lastError()));
        QVERIFY(!cancelled);
        const QList<QByteArray> after = journalLines(path);
        QCOMPARE(after.size(), total);
        // The journaled runs are kept as they were and not run again: each (target, op, rep) once.
        QCOMPARE(after.mid(0, before.size()), before);
        std::set<std::tuple<std::string, size_t, uint32_t>> runs;
        for (const QByteArray& line : after) {
            auto r = RunRecord::fromJson(nlohmann::json::parse(line.toStdString()));
            QVERIFY(r.ok());
            QVERIFY(runs.insert({r->target, r->opIndex, r->rep}).second);
        }
        QCOMPARE(qsizetype(runs.size()), total);

        auto results = readCampaignResults(path.toStdString());
        QVERIFY2(results.ok(), results.ok() ? "" : results.message().c_str());
        QCOMPARE((*results)["cancelled"].get<bool>(), false);
        QCOMPARE(qsizetype((*results)["runs"].size()), total);
        for (const QByteArray& line : before) {
            const auto journaled = nlohmann::json::parse(line.toStdString());
            bool found = false;
            for (const auto& r : (*results)["runs"]) found = found || r == journaled;
            QVERIFY2(found, line.constData());
        }
        QCOMPARE(panel->resultsModel()->runsOf("cpu"), qulonglong(total / 2));
        QCOMPARE(panel->resultsModel()->runsOf(hang), qulonglong(total / 2));
        QCOMPARE(panel->resultsModel()->failuresOf("cpu"), 0ull);
    }

    void replayedSmMapColoursTheHeatmap()
    {
        const auto incident = m_window->incident();
        QVERIFY(incident->firstDivergentEntry.has_value());
        const IncidentEntry& e = incident->entries[size_t(*incident->firstDivergentEntry)];
        QCOMPARE(e.opKind, QString("gemm"));
        QVERIFY(e.divergence);
        m_window->treePanel()->selectEntry(e.id);
        HeatmapView* heatmap = m_window->page()->heatmap();
        QCheckBox* bySm = heatmap->findChild<QCheckBox*>("heatmapBySm");
        QVERIFY(bySm);

        ReplayPanel* panel = m_window->replayPanel();
        panel->setResultsPath({});
        panel->setOpSelection(ReplayPanel::OpSelection::Selected);
        QCOMPARE(panel->opSelectionText(), QString::number(e.opIndex));
        panel->setReps(1);
        panel->setTimeoutMs(30000);

        // The suspect's own layout (its simulated defect: SM 7 corrupts its tiles) colours every
        // divergent tile SM 7. A sim target replaying the same defect records the same map, but a
        // simulated target is never the suspect's evidence: the source stays the suspect's own.
        const QString suspect = normalised(m_demo.suspectDefect);
        const int defectiveSm = std::stoi(parseTargetSpec(m_demo.suspectDefect)->param("sm", "-1"));
        QCOMPARE(defectiveSm, 7);
        QVERIFY(panel->setCheckedTargets({suspect}));
        QVERIFY2(runToEnd(panel, false), qPrintable(panel->lastError()));
        TileSmMap map = recordedMap(panel, e.opIndex, suspect);
        QVERIFY(map.valid());
        QCOMPARE(map.rows, e.divergence->rows);
        QCOMPARE(map.cols, e.divergence->cols);
        QVERIFY(bySm->isEnabled());
        QVERIFY(heatmap->smAvailable());
        const QString own = heatmap->smSource();
        QVERIFY2(own.contains(incident->suspectLabel) && own.contains("simulated defect"), qPrintable(own));
        QVERIFY2(own.contains(suspect + " (not a GPU"), qPrintable(own));
        heatmap->setColourBySm(true);
        QVERIFY(bySm->isChecked());
        int coloured = 0;
        {
            const HeatmapGrid& g = heatmap->shownGrid();
            QCOMPARE(g.cellRows, uint64_t(map.tile));
            for (uint64_t r = 0; r < g.rows; ++r)
                for (uint64_t c = 0; c < g.cols; ++c) {
                    const double v = g.at(r, c);
                    if (std::isnan(v)) continue;
                    ++coloured;
                    QCOMPARE(int(v), defectiveSm);
                    QCOMPARE(int(v), map.sm[size_t(r * map.tilesAcross() + c)]);
                }
        }
        QVERIFY(coloured > 0);
        QCOMPARE(heatmap->smCategories(), std::vector<int32_t>{defectiveSm});

        // Another simulated device with another layout (5 SMs, 16x16 tiles, defective SM 2): its
        // map is recorded, but the suspect's corruption stays on SM 7 (issue 23: it moved to
        // another SM when the heatmap took any replayed target's layout).
        const QString other = normalised("sim:sm:sm=2,sms=5,tile=16");
        QVERIFY(panel->setCheckedTargets({other}));
        QVERIFY2(runToEnd(panel, false), qPrintable(panel->lastError()));
        map = recordedMap(panel, e.opIndex, other);
        QVERIFY(map.valid());
        QCOMPARE(map.tile, 16u);
        const auto& kept = incident->replaySmMaps->byOp.at(e.opIndex);
        QVERIFY(std::any_of(kept.begin(), kept.end(), [&](const auto& k) { return k.target == other; }));
        QVERIFY2(heatmap->smSource().contains(other + " (not a GPU"), qPrintable(heatmap->smSource()));
        QVERIFY(!heatmap->smSource().startsWith("tile→SM map recorded"));
        QVERIFY(heatmap->colourBySm());
        const HeatmapGrid& g = heatmap->shownGrid();
        coloured = 0;
        for (double v : g.values)
            if (!std::isnan(v)) {
                ++coloured;
                QCOMPARE(int(v), defectiveSm);
            }
        QVERIFY(coloured > 0);
    }
};

QTEST_MAIN(TestCampaignEvidence)
#include "test_campaign_evidence.moc"
