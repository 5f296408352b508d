#pragma once
// Small pieces the subcommands share: Ctrl-C as a cancel flag, where faultline-worker lives,
// progress lines on stderr.
#include <atomic>
#include <nlohmann/json.hpp>
#include <string>

#include "core/Result.h"

namespace faultline::cli {

// Installs a SIGINT/SIGTERM handler that sets the returned flag (the second signal kills).
const std::atomic<bool>* installInterruptFlag();

// The faultline-worker next to this executable (or $FAULTLINE_WORKER).
std::string workerProgramPath();

// A progress line on stderr, rewritten in place when stderr is a terminal, at most ~5 per second.
void printProgress(double fraction, const std::string& what);
void endProgress();

// A command's JSON report in an HDF5 file (root attributes faultline_format=`format`,
// faultline_version=1; the JSON text as the uint8 dataset report_json), for the GUI and evidence.
Status writeJsonResults(const std::string& path, const std::string& format, const nlohmann::json& report);

}  // namespace faultline::cli
