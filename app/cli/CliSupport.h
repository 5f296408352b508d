#pragma once
// Small pieces the subcommands share: Ctrl-C as a cancel flag, where faultline-worker lives,
// progress lines on stderr.
#include <atomic>
#include <string>

namespace faultline::cli {

// Installs a SIGINT/SIGTERM handler that sets the returned flag (the second signal kills).
const std::atomic<bool>* installInterruptFlag();

// The faultline-worker next to this executable (or $FAULTLINE_WORKER).
std::string workerProgramPath();

// A progress line on stderr, rewritten in place when stderr is a terminal, at most ~5 per second.
void printProgress(double fraction, const std::string& what);
void endProgress();

}  // namespace faultline::cli
