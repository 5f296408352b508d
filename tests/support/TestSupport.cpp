#include "TestSupport.h"

#include "core/io/MemoryTensorFile.h"

#include <random>
#include <sstream>

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QProcess>

namespace faultline::test {

QString pythonPath()
{
    // FAULTLINE_FIXTURE_PYTHON runs the fixtures under another python (e.g. a venv with a newer
    // torch, to check the golden model against its kernels); the default is the build's.
    const QString other = qEnvironmentVariable("FAULTLINE_FIXTURE_PYTHON");
    return other.isEmpty() ? QStringLiteral(FAULTLINE_TEST_PYTHON) : other;
}

QString sourcePath(const QString& relative)
{
    return QDir(QStringLiteral(FAULTLINE_SOURCE_DIR)).filePath(relative);
}

bool runFixtureScript(const QString& script, const QStringList& args, QString* error)
{
    const QString python = pythonPath();
    if (python.isEmpty() || !QFileInfo::exists(python)) {
        *error = QStringLiteral("no python3 with h5py found at configure time: run scripts/setup-deps");
        return false;
    }
    const QString path = sourcePath(QStringLiteral("tests/fixtures/") + script);
    ProcessResult r = runProcess(python, QStringList{path} + args, 120000);
    if (r.exitCode != 0 || r.crashed || r.timedOut) {
        *error = QString::fromUtf8(r.err) + QString::fromUtf8(r.out);
        if (r.timedOut) *error += QStringLiteral(" (timed out)");
        return false;
    }
    return true;
}

ProcessResult runProcess(const QString& program, const QStringList& args, int timeoutMs)
{
    ProcessResult r;
    QProcess p;
    p.start(program, args);
    if (!p.waitForStarted(10000)) {
        r.err = "could not start " + program.toUtf8();
        return r;
    }
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        r.timedOut = true;
        p.kill();
        p.waitForFinished(5000);
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.crashed = p.exitStatus() == QProcess::CrashExit;
    r.exitCode = p.exitCode();
    return r;
}

std::vector<nlohmann::json> jsonLines(const std::string& text)
{
    std::vector<nlohmann::json> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
}

HostTensor randomNormalTensor(std::vector<uint64_t> shape, uint64_t seed)
{
    HostTensor t(DType::Float32, std::move(shape));
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (uint64_t i = 0; i < t.elementCount(); ++i) t.as<float>()[i] = n(rng);
    return t;
}

Trace oneOpTrace()
{
    Trace t;
    t.file = std::make_shared<MemoryTensorFile>();
    TraceOp op;
    op.index = 0;
    op.op = "gemm";
    t.ops.push_back(op);
    return t;
}

QStringList tempFilesBeside(const QString& path)
{
    const QFileInfo info(path);
    const QString name = info.fileName();
    QStringList found;
    for (const QString& entry : info.dir().entryList(QDir::Files | QDir::Hidden | QDir::System))
        if (entry.startsWith(name + ".") && entry.endsWith(".tmp")) found << info.dir().filePath(entry);
    return found;
}

QJsonObject jsonObject(const QByteArray& out)
{
    QJsonParseError e;
    const QJsonDocument d = QJsonDocument::fromJson(out, &e);
    if (e.error != QJsonParseError::NoError)
        qWarning("bad JSON: %s\n%s", qPrintable(e.errorString()), out.constData());
    return d.object();
}

}  // namespace faultline::test
