#include "SuspectTargets.h"
#include "../JsonFields.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "../Text.h"
#include "../devices/DeviceReport.h"
#include "../health/BusId.h"
#include "../replay/TargetSpec.h"

namespace faultline {
namespace {

using json = nlohmann::json;

// The inventory's GPU with CUDA index `index` (null: none).
const json* inventoryGpu(const json& inventory, long index)
{
    if (!inventory.is_object() || !inventory.contains("gpus") || !inventory["gpus"].is_array())
        return nullptr;
    for (const json& g : inventory["gpus"])
        if (g.is_object() && g.contains("index") && g["index"].is_number_integer() &&
            g["index"].get<long>() == index)
            return &g;
    return nullptr;
}

bool hasInventory(const json& inventory)
{
    return inventory.is_object() && inventory.contains("gpus") && inventory["gpus"].is_array() &&
           !inventory["gpus"].empty();
}

// The trace device that is the suspect and declares it is simulated by `target` (null: none).
const TraceDevice* declaredStandIn(const std::vector<TraceDevice>& devices, const BoardIdentity& suspect,
                                   const std::string& target)
{
    for (const TraceDevice& d : devices) {
        const auto it = d.extra.find("simulated_defect");
        if (it == d.extra.end() || it->second.empty()) continue;
        auto declared = parseTargetSpec(it->second);
        if (!declared || declared->text != target) continue;
        if (suspect.sameGpu({d.uuid, d.serial, d.pciBusId})) return &d;
    }
    return nullptr;
}

TargetTie tieOne(const CampaignTargetEvidence& t, const BoardIdentity& suspect, const json& inventory,
                 const std::string& inventorySource, const std::vector<TraceDevice>& devices)
{
    TargetTie tie;
    tie.target = t.target;
    auto byGpu = [&](const BoardIdentity& gpu, const std::string& where) {
        tie.gpu = gpu;
        if (suspect.sameGpu(gpu)) {
            tie.role = TargetRole::Suspect;
            tie.how = "ran on the suspect GPU (" + gpu.text() + ", " + where + ")";
        } else {
            tie.role = TargetRole::OtherGpu;
            tie.how = "ran on another GPU (" + gpu.text() + ", " + where + "), not the suspect";
        }
    };
    if (t.fleetGpu) {
        byGpu({t.fleetGpu->uuid, t.fleetGpu->serial, t.fleetGpu->pciBusId}, "the fleet campaign's record");
        return tie;
    }
    auto spec = parseTargetSpec(t.target);
    if (!spec) {
        tie.how = "no replay target, so nothing ties it to a GPU";
        return tie;
    }
    if (spec->kind == "cpu") {
        tie.role = TargetRole::Golden;
        tie.how = "the golden model on the host's CPU, not a GPU";
        return tie;
    }
    if (spec->kind == "sim") {
        if (const TraceDevice* d = declaredStandIn(devices, suspect, t.target)) {
            tie.role = TargetRole::SuspectStandIn;
            tie.gpu = {d->uuid, d->serial, d->pciBusId};
            tie.how = "a simulation standing in for the suspect: the trace's device '" + d->label +
                      "' declares it is simulated by it (simulated_defect)";
        } else {
            tie.role = TargetRole::Simulated;
            tie.how = "a simulated device, not the suspect GPU";
        }
        return tie;
    }
    // cuda:N: through the node's inventory.
    char* end = nullptr;
    const long index = std::strtol(spec->model.c_str(), &end, 10);
    if (!hasInventory(inventory)) {
        tie.how =
            "cannot be tied to a physical GPU: the campaign recorded no inventory of its node "
            "(replay --inventory DEVICES.json) and none was given (evidence --inventory DEVICES.json)";
        return tie;
    }
    const json* g = end && *end == '\0' ? inventoryGpu(inventory, index) : nullptr;
    if (!g) {
        tie.how = "not in " + inventorySource + ", so it cannot be tied to a physical GPU";
        return tie;
    }
    // The inventory is the campaign's (untrusted) text: kept printable wherever it is shown.
    byGpu({printableText(jsonString(*g, "uuid")), printableText(jsonString(*g, "serial")),
           printableText(jsonString(*g, "pci_bus_id"))},
          inventorySource);
    return tie;
}

}  // namespace

bool BoardIdentity::sameGpu(const BoardIdentity& o) const
{
    if (!uuid.empty() && !o.uuid.empty() && lowerAscii(uuid) == lowerAscii(o.uuid)) return true;
    if (!serial.empty() && !o.serial.empty() && serial == o.serial) return true;
    const std::string a = normalizeBusId(busId), b = normalizeBusId(o.busId);
    return !a.empty() && a == b;
}

std::string BoardIdentity::text() const
{
    std::string t;
    if (!serial.empty()) t += "serial " + serial;
    if (!uuid.empty()) t += (t.empty() ? "" : ", ") + uuid;
    if (!busId.empty()) t += (t.empty() ? "bus " : ", bus ") + busId;
    return t.empty() ? "no identity recorded" : printableText(t);
}

const char* targetRoleName(TargetRole role)
{
    switch (role) {
        case TargetRole::Suspect:
            return "suspect";
        case TargetRole::SuspectStandIn:
            return "simulated_stand_in";
        case TargetRole::OtherGpu:
            return "other_gpu";
        case TargetRole::Simulated:
            return "simulated";
        case TargetRole::Golden:
            return "golden";
        case TargetRole::Untied:
            return "untied";
    }
    return "untied";
}

const TargetTie* SuspectTargets::find(const std::string& target) const
{
    for (const TargetTie& t : ties)
        if (t.target == target) return &t;
    return nullptr;
}

bool SuspectTargets::isSuspect(const std::string& target) const
{
    const TargetTie* t = find(target);
    return t && (t->role == TargetRole::Suspect || t->role == TargetRole::SuspectStandIn);
}

bool SuspectTargets::anySuspect() const
{
    return std::any_of(ties.begin(), ties.end(), [this](const TargetTie& t) { return isSuspect(t.target); });
}

SuspectTargets tieTargetsToSuspect(const CampaignEvidence& campaign, const BoardIdentity& suspect,
                                   const json& inventory, const std::vector<TraceDevice>& devices)
{
    json inv = inventory;
    std::string source = "the inventory given (--inventory)";
    if (inv.is_null()) {
        source = "the campaign's node inventory";
        const json& doc = campaign.document;
        if (doc.is_object() && doc.contains("node") && doc["node"].is_object())
            inv = doc["node"].value("inventory", json());
    }
    SuspectTargets out;
    out.suspect = suspect;
    for (const CampaignTargetEvidence& t : campaign.targets)
        out.ties.push_back(tieOne(t, suspect, inv, source, devices));
    for (const TargetTie& t : out.ties)
        if (t.role == TargetRole::Untied)
            out.warnings.push_back("campaign: " + printableText(t.target + ": " + t.how) +
                                   "; its results are not taken as the suspect's");
    if (!out.anySuspect()) {
        std::string failing;
        for (const CampaignTargetEvidence& t : campaign.targets)
            if (t.failures > 0) failing += (failing.empty() ? "" : ", ") + t.target;
        out.warnings.push_back("campaign: no target of the campaign ran on the suspect GPU (" +
                               suspect.text() + "), so the replay is no evidence about it" +
                               (failing.empty()
                                    ? std::string()
                                    : "; the failures of " + printableText(failing) +
                                          " belong to other targets and are shown as context only"));
    }
    return out;
}

ReproducerReps reproducerReps(uint64_t failures, uint64_t runs, size_t ops)
{
    ReproducerReps r;
    r.failures = failures;
    r.runs = runs;
    r.ops = std::max<size_t>(ops, 1);
    r.rate = runs ? double(std::min(failures, runs)) / double(runs) : 0.0;
    double wanted = kMinReproducerReps;
    if (r.rate >= 1.0)
        wanted = kMinReproducerReps;
    else if (r.rate <= 0.0)
        wanted = double(kMaxReproducerReps) + 1;  // no measured rate: as many as allowed
    else
        wanted = std::ceil(std::log(1.0 - kReproducerConfidence) / (double(r.ops) * std::log1p(-r.rate)));
    r.capped = wanted > double(kMaxReproducerReps);
    r.reps = uint32_t(std::clamp(wanted, double(kMinReproducerReps), double(kMaxReproducerReps)));
    r.probability = r.rate >= 1.0 ? 1.0 : 1.0 - std::pow(1.0 - r.rate, double(r.reps) * double(r.ops));
    return r;
}

}  // namespace faultline
