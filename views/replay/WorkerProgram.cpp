#include "views/replay/WorkerProgram.h"

#include <QCoreApplication>
#include <QDir>

namespace faultline::views {

QString workerProgramPath()
{
    const QString env = qEnvironmentVariable("FAULTLINE_WORKER");
    if (!env.isEmpty()) return env;
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("faultline-worker"));
}

}  // namespace faultline::views
