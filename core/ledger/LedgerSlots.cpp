#include "LedgerSlots.h"

#include <algorithm>
#include <tuple>

#include "../Text.h"

namespace faultline {

bool SlotTenancy::holds(const std::string& host, const std::string& busId,
                        const std::optional<std::string>& at) const
{
    auto it = bySlot.find({host, busId});
    if (it == bySlot.end() || it->second.spans.empty()) return false;
    if (!at) return !it->second.othersSeen;
    return std::any_of(it->second.spans.begin(), it->second.spans.end(), [&](const SlotSpan& s) {
        return s.from <= *at && (s.until.empty() || *at < s.until);
    });
}

SlotTenancy slotTenancy(std::vector<SlotSighting> sightings)
{
    // Per slot in time order; at the same time another GPU's sighting comes after this one's, so
    // that it ends the span there.
    std::stable_sort(sightings.begin(), sightings.end(), [](const SlotSighting& a, const SlotSighting& b) {
        return std::tie(a.host, a.busId, a.at, b.mine) < std::tie(b.host, b.busId, b.at, a.mine);
    });
    SlotTenancy t;
    for (const SlotSighting& s : sightings) {
        SlotTenure& slot = t.bySlot[{s.host, s.busId}];
        const bool open = !slot.spans.empty() && slot.spans.back().until.empty();
        if (!s.mine) {
            slot.othersSeen = true;
            if (open) slot.spans.back().until = s.at;
        } else if (!open) {
            slot.spans.push_back({s.at, ""});
        }
    }
    // A span ended where it began (two GPUs seen at once) holds nothing.
    for (auto& [place, slot] : t.bySlot)
        std::erase_if(slot.spans, [](const SlotSpan& s) { return !s.until.empty() && s.until <= s.from; });
    return t;
}

Result<SlotTenancy> loadSlotTenancy(LedgerEngine& engine, const std::vector<RuleLocation>& places,
                                    const std::set<std::string>& serials, const std::set<std::string>& uuids)
{
    std::vector<SqlValue> params;
    std::vector<std::string> terms;
    for (const RuleLocation& l : places) {
        if (l.host.empty() || l.busId.empty()) continue;
        params.push_back(l.host);
        params.push_back(l.busId);
        terms.push_back("(host = $" + std::to_string(params.size() - 1) + " AND bus_id = $" +
                        std::to_string(params.size()) + ")");
    }
    if (terms.empty()) return SlotTenancy{};
    auto rows = runSql(engine,
                       "SELECT host, bus_id, serial, uuid, first_seen, last_seen FROM gpu_identities WHERE " +
                           joinText(terms, " OR "),
                       params);
    if (!rows) return rows.error();
    std::vector<SlotSighting> sightings;
    for (const SqlRow& r : *rows) {
        const std::string serial = sqlText(r[2]), uuid = sqlText(r[3]);
        const bool mine = (!serial.empty() && serials.count(serial)) || (!uuid.empty() && uuids.count(uuid));
        for (int at : {4, 5}) sightings.push_back({sqlText(r[0]), sqlText(r[1]), sqlText(r[at]), mine});
    }
    return slotTenancy(std::move(sightings));
}

}  // namespace faultline
