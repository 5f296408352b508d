// libFuzzer target for the health inputs `faultline health` reads from broken machines: the input
// bytes are read as a kernel log (plain or gzip, text or journal JSON) and as nvidia-smi XML; what
// is accepted is merged into a report, recommended, and written as JSON and text.
//
// Besides the sanitizers, it aborts when an accepted input breaks a promise: an exception escapes,
// a kept string is not valid UTF-8 (the JSON dump would throw), a stored line or message exceeds
// its cap, an event lands on no GPU and is not unattributed, or a recommendation is not the most
// severe of its reasons.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/health/HealthReport.h"
#include "core/health/KernelLogParser.h"
#include "core/health/NvidiaSmiXml.h"

using namespace faultline;

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_health: invariant broken: %s\n", what);
        std::abort();
    }
}

void checkReport(const HealthReport& report, size_t events)
{
    size_t placed = report.unattributedEvents.size();
    for (const GpuHealthRecord& g : report.gpus) {
        placed += g.events.size();
        for (const HealthReason& r : g.reasons)
            check(r.action <= g.recommendation, "reason above the recommendation");
        check(g.reasons.empty() == (g.recommendation == HealthAction::None),
              "recommendation without reasons");
        for (const XidEvent& e : g.events) {
            check(e.busId == g.identity.busId, "event on another GPU");
            check(e.rawLine.size() <= kMaxStoredLineBytes + 2, "raw line over its cap");
            check(e.message.size() <= kMaxStoredLineBytes + 2, "message over its cap");
        }
    }
    check(placed <= events, "more events placed than read");
    // Throws (and so aborts through libFuzzer) on invalid UTF-8 anywhere in the document.
    const std::string json = healthReportJson(report).dump();
    check(!json.empty(), "empty JSON");
    (void)healthReportText(report);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        auto log = parseKernelLog(bytes, "fuzz.log");
        auto xml = parseNvidiaSmiXml(bytes, "fuzz.xml");
        std::vector<XidEvent> events = log ? std::move(log->events) : std::vector<XidEvent>{};
        const size_t n = events.size();
        std::vector<GpuHealthSnapshot> snapshots = xml ? std::move(*xml) : std::vector<GpuHealthSnapshot>{};
        checkReport(buildHealthReport(std::move(events), std::move(snapshots)), n);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_health: exception escaped: %s\n", e.what());
        std::abort();
    }
    return 0;
}
