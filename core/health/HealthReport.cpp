#include "HealthReport.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "../devices/DeviceReport.h"
#include "BusId.h"
#include "HealthRecommendation.h"
#include "KernelLogParser.h"
#include "NvidiaSmiXml.h"
#include "XidCatalog.h"

namespace faultline {
namespace {

void fill(std::string& into, const std::string& from)
{
    if (into.empty()) into = from;
}

// Later sources win for what they know; what they do not know is kept.
void mergeIdentity(GpuIdentity& into, const GpuIdentity& from)
{
    auto take = [](std::string& a, const std::string& b) {
        if (!b.empty()) a = b;
    };
    take(into.busId, from.busId);
    take(into.uuid, from.uuid);
    take(into.serial, from.serial);
    take(into.product, from.product);
    take(into.architecture, from.architecture);
    take(into.boardPartNumber, from.boardPartNumber);
    take(into.gpuPartNumber, from.gpuPartNumber);
    take(into.vbiosVersion, from.vbiosVersion);
    take(into.inforomImageVersion, from.inforomImageVersion);
    take(into.inforomOemObject, from.inforomOemObject);
    take(into.inforomEccObject, from.inforomEccObject);
    take(into.driverVersion, from.driverVersion);
    take(into.cudaVersion, from.cudaVersion);
}

// The same kernel message read twice (dmesg and journalctl sections of one bug report, or a dmesg
// file next to the bug report that contains it) counts once: same code, GPU, message and wall-clock
// second (or kernel stamp), seen through a different file or time format. Repeats through the
// same file and format are real repeats and stay.
std::string timeKey(const XidEvent& e)
{
    static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const std::string& t = e.time;
    if (t.size() >= 19 && t[4] == '-' && t[10] == 'T') return t.substr(5, 5) + " " + t.substr(11, 8);
    if (t.size() >= 15 && t[3] == ' ')
        for (int m = 0; m < 12; ++m)
            if (t.compare(0, 3, months[m]) == 0) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%02d-%02d %.8s", m + 1, std::atoi(t.substr(4, 2).c_str()),
                              t.c_str() + 7);
                return buf;
            }
    if (e.uptimeSeconds) return "@" + std::to_string(*e.uptimeSeconds);
    return {};
}

std::string originOf(const XidEvent& e)
{
    const size_t colon = e.source.rfind(':');
    const std::string file = colon == std::string::npos ? e.source : e.source.substr(0, colon);
    const char* format = e.time.empty() ? "u" : e.time.back() == 'Z' ? "j" : e.time[3] == ' ' ? "s" : "i";
    return file + "|" + format;
}

using EventKey = std::tuple<int, int, std::string, std::string, std::string>;

}  // namespace

const char* healthActionName(HealthAction a)
{
    switch (a) {
        case HealthAction::None:
            return "none";
        case HealthAction::Monitor:
            return "monitor";
        case HealthAction::Reset:
            return "reset";
        case HealthAction::Drain:
            return "drain";
        case HealthAction::RmaCandidate:
            return "rma_candidate";
    }
    return "none";
}

bool HealthReport::somethingFound() const
{
    if (!unattributedEvents.empty() || eventsNotKept > 0) return true;
    for (const GpuHealthRecord& g : gpus)
        if (g.recommendation != HealthAction::None || !g.events.empty()) return true;
    return false;
}

HealthReport buildHealthReport(std::vector<XidEvent> events, std::vector<GpuHealthSnapshot> snapshots,
                               const std::vector<EventTally>& notKept)
{
    const XidCatalog& catalog = XidCatalog::builtIn();
    HealthReport report;
    std::map<std::string, GpuHealthRecord> byBus;
    std::map<std::string, std::string> busOfUuid;
    std::vector<GpuHealthRecord> noBus;  // snapshots without a bus id (kept, one GPU each)

    for (GpuHealthSnapshot& s : snapshots) {
        std::string bus = s.identity.busId;
        if (bus.empty() && !s.identity.uuid.empty())
            if (auto it = busOfUuid.find(s.identity.uuid); it != busOfUuid.end()) bus = it->second;
        if (bus.empty()) {
            GpuHealthRecord g;
            mergeIdentity(g.identity, s.identity);
            g.snapshots.push_back(std::move(s));
            noBus.push_back(std::move(g));
            continue;
        }
        GpuHealthRecord& g = byBus[bus];
        mergeIdentity(g.identity, s.identity);
        g.identity.busId = bus;
        if (!s.identity.uuid.empty()) busOfUuid[s.identity.uuid] = bus;
        g.snapshots.push_back(std::move(s));
    }

    // Each GPU's events are reserved at once (no doubling of many 680-byte events).
    std::map<std::string, size_t> perBus;
    for (const XidEvent& e : events)
        if (e.kind == XidEvent::Kind::Xid && !e.busId.empty()) ++perBus[e.busId];
    for (const auto& [bus, n] : perBus) byBus[bus].events.reserve(n);
    std::map<EventKey, std::string> seen;  // key -> origin of the first sighting
    for (XidEvent& e : events) {
        if (std::string when = timeKey(e); !when.empty()) {
            const EventKey key{int(e.kind), e.code, e.busId, e.message, when};
            const std::string origin = originOf(e);
            auto [it, inserted] = seen.emplace(key, origin);
            if (!inserted && it->second != origin) continue;
        }
        catalog.decorate(e);
        if (e.kind == XidEvent::Kind::Xid && e.busId.empty() && !e.uuid.empty())
            if (auto it = busOfUuid.find(e.uuid); it != busOfUuid.end()) e.busId = it->second;
        if (e.kind == XidEvent::Kind::SXid || e.busId.empty()) {
            report.unattributedEvents.push_back(std::move(e));
            continue;
        }
        GpuHealthRecord& g = byBus[e.busId];
        g.identity.busId = e.busId;
        fill(g.identity.uuid, e.uuid);
        fill(g.identity.serial, e.serial);
        g.events.push_back(std::move(e));
    }
    std::vector<XidEvent>().swap(events);  // the moved-from events
    seen.clear();

    // Events counted beyond the caps: their counts reach the GPU's summary and recommendation.
    for (const EventTally& t : notKept) {
        report.eventsNotKept += t.count;
        if (t.kind == XidEvent::Kind::SXid || t.busId.empty()) {
            report.unattributedNotKept += t.count;
            continue;
        }
        GpuHealthRecord& g = byBus[t.busId];
        g.identity.busId = t.busId;
        g.xidsNotKept[t.code] += t.count;
    }
    if (report.eventsNotKept > 0)
        report.warnings.push_back(
            std::to_string(report.eventsNotKept) + " Xid/SXid event(s) beyond the cap of " +
            std::to_string(kMaxKeptEvents) + " kept events (or " + std::to_string(kMaxKeptEventBytes >> 20) +
            " MiB of their text) across all logs were counted, not kept: the GPUs' Xid counts and "
            "recommendations include them, their event lists do not (the first event of each GPU and code "
            "is kept)");

    for (auto& [bus, g] : byBus) report.gpus.push_back(std::move(g));
    for (GpuHealthRecord& g : noBus) report.gpus.push_back(std::move(g));
    for (GpuHealthRecord& g : report.gpus) {
        // Identity the logs know but the snapshot does not (or the other way round) reaches every event.
        for (XidEvent& e : g.events) {
            fill(e.uuid, g.identity.uuid);
            fill(e.serial, g.identity.serial);
        }
        if (!g.snapshots.empty()) {
            g.counters = g.snapshots.back().counters;
            const GpuCounters& c = g.counters;
            g.flags.rowRemapPending = c.remapPending.value_or(false);
            g.flags.retiredPagesPending = c.retiredPagesPending.value_or(false);
            // A remapping failure and an exceeded SRAM threshold are permanent: any snapshot that saw
            // one counts, even if a later one (another driver) does not report the field.
            for (const GpuHealthSnapshot& s : g.snapshots) {
                g.flags.rowRemapFailure = g.flags.rowRemapFailure || s.counters.remapFailure.value_or(false);
                g.flags.sramThresholdExceeded =
                    g.flags.sramThresholdExceeded || s.counters.sramThresholdExceeded.value_or(false);
            }
        }
        recommendHealth(g, catalog);
    }
    return report;
}

Result<HealthReport> collectHealth(const HealthInputs& inputs)
{
    std::vector<XidEvent> events;
    std::vector<EventTally> notKept;
    std::vector<GpuHealthSnapshot> snapshots;
    std::vector<GpuIdentity> logIdentities;  // "NVRM: GPU at ..." lines: a GPU even without an Xid
    std::vector<std::string> sources, warnings;
    std::vector<KernelLogBoot> boots;
    std::vector<KernelLogReset> resets;
    KernelLogBudget budget;  // caps across all logs
    for (const std::string& path : inputs.logFiles) {
        auto log = readKernelLog(path, &budget);
        if (!log) return log.error();
        sources.push_back(path);
        events.reserve(events.size() + log->events.size());
        for (XidEvent& e : log->events) events.push_back(std::move(e));
        log->events = {};
        for (EventTally& t : log->notKept) notKept.push_back(std::move(t));
        for (std::string& w : log->warnings) warnings.push_back(std::move(w));
        for (auto& [bus, id] : log->identities) logIdentities.push_back(id);
        for (KernelLogBoot& b : log->boots) boots.push_back(std::move(b));
        for (KernelLogReset& x : log->resets) resets.push_back(std::move(x));
    }
    for (const std::string& path : inputs.nvidiaSmiFiles) {
        auto xml = readNvidiaSmiXml(path);
        if (!xml) return xml.error();
        sources.push_back(path);
        for (GpuHealthSnapshot& s : *xml) snapshots.push_back(std::move(s));
    }
    for (const GpuHealthSnapshot& s : inputs.liveSnapshots) snapshots.push_back(s);
    HealthReport r = buildHealthReport(std::move(events), std::move(snapshots), notKept);
    std::map<std::string, size_t> gpuOfBus;
    for (size_t i = 0; i < r.gpus.size(); ++i)
        if (!r.gpus[i].identity.busId.empty()) gpuOfBus.emplace(r.gpus[i].identity.busId, i);
    for (const GpuIdentity& id : logIdentities) {
        auto it = gpuOfBus.find(id.busId);
        if (it == gpuOfBus.end()) {
            GpuHealthRecord g;
            g.identity = id;
            recommendHealth(g, XidCatalog::builtIn());
            gpuOfBus.emplace(id.busId, r.gpus.size());
            r.gpus.push_back(std::move(g));
        } else {
            GpuHealthRecord& g = r.gpus[it->second];
            fill(g.identity.uuid, id.uuid);
            fill(g.identity.serial, id.serial);
        }
    }
    std::stable_sort(r.gpus.begin(), r.gpus.end(), [](const GpuHealthRecord& a, const GpuHealthRecord& b) {
        return a.identity.busId < b.identity.busId;
    });
    r.sources = std::move(sources);
    r.boots = std::move(boots);
    r.resets = std::move(resets);
    warnings.insert(warnings.end(), std::make_move_iterator(r.warnings.begin()),
                    std::make_move_iterator(r.warnings.end()));
    r.warnings = std::move(warnings);
    return r;
}

GpuHealthSnapshot healthSnapshotFromGpu(const LocalGpu& gpu, const std::string& driverVersion)
{
    GpuHealthSnapshot s;
    s.source = "nvml";
    GpuIdentity& id = s.identity;
    id.busId = normalizeBusId(gpu.pciBusId);
    id.uuid = gpu.uuid;
    id.product = gpu.name;
    id.driverVersion = driverVersion;
    GpuCounters& c = s.counters;
    c.eccEnabled = gpu.eccEnabled;
    if (gpu.clockKHz > 0) c.clocksMHz["sm_clock"] = gpu.clockKHz / 1000.0;
    if (gpu.memoryClockKHz > 0) c.clocksMHz["mem_clock"] = gpu.memoryClockKHz / 1000.0;
    if (gpu.health) {
        const GpuHealth& h = *gpu.health;
        id.serial = h.serial;
        id.boardPartNumber = h.boardPartNumber;
        id.vbiosVersion = h.vbiosVersion;
        id.inforomImageVersion = h.inforomImageVersion;
        c.eccCorrectedVolatile = h.eccCorrectedVolatile;
        c.eccUncorrectedVolatile = h.eccUncorrectedVolatile;
        c.eccCorrectedAggregate = h.eccCorrectedAggregate;
        c.eccUncorrectedAggregate = h.eccUncorrectedAggregate;
        c.remappedRowsCorrectable = h.remappedRowsCorrectable;
        c.remappedRowsUncorrectable = h.remappedRowsUncorrectable;
        c.remapPending = h.remapPending;
        c.remapFailure = h.remapFailure;
        c.remappedRowsAvailable =
            h.remappedRowsCorrectable || h.remappedRowsUncorrectable || h.remapPending || h.remapFailure;
        if (h.temperatureC) c.gpuTemperatureC = double(*h.temperatureC);
        c.powerDrawW = h.powerW;
    }
    return s;
}

std::vector<GpuHealthSnapshot> healthSnapshotsFromDevices(const DeviceReport& devices)
{
    std::vector<GpuHealthSnapshot> out;
    for (const LocalGpu& g : devices.gpus)
        if (g.health) out.push_back(healthSnapshotFromGpu(g, devices.driverVersion));
    return out;
}

}  // namespace faultline
