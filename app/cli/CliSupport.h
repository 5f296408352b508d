#pragma once
// Small pieces the subcommands share: Ctrl-C as a cancel flag, where faultline-worker lives,
// progress lines on stderr.
#include <CLI/CLI.hpp>
#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/Result.h"

namespace faultline::cli {

// Installs a SIGINT/SIGTERM handler that sets the returned flag (the second signal kills).
const std::atomic<bool>* installInterruptFlag();

// Accepts a finite number of seconds in [min, max] (CLI::Range lets NaN through: every
// comparison with NaN is false). For --timeout options.
CLI::Validator secondsInRange(double min, double max);

// An --out that a command writes new: refused when something exists there already (a results
// file is never overwritten by a second run) or when it is one of `inputs`. Checked before the
// work starts.
Status checkNewOutput(const std::string& out, const std::vector<std::string>& inputs = {});

// The faultline-worker next to this executable (or $FAULTLINE_WORKER).
std::string workerProgramPath();

// A progress line on stderr, rewritten in place when stderr is a terminal, at most ~5 per second.
void printProgress(double fraction, const std::string& what);
void endProgress();

// A command's JSON report in an HDF5 file (root attributes faultline_format=`format`,
// faultline_version=1; the JSON text as the uint8 dataset report_json), for the GUI and evidence.
Status writeJsonResults(const std::string& path, const std::string& format, const nlohmann::json& report);

// An --out DIR of report files: created with its parents when missing (an error naming it when it
// cannot be a directory), then each (file name, content) written into it atomically.
Status prepareOutputDirectory(const std::string& dir);
Status writeOutputFiles(const std::string& dir,
                        const std::vector<std::pair<std::string, std::string>>& files);

// A report command's results: with --out DIR (`out` non-empty, prepared), DIR/<stem>.json,
// DIR/<stem>.txt and DIR/<stem>.png drawn by `figure` (null where the build has no GUI); then
// the JSON (`asJson`) or the text on stdout.
using ReportFigure = std::function<Status(const nlohmann::json& report, const std::string& png)>;
Status emitReport(const std::string& out, const std::string& stem, const nlohmann::json& report,
                  const std::string& text, bool asJson, const ReportFigure& figure);

}  // namespace faultline::cli
