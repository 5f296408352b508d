#include "HealthRecommendation.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "XidCatalog.h"
#include "XidPayloadDecoder.h"

namespace faultline {
namespace {

// A recovery action as nvidia-smi (<gpu_recovery_action>) or Xid 154 spell it.
HealthAction actionForRecovery(const std::string& text)
{
    std::string t;
    for (char c : text) t.push_back(char(std::tolower(static_cast<unsigned char>(c))));
    if (t.empty() || t == "none") return HealthAction::None;
    if (t.find("drain") != std::string::npos || t.find("reboot") != std::string::npos)
        return HealthAction::Drain;
    if (t.find("reset") != std::string::npos || t.find("flr") != std::string::npos)
        return HealthAction::Reset;
    return HealthAction::Monitor;
}

std::string count(size_t n, const char* one, const char* many)
{
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

HealthAction actionForBucket(const std::string& b)
{
    if (b.empty() || b == "IGNORE" || b == "RESTART_APP" || b == "CHECK_APP/CUDA") return HealthAction::None;
    if (b == "RESTART_BM" || b == "RESTART_VM" || b == "CHECK_MECHANICALS") return HealthAction::Drain;
    if (b == "RESET_GPU" || b == "RESET_FABRIC" || b.rfind("WORKFLOW_NVLINK", 0) == 0)
        return HealthAction::Reset;
    if (b == "WORKFLOW_XID_48") return HealthAction::Reset;  // with 63/64: drain (see below)
    return HealthAction::Monitor;  // CONTACT_SUPPORT, INVESTIGATE_*, UPDATE_SWFW, CHECK_UVM,
                                   // WORKFLOW_XID_13/31/45 ...
}

void recommendHealth(GpuHealthRecord& r, const XidCatalog& catalog)
{
    std::vector<HealthReason> reasons;
    auto add = [&](HealthAction a, std::string why) { reasons.push_back({a, std::move(why)}); };
    const std::string where = r.snapshots.empty() ? std::string() : " (" + r.snapshots.back().source + ")";

    // Memory flags: NVIDIA decides memory RMAs on these, not on raw counts.
    if (r.flags.rowRemapFailure)
        add(HealthAction::RmaCandidate,
            "row-remapping failure" + where +
                ": a bank ran out of spare rows; NVIDIA's RMA policy for row remapping");
    if (r.flags.sramThresholdExceeded)
        add(HealthAction::RmaCandidate, "SRAM uncorrectable error threshold exceeded" + where +
                                            ": NVIDIA asks for field diagnostics and RMA");
    if (r.flags.rowRemapPending)
        add(HealthAction::Reset,
            "row remapping pending" + where + ": a GPU reset activates the remapped row");
    if (r.flags.retiredPagesPending)
        add(HealthAction::Reset,
            "page retirement pending" + where + ": a reboot or GPU reset retires the page");
    if (!r.snapshots.empty()) {
        const GpuHealthSnapshot& s = r.snapshots.back();
        if (HealthAction a = actionForRecovery(s.recoveryAction); a != HealthAction::None)
            add(a, "recovery action \"" + s.recoveryAction + "\" (" + s.source + ")");
        const GpuCounters& c = r.counters;
        if (c.eccUncorrectedVolatile.value_or(0) > 0)
            add(HealthAction::Reset, std::to_string(*c.eccUncorrectedVolatile) +
                                         " uncorrected ECC error(s) since the last reset" + where);
        else if (c.eccUncorrectedAggregate.value_or(0) > 0 || c.remappedRowsUncorrectable.value_or(0) > 0)
            add(HealthAction::Monitor, "uncorrectable memory errors in the GPU's lifetime (aggregate " +
                                           std::to_string(c.eccUncorrectedAggregate.value_or(0)) +
                                           ", rows remapped " +
                                           std::to_string(c.remappedRowsUncorrectable.value_or(0)) + ")" +
                                           where + ": repaired so far; watch for remapping failures");
    }

    // Events, one reason per code (with its count), in first-seen order.
    std::map<int, size_t> xidCount;
    std::vector<const XidEvent*> firstOfCode;
    std::set<int> codes;
    for (const XidEvent& e : r.events) {
        if (e.kind != XidEvent::Kind::Xid) continue;
        if (xidCount[e.code]++ == 0) firstOfCode.push_back(&e);
        codes.insert(e.code);
    }
    // Codes counted beyond the caps: their counts add up; a code with no kept event is judged on
    // its catalogue entry alone.
    std::vector<XidEvent> countedOnly;
    countedOnly.reserve(r.xidsNotKept.size());
    for (const auto& [code, n] : r.xidsNotKept) {
        if (xidCount.count(code) == 0) {
            XidEvent e;
            e.code = code;
            e.busId = r.identity.busId;
            catalog.decorate(e);
            countedOnly.push_back(std::move(e));
            codes.insert(code);
        }
        xidCount[code] += n;
    }
    for (const XidEvent& e : countedOnly) firstOfCode.push_back(&e);
    for (const XidEvent* e : firstOfCode) {
        const size_t n = xidCount[e->code];
        const std::string seen =
            "Xid " + std::to_string(e->code) + " (" + e->name + ", " + count(n, "event", "events") +
            (e->source.empty() ? std::string(", none kept") : ", first at " + e->source) + ")";
        if (!e->known) {
            add(HealthAction::Monitor, seen + ": not in the catalogue; look it up for this driver");
            continue;
        }
        switch (e->code) {
            case 64:
                add(HealthAction::RmaCandidate,
                    seen + ": memory remapping failed; NVIDIA's RMA policy for row remapping");
                continue;
            case 79:
                add(HealthAction::Drain,
                    seen +
                        ": drain the node, cold-boot it and investigate the board, its power "
                        "and slot (RESTART_BM)");
                continue;
            case 48:
                if (codes.count(63) || codes.count(64))
                    add(HealthAction::Drain,
                        seen +
                            " with Xid 63/64: drain the node and reset the GPU (WORKFLOW_XID_48); "
                            "check the SRAM threshold flag afterwards");
                else
                    add(HealthAction::Reset,
                        seen +
                            ": reset the GPU, then check the SRAM threshold flag and run field "
                            "diagnostics if it is set (WORKFLOW_XID_48)");
                continue;
            case 92:
                add(HealthAction::Monitor,
                    seen + ": a high rate of corrected ECC errors; watch for uncorrectable ones");
                continue;
            case 154: {
                // The last recovery action the driver set is the one that holds.
                const XidEvent* last = e;
                for (const XidEvent& x : r.events)
                    if (x.kind == XidEvent::Kind::Xid && x.code == 154) last = &x;
                const std::string lastAction = decodedValue(last->decoded, "recovery_action");
                if (HealthAction a = actionForRecovery(lastAction); a != HealthAction::None)
                    add(a, seen + ": the driver asks for \"" + lastAction + "\"");
                continue;
            }
            case 94:
            case 95: {
                // The message says whether the GPU needs a reset (RST) or a drain and reset (D-RST).
                bool reset = false, drain = false;
                for (const XidEvent& x : r.events) {
                    if (x.kind != XidEvent::Kind::Xid || x.code != e->code) continue;
                    reset = reset || decodedValue(x.decoded, "reset_required") == "yes";
                    drain = drain || decodedValue(x.decoded, "drain_and_reset_recommended") == "yes";
                }
                if (drain)
                    add(HealthAction::Drain, seen + ": the driver recommends a drain and reset (D-RST: Yes)");
                else if (reset && e->code == 94)
                    add(HealthAction::Reset, seen + ": the driver requires a GPU reset (RST: Yes)");
                break;
            }
            default:
                break;
        }
        const HealthAction a = actionForBucket(e->immediateAction);
        if (a == HealthAction::None) continue;
        std::string why = seen + ": " + e->immediateAction;
        if (const std::string text = catalog.bucketText(e->immediateAction); !text.empty())
            why += " (" + text + ")";
        add(a, why);
    }

    std::stable_sort(reasons.begin(), reasons.end(),
                     [](const HealthReason& a, const HealthReason& b) { return a.action > b.action; });
    r.recommendation = reasons.empty() ? HealthAction::None : reasons.front().action;
    r.reasons = std::move(reasons);
}

}  // namespace faultline
