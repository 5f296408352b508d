// healthReportText: the per-GPU summary `faultline health` prints.
#include <cstdio>
#include <map>
#include <sstream>

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

void eventLine(std::ostringstream& out, const XidEvent& e, const char* indent)
{
    out << indent;
    if (!e.time.empty()) out << e.time << " ";
    if (e.uptimeSeconds) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "[%.6f] ", *e.uptimeSeconds);
        out << buf;
    }
    out << "boot " << e.boot << "  " << (e.kind == XidEvent::Kind::Xid ? "Xid " : "SXid ") << e.code << " "
        << e.name;
    if (!e.immediateAction.empty()) out << " (" << e.immediateAction << ")";
    if (e.pid) out << ", pid " << *e.pid;
    if (!e.process.empty()) out << ", " << e.process;
    if (!e.gpuInstance.empty()) out << ", GPU-I " << e.gpuInstance;
    if (!e.device.empty()) out << ", " << e.device;
    if (e.kind == XidEvent::Kind::SXid && !e.busId.empty()) out << " " << e.busId;
    out << "\n" << indent << "    " << e.message << "\n";
    if (!e.decoded.empty()) {
        out << indent << "    decoded:";
        for (size_t i = 0; i < e.decoded.size(); ++i)
            out << (i ? "; " : " ") << e.decoded[i].name << " = " << e.decoded[i].value;
        out << "\n";
    }
}

}  // namespace

std::string healthReportText(const HealthReport& r)
{
    std::ostringstream out;
    if (r.gpus.empty() && r.unattributedEvents.empty()) out << "No GPU, Xid or SXid found in the inputs.\n";
    for (const GpuHealthRecord& g : r.gpus) {
        const GpuIdentity& id = g.identity;
        out << "GPU " << (id.busId.empty() ? "(no bus id)" : id.busId);
        if (!id.product.empty()) out << "  " << id.product;
        out << "\n    uuid " << (id.uuid.empty() ? "unknown" : id.uuid) << ", serial "
            << (id.serial.empty() ? "unknown" : id.serial);
        if (!id.vbiosVersion.empty()) out << ", VBIOS " << id.vbiosVersion;
        if (!id.driverVersion.empty()) out << ", driver " << id.driverVersion;
        out << "\n    recommendation: " << actionTitle(g.recommendation) << "\n";
        for (const HealthReason& reason : g.reasons)
            out << "      - " << healthActionName(reason.action) << ": " << reason.why << "\n";
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
            out << "    " << g.snapshots.size() << " snapshot(s), last from " << g.snapshots.back().source
                << "\n";
        }
        if (!g.events.empty()) {
            std::map<int, size_t> counts;
            for (const XidEvent& e : g.events) ++counts[e.code];
            out << "    events (" << g.events.size() << "):";
            for (const auto& [code, n] : counts) out << " Xid " << code << " x" << n;
            out << "\n";
            for (const XidEvent& e : g.events) eventLine(out, e, "      ");
        }
    }
    if (!r.unattributedEvents.empty()) {
        out << "Events not attributed to a GPU (" << r.unattributedEvents.size() << "):\n";
        for (const XidEvent& e : r.unattributedEvents) eventLine(out, e, "  ");
    }
    for (const std::string& w : r.warnings) out << "warning: " << w << "\n";
    return out.str();
}

}  // namespace faultline
