// libFuzzer target for text kernel logs (dmesg in every stamp style, syslog files, journalctl's
// text, nvidia-bug-report logs): the input bytes are read as one (after a first dmesg line, so that
// a leading '{' does not make it a journal: fuzz_journal_json covers those), merged into a report
// and written as JSON and text.
//
// Besides the sanitizers, it aborts when a promise breaks: an exception escapes; a text log is an
// error (every oddity of a text log is a warning); an event comes from a line that is not the
// kernel's driver line (KernelLogLine.h: a forged or quoted Xid became evidence); an event names a
// line the input does not have; a kept string is not valid UTF-8 or over its cap; the text report
// carries a control character other than '\n' (an escape sequence would reach the terminal).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/Text.h"
#include "core/health/HealthReport.h"
#include "core/health/KernelLogParser.h"
#include "core/health/LogText.h"

using namespace faultline;

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_kernel_log_text: invariant broken: %s\n", what);
        std::abort();
    }
}

bool validUtf8Text(const std::string& s)
{
    return validUtf8(s, s.size()) == s;
}

// Printable UTF-8 but for line ends: no escape sequence can reach a terminal.
bool onlyNewlineControls(std::string text)
{
    for (char& c : text)
        if (c == '\n') c = ' ';
    return isPrintableText(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string bytes =
        "[    0.000000] Linux version\n" + std::string(reinterpret_cast<const char*>(data), size);
    try {
        auto log = parseKernelLog(bytes, "fuzz.log");
        check(log.ok(), "a text log was an error");
        check(!log->journalJson, "a text log read as a journal");
        for (const XidEvent& e : log->events) {
            check(e.source.rfind("fuzz.log:", 0) == 0, "source without the file name");
            const uint64_t line = std::strtoull(e.source.c_str() + 9, nullptr, 10);
            check(line >= 2 && line <= log->lines, "source names a line the input does not have");
            check(e.rawLine.size() <= kMaxStoredLineBytes && e.message.size() <= kMaxStoredLineBytes,
                  "a kept string over its cap");
            check(validUtf8Text(e.rawLine) && validUtf8Text(e.message) && validUtf8Text(e.process) &&
                      validUtf8Text(e.device) && validUtf8Text(e.gpuInstance),
                  "a kept string is not valid UTF-8");
            // The line (when kept whole and unchanged) must be the kernel's own driver line.
            if (e.rawLine.size() < kMaxStoredLineBytes &&
                e.rawLine.find("\xEF\xBF\xBD") == std::string::npos) {
                const KernelLogLine parts = splitKernelLogLine(trimBlanks(e.rawLine));
                const std::string_view m = trimBlanks(parts.message);
                check(parts.fromKernel, "an event from a line that is not the kernel's");
                if (e.kind == XidEvent::Kind::Xid)
                    check(m.rfind("NVRM: Xid (", 0) == 0,
                          "an Xid event from a line that does not start with it");
                else
                    check(m.find(": SXid (") != std::string_view::npos, "an SXid event from another line");
            }
        }
        for (const std::string& w : log->warnings) check(validUtf8Text(w), "a warning is not valid UTF-8");
        const size_t n = log->events.size();
        HealthReport report = buildHealthReport(std::move(log->events), {}, log->notKept);
        size_t placed = report.unattributedEvents.size();
        for (const GpuHealthRecord& g : report.gpus) placed += g.events.size();
        check(placed <= n, "more events placed than read");
        (void)healthReportJson(report).dump();  // throws on invalid UTF-8
        std::ostringstream streamed;
        writeHealthReportJson(streamed, report);
        check(onlyNewlineControls(streamed.str()), "a control character in the JSON output");
        check(onlyNewlineControls(healthReportText(report)), "a control character in the text report");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_kernel_log_text: exception escaped: %s\n", e.what());
        std::abort();
    }
    return 0;
}
