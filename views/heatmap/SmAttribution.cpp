#include "views/heatmap/SmAttribution.h"

#include <QObject>
#include <QStringList>

#include "core/replay/TargetSpec.h"

namespace faultline::views {

SuspectSmMap suspectSmMap(const Incident& incident, size_t opIndex, uint64_t rows, uint64_t cols,
                          const std::map<std::string, std::string>& gpuUuids)
{
    SuspectSmMap out;
    if (!incident.replaySmMaps) return out;
    const auto it = incident.replaySmMaps->byOp.find(opIndex);
    if (it == incident.replaySmMaps->byOp.end() || it->second.empty()) return out;
    std::string suspectUuid;
    if (incident.trace)
        for (const TraceDevice& dev : incident.trace->devices)
            if (QString::fromStdString(dev.label) == incident.suspectLabel) suspectUuid = dev.uuid;
    QStringList passed;
    for (const ReplaySmMaps::Recorded& r : it->second) {
        if (r.map.rows != rows || r.map.cols != cols) continue;
        auto spec = parseTargetSpec(r.target.toStdString());
        if (!spec || spec->kind != "cuda") {
            passed << QObject::tr("%1 (not a GPU: its SM layout is not the suspect's)").arg(r.target);
            continue;
        }
        const auto uuid = gpuUuids.find(r.target.toStdString());
        if (uuid == gpuUuids.end() || uuid->second.empty()) {
            passed << QObject::tr("%1 (not in this machine's inventory)").arg(r.target);
        } else if (suspectUuid.empty()) {
            passed << QObject::tr("%1 (the trace names no UUID for %2)").arg(r.target, incident.suspectLabel);
        } else if (uuid->second != suspectUuid) {
            passed << QObject::tr("%1 (GPU %2, not the suspect's %3)")
                          .arg(r.target, QString::fromStdString(uuid->second),
                               QString::fromStdString(suspectUuid));
        } else {
            out.chosen = r;
            return out;
        }
    }
    if (!passed.isEmpty())
        out.why = QObject::tr("Replays recorded tile→SM maps only on other targets: %1.")
                      .arg(passed.join(QStringLiteral("; ")));
    return out;
}

}  // namespace faultline::views
