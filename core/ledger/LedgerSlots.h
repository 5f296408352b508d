#pragma once
// Which GPU sat in a slot (host and bus id) when, from the ledger's identity records: the one rule
// that gives a row naming no GPU (a kernel-log Xid with only a bus id, a snapshot without serial or
// UUID) to a GPU, for `ledger show` and for the history an evidence bundle carries alike.
//
// Each identity record is two sightings at its slot: its first and its last seen. A GPU holds a slot
// from a sighting of it until the next sighting of a different GPU there, or open-ended when there
// is none. A row naming no GPU belongs to it when the row's time falls in such a span; an undated
// row only when no other GPU was ever seen in that slot. Sightings of two GPUs at the same time end
// both spans there: the row goes to neither.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "LedgerEngine.h"
#include "LedgerRules.h"

namespace faultline {

// A sighting of a GPU in a slot: the GPU the timeline is of (`mine`) or another.
struct SlotSighting {
    std::string host, busId, at;
    bool mine = false;
};

// [from, until) in which the GPU held a slot; `until` empty: still holds it.
struct SlotSpan {
    std::string from, until;
};

struct SlotTenure {
    std::vector<SlotSpan> spans;
    bool othersSeen = false;  // another GPU was seen in this slot at some time
};

struct SlotTenancy {
    std::map<std::pair<std::string, std::string>, SlotTenure> bySlot;

    // Whether a row at `host`/`busId` naming no GPU is this GPU's: `at` its time (UTC ISO 8601),
    // nullopt where its source gave no date.
    bool holds(const std::string& host, const std::string& busId, const std::optional<std::string>& at) const;
};

// The spans from the sightings (any order).
SlotTenancy slotTenancy(std::vector<SlotSighting> sightings);

// The spans of the GPU with these serials and UUIDs in `places`, from every identity record there.
Result<SlotTenancy> loadSlotTenancy(LedgerEngine& engine, const std::vector<RuleLocation>& places,
                                    const std::set<std::string>& serials, const std::set<std::string>& uuids);

}  // namespace faultline
