#pragma once
// The setup the replay tests share: the demo incident built into a temporary directory and opened
// in a real, shown MainWindow, with settings isolated per test program and campaigns run by the
// built faultline-worker. Returns an empty string, or what went wrong.
#include <QCoreApplication>
#include <QSettings>
#include <QSignalSpy>
#include <QSize>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "core/demo/DemoIncident.h"
#include "views/shell/MainWindow.h"

inline QString openDemoWindow(const QTemporaryDir& dir, const char* programName,
                              faultline::DemoIncident& demo,
                              std::unique_ptr<faultline::views::MainWindow>& window, QSize size = {})
{
    QCoreApplication::setOrganizationName(QStringLiteral("FaultlineTests"));
    QCoreApplication::setApplicationName(QString::fromLatin1(programName));
    QSettings().clear();
    qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
    faultline::DemoOptions options;
    options.outDir = dir.filePath(QStringLiteral("demo")).toStdString();
    auto built = faultline::buildDemoIncident(options);
    if (!built) return QString::fromStdString(built.message());
    demo = *built;
    window = std::make_unique<faultline::views::MainWindow>();
    if (size.isValid()) window->resize(size);  // a desktop's window: the docks get their default widths
    window->show();
    QSignalSpy shown(window.get(), &faultline::views::MainWindow::incidentShown);
    window->openFiles({QString::fromStdString(demo.tracePath)});
    if (!QTest::qWaitFor([&] { return shown.count() == 1; }, 30000))
        return QStringLiteral("the demo incident was not shown within 30 s");
    return {};
}
