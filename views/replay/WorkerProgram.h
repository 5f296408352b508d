#pragma once
// Where the faultline-worker executable is, for replay campaigns started from the GUI:
// $FAULTLINE_WORKER when set, else next to the running executable (like the CLI's).
#include <QString>

namespace faultline::views {

QString workerProgramPath();

}  // namespace faultline::views
