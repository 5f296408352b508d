#include "Cli.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <map>

#include "Commands.h"

#ifdef FAULTLINE_HAVE_GUI
#include "GuiLauncher.h"
#endif

namespace faultline::cli {

int run(int argc, char** argv)
{
    CLI::App app{
        "Faultline: GPU forensics workbench. Replays the kernels of an incident and compares "
        "suspect and healthy devices element by element.\n"
        "Without a subcommand, opens the GUI with the given files."};
    app.set_version_flag("--version", std::string("faultline ") + FAULTLINE_VERSION);
    std::vector<std::string> guiFiles;
    app.add_option("FILES", guiFiles, "Files to open in the GUI");
    std::map<std::string, CommandRunner> runners;
    runners["inspect"] = addInspectCommand(app);
    runners["compare"] = addCompareCommand(app);
    runners["replay"] = addReplayCommand(app);
    runners["bisect"] = addBisectCommand(app);
    runners["devices"] = addDevicesCommand(app);
    runners["health"] = addHealthCommand(app);
    runners["demo"] = addDemoCommand(app, argc, argv);
    runners["keygen"] = addKeygenCommand(app);
    runners["verify"] = addVerifyCommand(app);
    runners["evidence"] = addEvidenceCommand(app);
    runners["fleet"] = addFleetCommand(app);
    runners["merge"] = addMergeCommand(app);
    runners["merge-traces"] = addMergeTracesCommand(app);
    runners["sweep"] = addSweepCommand(app);
    runners["collective"] = addCollectiveCommand(app);
    runners["benchmark"] = addBenchmarkCommand(app);
    runners["ops"] = addOpsCommand(app);
    runners["plan"] = addPlanCommand(app);
    runners["ledger"] = addLedgerCommand(app);
    runners["shrink"] = addShrinkCommand(app);
    runners["explore"] = addExploreCommand(app);
    app.require_subcommand(0, 1);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? kExitOk : kExitError;
    }
    for (CLI::App* sub : app.get_subcommands()) {
        auto it = runners.find(sub->get_name());
        if (it != runners.end()) return it->second();
    }
    for (const std::string& f : guiFiles) {
        std::error_code ec;
        if (!std::filesystem::exists(f, ec)) {
            std::cerr << "faultline: " << f << ": no such file (and not a subcommand; see --help)\n";
            return kExitError;
        }
    }
#ifdef FAULTLINE_HAVE_GUI
    return launchGui(argc, argv, guiFiles);
#else
    std::cout << app.help() << "\n(this build has no GUI)\n";
    return kExitOk;
#endif
}

}  // namespace faultline::cli
