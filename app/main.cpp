// faultline: with a subcommand it is the CLI (no display needed); without one, the GUI.
#include <cstdio>
#include <iostream>

#include "cli/Cli.h"

int main(int argc, char** argv)
{
    const int rc = faultline::cli::run(argc, argv);
    // A report that did not reach its reader (a full disk, a closed pipe) is not a success.
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {
        std::cerr << "error: standard output: the report could not be written\n";
        return faultline::cli::kExitError;
    }
    return rc;
}
