#include "Cli.h"

#include <CLI/CLI.hpp>
#include <iostream>

namespace faultline::cli {

int run(int argc, char** argv)
{
    CLI::App app{"Faultline: GPU forensics workbench"};
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? kExitOk : kExitError;
    }
    return kExitOk;
}

}  // namespace faultline::cli
