#include "CliSupport.h"

#include "core/io/AtomicFile.h"

#include <cmath>
#include <sstream>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "Cli.h"
#include "core/Text.h"
#include "core/io/SnapshotWriter.h"

namespace faultline::cli {
namespace {
std::atomic<bool> g_interrupted{false};
bool g_progressShown = false;

extern "C" void onInterrupt(int sig)
{
    if (g_interrupted.exchange(true)) {
        std::signal(sig, SIG_DFL);
        std::raise(sig);
    }
}
}  // namespace

const std::atomic<bool>* installInterruptFlag()
{
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    return &g_interrupted;
}

std::string workerProgramPath()
{
    if (const char* env = std::getenv("FAULTLINE_WORKER"); env && *env) return env;
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return "faultline-worker";
    return (self.parent_path() / "faultline-worker").string();
}

void printProgress(double fraction, const std::string& what)
{
    static auto last = std::chrono::steady_clock::time_point{};
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(200) && fraction < 1.0) return;
    last = now;
    if (::isatty(2)) {
        std::fprintf(stderr, "\r\033[K[%5.1f%%] %.100s", 100.0 * fraction, what.c_str());
        g_progressShown = true;
    } else {
        std::fprintf(stderr, "[%5.1f%%] %s\n", 100.0 * fraction, what.c_str());
    }
    std::fflush(stderr);
}

void endProgress()
{
    if (g_progressShown) std::fprintf(stderr, "\r\033[K");
    g_progressShown = false;
}

}  // namespace faultline::cli

namespace faultline::cli {

int failWith(const Error& e)
{
    // One line, whatever the message carries from a file or an option (a newline, an escape
    // sequence): control characters are written as \xHH.
    std::cerr << "error: " << printableText(e.message) << "\n";
    return exitCodeFor(e.code);
}

Status writeJsonResults(const std::string& path, const std::string& format, const nlohmann::json& report)
{
    auto w = SnapshotWriter::create(path, {.inMemory = true});
    if (!w) return w.error();
    const std::string text = report.dump();
    Status st = w->setRootAttribute("faultline_format", format);
    if (st) st = w->setRootAttribute("faultline_version", int64_t(1));
    if (st) st = w->writeTensor("report_json", DType::UInt8, {text.size()}, text.data());
    if (!st) return st;
    return w->close();
}

Status prepareOutputDirectory(const std::string& dir)
{
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
        return fileError(dir, "is not a directory that can be created", ErrorCode::Io);
    return {};
}

Status writeOutputFiles(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files)
{
    for (const auto& [name, content] : files) {
        const std::string path = (std::filesystem::path(dir) / name).string();
        if (Status st = replaceFileAtomically(path, {{content.data(), content.size()}}); !st) return st;
    }
    return {};
}

Status emitReport(const std::string& out, const std::string& stem, const nlohmann::json& report,
                  const std::string& text, bool asJson, const ReportFigure& figure)
{
    if (!out.empty()) {
        if (Status st =
                writeOutputFiles(out, {{stem + ".json", report.dump(2) + "\n"}, {stem + ".txt", text}});
            !st)
            return st;
        if (figure)
            if (Status st = figure(report, (std::filesystem::path(out) / (stem + ".png")).string()); !st)
                return st;
    }
    if (asJson)
        std::cout << report.dump(2) << "\n";
    else
        std::cout << text;
    return {};
}

CLI::Validator secondsInRange(double min, double max)
{
    auto text = [](double v) {
        std::ostringstream s;
        s << v;
        return s.str();
    };
    const std::string range = text(min) + " to " + text(max);
    return CLI::Validator(
        [min, max, range](std::string& value) -> std::string {
            double v = 0;
            size_t used = 0;
            try {
                v = std::stod(value, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != value.size() || !std::isfinite(v) || v < min || v > max)
                return "'" + value + "' is not a number of seconds from " + range;
            return {};
        },
        "SECONDS in " + range);
}

Status checkNewOutput(const std::string& out, const std::vector<std::string>& inputs)
{
    std::error_code ec;
    for (const std::string& in : inputs)
        if (std::filesystem::equivalent(in, out, ec))
            return fileError(out, "is one of the inputs (--out must be a new path)", ErrorCode::Usage);
    if (std::filesystem::symlink_status(out, ec).type() != std::filesystem::file_type::not_found && !ec)
        return fileError(out, "exists already (not overwritten)", ErrorCode::Usage);
    return {};
}

}  // namespace faultline::cli
