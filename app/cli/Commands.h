#pragma once
// The CLI subcommands. Each registers its options on a CLI11 subcommand and returns the code
// to exit with (Cli.h: 0 ok, 1 diverged, 2 error).
#include <CLI/CLI.hpp>
#include <functional>

namespace faultline::cli {

using CommandRunner = std::function<int()>;

// Adds `inspect` to `app`; the returned runner executes it after parsing.
CommandRunner addInspectCommand(CLI::App& app);
CommandRunner addReplayCommand(CLI::App& app);
CommandRunner addBisectCommand(CLI::App& app);
CommandRunner addCompareCommand(CLI::App& app);
CommandRunner addDevicesCommand(CLI::App& app);
CommandRunner addHealthCommand(CLI::App& app);
CommandRunner addDemoCommand(CLI::App& app, int argc, char** argv);
CommandRunner addKeygenCommand(CLI::App& app);
CommandRunner addVerifyCommand(CLI::App& app);
CommandRunner addEvidenceCommand(CLI::App& app);
CommandRunner addFleetCommand(CLI::App& app);
CommandRunner addMergeCommand(CLI::App& app);
CommandRunner addMergeTracesCommand(CLI::App& app);
CommandRunner addSweepCommand(CLI::App& app);
CommandRunner addCollectiveCommand(CLI::App& app);
CommandRunner addBenchmarkCommand(CLI::App& app);
CommandRunner addOpsCommand(CLI::App& app);
CommandRunner addPlanCommand(CLI::App& app);
CommandRunner addLedgerCommand(CLI::App& app);
CommandRunner addShrinkCommand(CLI::App& app);
CommandRunner addExploreCommand(CLI::App& app);

}  // namespace faultline::cli
