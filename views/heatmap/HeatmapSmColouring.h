#pragma once
// "Colour by SM" on the heatmap: which tile->SM map is the suspect's own, and the grid of the
// divergent tiles coloured by the SM that computed them. The map is one a replay of the op
// recorded on the suspect's own GPU (SmAttribution), else the virtual layout of the suspect
// device's simulated defect; every SM holding divergent tiles takes its own colour (a category).
#include <QCoreApplication>
#include <QString>
#include <QStringList>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/replay/TileSmMap.h"
#include "views/heatmap/HeatmapBinning.h"
#include "views/incident/Incident.h"

namespace faultline::views {

class HeatmapSmColouring {
    Q_DECLARE_TR_FUNCTIONS(HeatmapSmColouring)
public:
    // The most SM tiles drawn; a larger map is refused with a reason.
    static constexpr uint64_t kMaxSmCells = uint64_t(1) << 22;

    // Chooses the map of entry `entryId` of `incident` (nullptr: none). Returns why there is
    // none ("" when there is one).
    QString choose(const Incident* incident, int entryId);
    // This machine's GPUs ("cuda:N" -> UUID, DevicesPanel's inventory); call choose() again.
    void setLocalGpus(const QStringList& specs, const QStringList& uuids);

    bool available() const { return m_layout.has_value(); }
    const std::optional<TileSmMap>& layout() const { return m_layout; }
    // Where the map comes from, in words ("" when there is none).
    const QString& source() const { return m_source; }

    // The divergent tiles of `d` (counted by `metric`: mismatches, else beyond tolerance) as SM
    // tiles holding their SM id (NaN elsewhere); fills categories() and `summary` (SMs ranked by
    // how many elements they hold). Needs available().
    HeatmapGrid grid(const Divergence& d, HeatmapMetric metric, QString* summary);
    // The SMs holding divergent tiles in the last grid(), ascending.
    const std::vector<int32_t>& categories() const { return m_categories; }
    // The index of `sm` in categories() (its colour), 0 when it is not there.
    int category(int32_t sm) const;

private:
    std::optional<TileSmMap> m_layout;
    std::vector<int32_t> m_categories;
    std::map<std::string, std::string> m_gpuUuids;
    QString m_source;
};

}  // namespace faultline::views
