#include "GuiLauncher.h"

#include <QApplication>
#include <QStringList>
#include <cstdlib>
#include <iostream>

#include "cli/Cli.h"
#include "views/shell/MainWindow.h"

namespace faultline::cli {

bool haveDisplay()
{
    auto set = [](const char* name) {
        const char* v = std::getenv(name);
        return v && *v;
    };
    return set("DISPLAY") || set("WAYLAND_DISPLAY") || set("QT_QPA_PLATFORM");
}

int launchGui(int argc, char** argv, const std::vector<std::string>& files)
{
    if (!haveDisplay()) {
        std::cerr << "faultline: no display (DISPLAY/WAYLAND_DISPLAY unset), so no GUI.\n"
                     "Use a subcommand instead, e.g. `faultline inspect FILE`, or see `faultline --help`.\n";
        return kExitError;
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Faultline"));
    QApplication::setOrganizationName(QStringLiteral("Faultline"));
    QApplication::setApplicationVersion(QStringLiteral(FAULTLINE_VERSION));
    faultline::views::MainWindow window;
    QStringList paths;
    for (const std::string& f : files) paths << QString::fromStdString(f);
    window.show();
    if (!paths.isEmpty()) window.openFiles(paths);
    return app.exec();
}

}  // namespace faultline::cli
