// faultline: with a subcommand it is the CLI (no display needed); without one, the GUI.
#include "cli/Cli.h"

int main(int argc, char** argv)
{
    return faultline::cli::run(argc, argv);
}
