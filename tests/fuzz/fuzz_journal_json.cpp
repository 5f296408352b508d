// libFuzzer target for journal exports (journalctl -k -o json): the input bytes are read as one
// (after a first entry without a message, so that the journal reading is the one exercised),
// merged into a report and written as JSON and text.
//
// Besides the sanitizers, it aborts when a promise breaks: an exception escapes; an event comes
// from an entry that is not the kernel's (_TRANSPORT=kernel: a `logger -t kernel` entry became
// evidence); an accepted journal's report breaks the JSON or puts a control character in the text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/Text.h"
#include "core/health/HealthReport.h"
#include "core/health/KernelLogParser.h"

using namespace faultline;

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_journal_json: invariant broken: %s\n", what);
        std::abort();
    }
}

// Line `n` (1-based, split at '\n') of `text`, without a trailing '\r'.
std::string_view lineAt(std::string_view text, uint64_t n)
{
    size_t start = 0;
    for (uint64_t i = 1; i < n; ++i) {
        const size_t nl = text.find('\n', start);
        if (nl == std::string_view::npos) return {};
        start = nl + 1;
    }
    std::string_view line = text.substr(start, text.find('\n', start) - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
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
    const std::string bytes = "{\"MESSAGE\": null, \"_TRANSPORT\": \"kernel\"}\n" +
                              std::string(reinterpret_cast<const char*>(data), size);
    try {
        auto log = parseKernelLog(bytes, "fuzz.json");
        if (!log) {
            check(log.message().rfind("fuzz.json:", 0) == 0, "an error that does not name the file");
            return 0;
        }
        check(log->journalJson, "a journal read as text");
        for (const XidEvent& e : log->events) {
            check(e.source.rfind("fuzz.json:", 0) == 0, "source without the file name");
            const uint64_t n = std::strtoull(e.source.c_str() + 10, nullptr, 10);
            const std::string_view line = lineAt(bytes, n);
            if (line.find('\0') != std::string_view::npos) continue;  // read in pieces between NUL runs
            const nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
            if (entry.is_discarded()) continue;  // a cut line: its head was read
            check(entry.is_object(), "an event from a line that is not an entry");
            auto transport = entry.find("_TRANSPORT");
            check(transport != entry.end() && transport->is_string() && *transport == "kernel",
                  "an event from an entry that is not the kernel's");
        }
        HealthReport report = buildHealthReport(std::move(log->events), {}, log->notKept);
        (void)healthReportJson(report).dump();  // throws on invalid UTF-8
        std::ostringstream streamed;
        writeHealthReportJson(streamed, report);
        check(onlyNewlineControls(streamed.str()), "a control character in the JSON output");
        check(onlyNewlineControls(healthReportText(report)), "a control character in the text report");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_journal_json: exception escaped: %s\n", e.what());
        std::abort();
    }
    return 0;
}
