// healthReportJson and its parts: the `faultline health --json` document (docs/formats.md).
#include <map>
#include <ostream>

#include "HealthReport.h"
#include "LogText.h"
#include "XidCatalog.h"

namespace faultline {
namespace {

using nlohmann::json;

template <class T>
json opt(const std::optional<T>& v)
{
    return v ? json(*v) : json(nullptr);
}

// Every string goes out as valid UTF-8 (paths and log text may hold any bytes), so dump() never
// throws on a report.
std::string utf8(const std::string& s)
{
    return validUtf8(s, s.size());
}

json text(const std::string& s)
{
    return s.empty() ? json(nullptr) : json(utf8(s));
}

json texts(const std::vector<std::string>& v)
{
    json a = json::array();
    for (const std::string& s : v) a.push_back(utf8(s));
    return a;
}

json countsJson(const std::map<std::string, uint64_t>& m)
{
    json j = json::object();
    for (const auto& [k, v] : m) j[k] = v;
    return j;
}

json snapshotJson(const GpuHealthSnapshot& s)
{
    return json{{"source", utf8(s.source)},
                {"timestamp", text(s.timestamp)},
                {"recovery_action", text(s.recoveryAction)},
                {"boot_id", text(s.bootId)},
                {"identity", gpuIdentityJson(s.identity)},
                {"counters", gpuCountersJson(s.counters)}};
}

// One GPU; without its events when `withEvents` is false (writeHealthReportJson streams them).
json gpuJson(const GpuHealthRecord& g, bool withEvents)
{
    json events = json::array();
    std::map<int, uint64_t> summary;
    for (const XidEvent& e : g.events) {
        if (withEvents) events.push_back(xidEventJson(e));
        if (e.kind == XidEvent::Kind::Xid) ++summary[e.code];
    }
    uint64_t notKept = 0;
    for (const auto& [code, n] : g.xidsNotKept) {
        summary[code] += n;
        notKept += n;
    }
    json xidSummary = json::object();
    for (const auto& [code, n] : summary) xidSummary[std::to_string(code)] = n;
    json reasons = json::array();
    for (const HealthReason& r : g.reasons)
        reasons.push_back({{"action", healthActionName(r.action)}, {"reason", utf8(r.why)}});
    json snapshots = json::array();
    for (const GpuHealthSnapshot& s : g.snapshots) snapshots.push_back(snapshotJson(s));
    return json{
        {"bus_id", text(g.identity.busId)},
        {"uuid", text(g.identity.uuid)},
        {"serial", text(g.identity.serial)},
        {"product", text(g.identity.product)},
        {"identity", gpuIdentityJson(g.identity)},
        {"flags",
         {{"row_remap_pending", g.flags.rowRemapPending},
          {"row_remap_failure", g.flags.rowRemapFailure},
          {"sram_threshold_exceeded", g.flags.sramThresholdExceeded},
          {"retired_pages_pending", g.flags.retiredPagesPending}}},
        {"recovery_action", g.snapshots.empty() ? json(nullptr) : text(g.snapshots.back().recoveryAction)},
        {"counters", g.snapshots.empty() ? json(nullptr) : gpuCountersJson(g.counters)},
        {"snapshots", snapshots},
        {"events", events},
        {"events_not_kept", notKept},
        {"xid_summary", xidSummary},
        {"recommendation", healthActionName(g.recommendation)},
        {"recommendation_reasons", reasons}};
}

}  // namespace

json gpuIdentityJson(const GpuIdentity& id)
{
    return json{{"bus_id", text(id.busId)},
                {"uuid", text(id.uuid)},
                {"serial", text(id.serial)},
                {"product", text(id.product)},
                {"architecture", text(id.architecture)},
                {"board_part_number", text(id.boardPartNumber)},
                {"gpu_part_number", text(id.gpuPartNumber)},
                {"vbios_version", text(id.vbiosVersion)},
                {"inforom_image_version", text(id.inforomImageVersion)},
                {"inforom_oem_object", text(id.inforomOemObject)},
                {"inforom_ecc_object", text(id.inforomEccObject)},
                {"driver_version", text(id.driverVersion)},
                {"cuda_version", text(id.cudaVersion)}};
}

json gpuCountersJson(const GpuCounters& c)
{
    json remapped = nullptr;
    if (c.remappedRowsAvailable) {
        json histogram = json::object();
        for (const auto& [k, v] : c.rowRemapperHistogram) histogram[k] = v;
        remapped = {{"correctable", opt(c.remappedRowsCorrectable)},
                    {"uncorrectable", opt(c.remappedRowsUncorrectable)},
                    {"pending", opt(c.remapPending)},
                    {"failure", opt(c.remapFailure)},
                    {"histogram", histogram}};
    }
    json clocks = json::object();
    for (const auto& [k, v] : c.clocksMHz) clocks[k] = v;
    return json{{"ecc_enabled", opt(c.eccEnabled)},
                {"ecc_corrected_volatile", opt(c.eccCorrectedVolatile)},
                {"ecc_uncorrected_volatile", opt(c.eccUncorrectedVolatile)},
                {"ecc_corrected_aggregate", opt(c.eccCorrectedAggregate)},
                {"ecc_uncorrected_aggregate", opt(c.eccUncorrectedAggregate)},
                {"ecc_volatile", countsJson(c.eccVolatile)},
                {"ecc_aggregate", countsJson(c.eccAggregate)},
                {"sram_uncorrectable_sources", countsJson(c.sramUncorrectableSources)},
                {"sram_threshold_exceeded", opt(c.sramThresholdExceeded)},
                {"retired_pages",
                 {{"single_bit", opt(c.retiredPagesSingleBit)},
                  {"double_bit", opt(c.retiredPagesDoubleBit)},
                  {"pending", opt(c.retiredPagesPending)}}},
                {"remapped_rows", remapped},
                {"temperature_c", opt(c.gpuTemperatureC)},
                {"memory_temperature_c", opt(c.memoryTemperatureC)},
                {"power_draw_w", opt(c.powerDrawW)},
                {"power_limit_w", opt(c.powerLimitW)},
                {"clocks_mhz", clocks}};
}

json xidEventJson(const XidEvent& e)
{
    const XidCatalog& catalog = XidCatalog::builtIn();
    json decoded = json::object();
    for (const XidDecodedField& d : e.decoded) decoded[utf8(d.name)] = utf8(d.value);
    return json{{"kind", e.kind == XidEvent::Kind::Xid ? "xid" : "sxid"},
                {"xid", e.code},
                {"time", text(e.time)},
                {"uptime_s", opt(e.uptimeSeconds)},
                {"boot", e.boot},
                {"boot_id", text(e.bootId)},
                {"bus_id", text(e.busId)},
                {"gpu_instance", text(e.gpuInstance)},
                {"compute_instance", text(e.computeInstance)},
                {"device", text(e.device)},
                {"uuid", text(e.uuid)},
                {"serial", text(e.serial)},
                {"pid", opt(e.pid)},
                {"process", text(e.process)},
                {"message", utf8(e.message)},
                {"known", e.known},
                {"name", utf8(e.name)},
                {"mnemonic", text(e.mnemonic)},
                {"category", text(e.category)},
                {"meaning", utf8(e.meaning)},
                {"immediate_action", text(e.immediateAction)},
                {"immediate_action_text", text(catalog.bucketText(e.immediateAction))},
                {"investigatory_action", text(e.investigatoryAction)},
                {"investigatory_action_text", text(catalog.bucketText(e.investigatoryAction))},
                {"architectures", texts(e.architectures)},
                {"decoded", decoded},
                {"source", utf8(e.source)},
                {"raw", utf8(e.rawLine)}};
}

namespace {

// The document; without its GPUs and unattributed events when `withEvents` is false
// (writeHealthReportJson streams them).
json reportJson(const HealthReport& report, bool withEvents)
{
    json gpus = json::array();
    if (withEvents)
        for (const GpuHealthRecord& g : report.gpus) gpus.push_back(gpuJson(g, true));
    json unattributed = json::array();
    if (withEvents)
        for (const XidEvent& e : report.unattributedEvents) unattributed.push_back(xidEventJson(e));
    return json{{"format", "faultline-health"},
                {"version", 1},
                {"boot_id", text(report.bootId)},
                {"sources", texts(report.sources)},
                {"warnings", texts(report.warnings)},
                {"something_found", report.somethingFound()},
                {"events_not_kept", report.eventsNotKept},
                {"unattributed_events_not_kept", report.unattributedNotKept},
                {"gpus", gpus},
                {"unattributed_events", unattributed}};
}

void pad(std::ostream& out, int depth)
{
    for (int i = 0; i < depth; ++i) out << "  ";
}

// `v` as dump(2) writes it at nesting `depth`, with DEL and the C1 controls (U+0080..U+009F, which
// some terminals obey) escaped too: outside strings the dump is ASCII, so these bytes are in strings.
void dumpAt(std::ostream& out, const json& v, int depth)
{
    static const char hex[] = "0123456789abcdef";
    const std::string text = v.dump(2, ' ', false, json::error_handler_t::replace);
    const std::string indent(size_t(depth) * 2, ' ');
    std::string buf;
    buf.reserve(text.size() + text.size() / 8);
    size_t done = 0;  // text[done, i) is still to be copied as it is
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c != '\n' && c != 0x7f && c != 0xc2) continue;
        const bool c1 = c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                        static_cast<unsigned char>(text[i + 1]) <= 0x9f;
        if (c == 0xc2 && !c1) continue;
        buf.append(text, done, i - done);
        if (c == '\n') {
            buf += '\n';
            buf += indent;
        } else {
            const auto cp = c1 ? static_cast<unsigned char>(text[++i]) : c;
            buf += "\\u00";
            buf += hex[cp >> 4];
            buf += hex[cp & 15];
        }
        done = i + 1;
    }
    buf.append(text, done, std::string::npos);
    out << buf;
}

template <class Write>
void arrayAt(std::ostream& out, int depth, size_t n, Write write)
{
    if (n == 0) {
        out << "[]";
        return;
    }
    out << "[\n";
    for (size_t i = 0; i < n; ++i) {
        pad(out, depth + 1);
        write(i, depth + 1);
        out << (i + 1 < n ? ",\n" : "\n");
    }
    pad(out, depth);
    out << "]";
}

// A non-empty object as dump(2) writes it; `streamed(key, depth)` writes the values it knows
// (returning true), the others are dumped.
template <class Write>
void objectAt(std::ostream& out, const json& object, int depth, Write streamed)
{
    out << "{\n";
    size_t i = 0;
    for (auto it = object.begin(); it != object.end(); ++it) {
        pad(out, depth + 1);
        out << json(it.key()).dump() << ": ";
        if (!streamed(it.key(), depth + 1)) dumpAt(out, it.value(), depth + 1);
        out << (++i < object.size() ? ",\n" : "\n");
    }
    pad(out, depth);
    out << "}";
}

void eventsAt(std::ostream& out, const std::vector<XidEvent>& events, int depth)
{
    arrayAt(out, depth, events.size(), [&](size_t i, int d) { dumpAt(out, xidEventJson(events[i]), d); });
}

}  // namespace

json healthReportJson(const HealthReport& report)
{
    return reportJson(report, true);
}

void writeHealthReportJson(std::ostream& out, const HealthReport& report)
{
    objectAt(out, reportJson(report, false), 0, [&](const std::string& key, int depth) {
        if (key == "unattributed_events") {
            eventsAt(out, report.unattributedEvents, depth);
            return true;
        }
        if (key != "gpus") return false;
        arrayAt(out, depth, report.gpus.size(), [&](size_t i, int d) {
            const GpuHealthRecord& g = report.gpus[i];
            objectAt(out, gpuJson(g, false), d, [&](const std::string& gpuKey, int gd) {
                if (gpuKey != "events") return false;
                eventsAt(out, g.events, gd);
                return true;
            });
        });
        return true;
    });
    out << "\n";
}

}  // namespace faultline
