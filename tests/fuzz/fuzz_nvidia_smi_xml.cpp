// libFuzzer target for `nvidia-smi -q -x` output: the input bytes are read as one, the snapshots
// merged into a report, recommended and written as JSON and text.
//
// Besides the sanitizers, it aborts when a promise breaks: an exception escapes; an error does not
// name the file; more than kMaxGpus snapshots or none are accepted; a kept string is not valid
// UTF-8 or a bus id not normalised; the report breaks the JSON or puts a control character in the
// text (XML text may hold escape sequences: they must not reach a terminal).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/Text.h"
#include "core/health/BusId.h"
#include "core/health/HealthReport.h"
#include "core/health/LogText.h"
#include "core/health/NvidiaSmiXml.h"

using namespace faultline;

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_nvidia_smi_xml: invariant broken: %s\n", what);
        std::abort();
    }
}

bool validUtf8Text(const std::string& s)
{
    return validUtf8(s, s.size()) == s;
}

bool onlyNewlineControls(std::string text)
{
    for (char& c : text)
        if (c == '\n') c = ' ';
    return isPrintableText(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        auto xml = parseNvidiaSmiXml(bytes, "fuzz.xml");
        if (!xml) {
            check(xml.message().rfind("fuzz.xml", 0) == 0, "an error that does not name the file");
            return 0;
        }
        check(!xml->empty() && xml->size() <= kMaxGpus, "snapshot count outside 1..kMaxGpus");
        for (const GpuHealthSnapshot& s : *xml) {
            const GpuIdentity& id = s.identity;
            check(s.source == "fuzz.xml", "a snapshot names another source");
            check(id.busId.empty() || normalizeBusId(id.busId) == id.busId, "a bus id not normalised");
            for (const std::string* t : {&id.uuid, &id.serial, &id.product, &id.vbiosVersion,
                                         &id.driverVersion, &s.timestamp, &s.recoveryAction})
                check(validUtf8Text(*t), "a kept string is not valid UTF-8");
        }
        const HealthReport report = buildHealthReport({}, std::move(*xml));
        for (const GpuHealthRecord& g : report.gpus)
            for (const HealthReason& r : g.reasons)
                check(r.action <= g.recommendation, "reason above the recommendation");
        (void)healthReportJson(report).dump();  // throws on invalid UTF-8
        std::ostringstream streamed;
        writeHealthReportJson(streamed, report);
        check(onlyNewlineControls(streamed.str()), "a control character in the JSON output");
        check(onlyNewlineControls(healthReportText(report)), "a control character in the text report");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_nvidia_smi_xml: exception escaped: %s\n", e.what());
        std::abort();
    }
    return 0;
}
