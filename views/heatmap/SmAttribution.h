#pragma once
// Which tile->SM map is the suspect's own: the map a replay recorded on the suspect's own GPU
// (a `cuda:N` target whose GPU N in this machine's inventory has the suspect device's UUID).
// A `sim:` or `cpu` target's map, or another GPU's, is never the suspect's: each is named in
// `why` with the reason it was passed over. Without a replay map, the suspect device's own
// simulated defect (a trace attribute) gives its virtual layout (HeatmapView).
#include <QString>
#include <map>
#include <optional>
#include <string>

#include "views/incident/Incident.h"

namespace faultline::views {

struct SuspectSmMap {
    std::optional<ReplaySmMaps::Recorded> chosen;
    QString why;  // why none was chosen, or which were passed over
};

// `gpuUuids`: "cuda:N" -> UUID of this machine's GPU N (DevicesPanel's inventory).
SuspectSmMap suspectSmMap(const Incident& incident, size_t opIndex, uint64_t rows, uint64_t cols,
                          const std::map<std::string, std::string>& gpuUuids);

}  // namespace faultline::views
