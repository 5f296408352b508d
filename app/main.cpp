// faultline: with a subcommand it is the CLI (no display needed); without one, the GUI.
#include <csignal>
#include <cstdio>
#include <iostream>

#include "cli/Cli.h"

int main(int argc, char** argv)
{
    // Past a file-size limit (ulimit -f) a write fails with EFBIG and is reported, naming the
    // file, instead of the process dying of SIGXFSZ without a word.
    std::signal(SIGXFSZ, SIG_IGN);
    const int rc = faultline::cli::run(argc, argv);
    // A report that did not reach its reader (a full disk, a closed pipe) is not a success.
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {
        std::cerr << "error: standard output: the report could not be written\n";
        return faultline::cli::kExitError;
    }
    return rc;
}
