#pragma once
// What a set of files to open is, decided off the GUI thread by content (core/incident/ResultFile.h):
// the traces and snapshots that make an incident, and the results files that open read-only
// beside it, each read and summarised already (a campaign's verdicts, a merged fleet's report, a
// sweep's link matrix, a bundle's check, an exploration's rates by condition), so the GUI thread
// only shows them.
#include <QString>
#include <QStringList>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/collectives/LinkMatrix.h"
#include "core/incident/RateByCondition.h"
#include "core/incident/ResultTables.h"
#include "views/incident/Incident.h"

namespace faultline::views {

struct OpenedResult {
    QString path;
    ResultKind kind = ResultKind::Campaign;
    ResultSummary summary;                         // campaign, compare, health, evidence
    std::shared_ptr<const nlohmann::json> fleet;   // fleet: the merged report
    std::shared_ptr<const LinkMatrix> links;       // sweep, collective
    std::shared_ptr<const Incident> comparison;    // compare: the report with its tiles, for the heatmap
    std::shared_ptr<const RateByCondition> rates;  // explore: the rates by condition, for the chart
};

struct OpenedFiles {
    QStringList incidentPaths;  // traces and snapshots, in the order given
    std::vector<OpenedResult> results;
    QStringList errors;  // one per file that could not be read, naming it

    // Runs on a worker thread: detects and reads each path.
    static OpenedFiles probeOnWorker(const QStringList& paths);
};

}  // namespace faultline::views
