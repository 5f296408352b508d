#pragma once
#include <string>
#include <vector>

namespace faultline::cli {

// True when a GUI can be shown: a display (X11/Wayland) or an explicit QT_QPA_PLATFORM.
bool haveDisplay();

// Starts the Qt application and the main window with `files` opened; returns its exit code.
int launchGui(int argc, char** argv, const std::vector<std::string>& files);

}  // namespace faultline::cli
