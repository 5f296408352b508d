#pragma once
// Helpers shared by the Qt Test executables: running the fixture writers in tests/fixtures with
// a python3 that has h5py and numpy, and running the built CLI.
#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/HostTensor.h"
#include "core/trace/Trace.h"

namespace faultline::test {

// The python3 with h5py found at configure time ("" when none).
QString pythonPath();

// Runs tests/fixtures/<script> with `args`. Returns true on exit code 0; on failure `error` gets
// the interpreter's stderr (or why it could not run).
bool runFixtureScript(const QString& script, const QStringList& args, QString* error);

struct ProcessResult {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
    bool crashed = false;
    bool timedOut = false;
};
// Runs a program with arguments, waiting at most `timeoutMs`.
ProcessResult runProcess(const QString& program, const QStringList& args, int timeoutMs = 60000);

#if defined(FAULTLINE_EXE) && defined(FAULTLINE_WORKER_EXE)
// Runs the built `faultline` with its worker (the test's FAULTLINE_EXE and FAULTLINE_WORKER_EXE).
inline ProcessResult runFaultline(const QStringList& args, int timeoutMs = 300000)
{
    qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
    return runProcess(QStringLiteral(FAULTLINE_EXE), args, timeoutMs);
}
#endif

// A command's JSON output as an object (empty, with a warning naming the problem, when it is not JSON).
QJsonObject jsonObject(const QByteArray& out);

// Absolute path of a file in the source tree (e.g. "resources/samples/demo.h5").
QString sourcePath(const QString& relative);

// One JSON document per line of `text` (the worker protocol's replies); throws on a bad line.
std::vector<nlohmann::json> jsonLines(const std::string& text);

// A float32 tensor of standard-normal values drawn with mt19937_64 from `seed`.
HostTensor randomNormalTensor(std::vector<uint64_t> shape, uint64_t seed);

// A trace of one gemm op (index 0, no inputs) over an empty in-memory file: enough for the
// worker protocol, whose test targets ignore inputs.
Trace oneOpTrace();

// The temporaries a writer left beside `path` (PATH.tmp or PATH.XXXXXX.tmp): empty when none.
QStringList tempFilesBeside(const QString& path);

}  // namespace faultline::test

// Writes a fixture with tests/fixtures/<script>, failing the current test with the script's
// stderr if it cannot.
#define FL_WRITE_FIXTURE(script, args)                                                               \
    do {                                                                                             \
        QString flFixtureError_;                                                                     \
        if (!faultline::test::runFixtureScript((script), (args), &flFixtureError_))                  \
            QFAIL(qPrintable(QStringLiteral("fixture %1 failed: %2").arg(script, flFixtureError_))); \
    } while (0)
