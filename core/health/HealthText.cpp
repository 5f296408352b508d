// healthReportText: the per-GPU summary `faultline health` prints. Every string that came from an
// input (log text, XML values, file names) is printed through printableText.
#include <cstdio>
#include <map>
#include <sstream>

#include "../Text.h"
#include "HealthReport.h"

namespace faultline {
namespace {

template <class T>
std::string num(const std::optional<T>& v)
{
    if (!v) return "n/a";
    std::ostringstream s;
    s << *v;
    return s.str();
}

const char* yes(bool b)
{
    return b ? "YES" : "no";
}

std::string actionTitle(HealthAction a)
{
    switch (a) {
        case HealthAction::None:
            return "nothing to do";
        case HealthAction::Monitor:
            return "monitor";
        case HealthAction::Reset:
            return "reset the GPU";
        case HealthAction::Drain:
            return "drain the node";
        case HealthAction::RmaCandidate:
            return "RMA candidate";
    }
    return "";
}

// Untrusted text, safe for a terminal.
std::string p(const std::string& s)
{
    return printableText(s);
}

void eventLine(std::ostream& out, const XidEvent& e, const char* indent)
{
    out << indent;
    if (!e.time.empty()) out << p(e.time) << " ";
    if (e.uptimeSeconds) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "[%.6f] ", *e.uptimeSeconds);
        out << buf;
    }
    out << "boot " << e.boot << "  " << (e.kind == XidEvent::Kind::Xid ? "Xid " : "SXid ") << e.code << " "
        << p(e.name);
    if (!e.immediateAction.empty()) out << " (" << p(e.immediateAction) << ")";
    if (e.pid) out << ", pid " << *e.pid;
    if (!e.process.empty()) out << ", " << p(e.process);
    if (!e.gpuInstance.empty()) out << ", GPU-I " << p(e.gpuInstance);
    if (!e.device.empty()) out << ", " << p(e.device);
    if (e.kind == XidEvent::Kind::SXid && !e.busId.empty()) out << " " << p(e.busId);
    out << "\n" << indent << "    " << p(e.message) << "\n";
    if (!e.decoded.empty()) {
        out << indent << "    decoded:";
        for (size_t i = 0; i < e.decoded.size(); ++i)
            out << (i ? "; " : " ") << p(e.decoded[i].name) << " = " << p(e.decoded[i].value);
        out << "\n";
    }
}

}  // namespace

void writeHealthReportText(std::ostream& out, const HealthReport& r)
{
    if (r.gpus.empty() && r.unattributedEvents.empty() && r.eventsNotKept == 0)
        out << "No GPU, Xid or SXid found in the inputs.\n";
    for (const GpuHealthRecord& g : r.gpus) {
        const GpuIdentity& id = g.identity;
        out << "GPU " << (id.busId.empty() ? "(no bus id)" : p(id.busId));
        if (!id.product.empty()) out << "  " << p(id.product);
        out << "\n    uuid " << (id.uuid.empty() ? "unknown" : p(id.uuid)) << ", serial "
            << (id.serial.empty() ? "unknown" : p(id.serial));
        if (!id.vbiosVersion.empty()) out << ", VBIOS " << p(id.vbiosVersion);
        if (!id.driverVersion.empty()) out << ", driver " << p(id.driverVersion);
        out << "\n    recommendation: " << actionTitle(g.recommendation) << "\n";
        for (const HealthReason& reason : g.reasons)
            out << "      - " << healthActionName(reason.action) << ": " << p(reason.why) << "\n";
        if (!g.snapshots.empty()) {
            const GpuCounters& c = g.counters;
            out << "    flags: row remap pending " << yes(g.flags.rowRemapPending) << ", row remap failure "
                << yes(g.flags.rowRemapFailure) << ", SRAM threshold exceeded "
                << yes(g.flags.sramThresholdExceeded) << "\n    ECC volatile corrected "
                << num(c.eccCorrectedVolatile) << ", uncorrected " << num(c.eccUncorrectedVolatile)
                << "; aggregate corrected " << num(c.eccCorrectedAggregate) << ", uncorrected "
                << num(c.eccUncorrectedAggregate) << "\n";
            if (c.remappedRowsAvailable)
                out << "    remapped rows correctable " << num(c.remappedRowsCorrectable)
                    << ", uncorrectable " << num(c.remappedRowsUncorrectable) << "\n";
            else
                out << "    remapped rows: n/a\n";
            if (c.retiredPagesSingleBit || c.retiredPagesDoubleBit)
                out << "    retired pages single-bit " << num(c.retiredPagesSingleBit) << ", double-bit "
                    << num(c.retiredPagesDoubleBit) << "\n";
            out << "    " << g.snapshots.size() << " snapshot(s), last from " << p(g.snapshots.back().source)
                << "\n";
        }
        if (!g.events.empty() || !g.xidsNotKept.empty()) {
            std::map<int, uint64_t> counts;
            uint64_t notKept = 0;
            for (const XidEvent& e : g.events) ++counts[e.code];
            for (const auto& [code, n] : g.xidsNotKept) {
                counts[code] += n;
                notKept += n;
            }
            out << "    events (" << g.events.size() + notKept;
            if (notKept) out << ", " << notKept << " counted but not kept";
            out << "):";
            for (const auto& [code, n] : counts) out << " Xid " << code << " x" << n;
            out << "\n";
            for (const XidEvent& e : g.events) eventLine(out, e, "      ");
        }
    }
    if (!r.unattributedEvents.empty() || r.unattributedNotKept) {
        out << "Events not attributed to a GPU (" << r.unattributedEvents.size() + r.unattributedNotKept;
        if (r.unattributedNotKept) out << ", " << r.unattributedNotKept << " counted but not kept";
        out << "):\n";
        for (const XidEvent& e : r.unattributedEvents) eventLine(out, e, "  ");
    }
    for (const std::string& w : r.warnings) out << "warning: " << p(w) << "\n";
}

std::string healthReportText(const HealthReport& r)
{
    std::ostringstream out;
    writeHealthReportText(out, r);
    return out.str();
}

}  // namespace faultline
