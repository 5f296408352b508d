// A full disk is a clear error, never a crash or a half-written file: the results of a campaign
// and of a comparison written where no byte more fits (a file-size limit, so writes fail with
// EFBIG as they fail with ENOSPC on a full disk) end in exit 2 with one line naming the file, no
// .tmp left, the journal whole, and a later --resume writes the results.
#include <signal.h>
#include <sys/resource.h>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "ReplayTrace.h"
#include "core/io/SafetensorsWriter.h"
#include "support/TestSupport.h"

using faultline::test::makeReplayTrace;

namespace {

struct Outcome {
    int exitCode = -1;
    bool crashed = false;
    QByteArray err;
};

// Runs faultline with every file it writes limited to `maxFileBytes` (0: no limit).
Outcome runLimited(const QStringList& args, rlim_t maxFileBytes)
{
    QProcess p;
    p.setProgram(QStringLiteral(FAULTLINE_EXE));
    p.setArguments(args);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
    p.setProcessEnvironment(env);
    if (maxFileBytes > 0)
        p.setChildProcessModifier([maxFileBytes] {
            // SIGXFSZ is left at its default: faultline itself must ignore it so that a write
            // past the limit fails with EFBIG and is reported, rather than killing it silently.
            ::signal(SIGXFSZ, SIG_DFL);
            struct rlimit limit {
                maxFileBytes, maxFileBytes
            };
            ::setrlimit(RLIMIT_FSIZE, &limit);
        });
    p.start();
    Outcome o;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return o;
    }
    o.exitCode = p.exitCode();
    o.crashed = p.exitStatus() == QProcess::CrashExit;
    o.err = p.readAllStandardError();
    return o;
}

QByteArray contents(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The error line (progress lines start with '[').
QByteArray errorLine(const QByteArray& err)
{
    for (const QByteArray& line : err.split('\n'))
        if (line.startsWith("error:")) return line;
    return {};
}

}  // namespace

class TestCliDiskFull : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void campaignResultsOnAFullDisk()
    {
        const QString trace = m_dir.filePath("t.h5"), out = m_dir.filePath("r.h5");
        QCOMPARE(makeReplayTrace(trace), QString());
        const QStringList args{"replay", trace, "--targets", "cpu,sim:healthy", "--reps", "3", "--out", out};
        // Every run journaled, then the results file does not fit.
        const Outcome first = runLimited(args, 0);
        QCOMPARE(first.exitCode, 0);
        QVERIFY(QFile::remove(out));
        const QByteArray journal = contents(out + ".journal.jsonl");
        QVERIFY(!journal.isEmpty());

        const Outcome full = runLimited(args + QStringList{"--resume"}, 2048);
        QVERIFY2(!full.crashed, full.err.constData());
        QCOMPARE(full.exitCode, 2);
        const QByteArray line = errorLine(full.err);
        QVERIFY2(line.contains(out.toUtf8()) && line.contains("File too large") && line.contains("--resume"),
                 full.err.constData());
        QVERIFY2(!full.err.contains("Segmentation"), full.err.constData());
        QVERIFY(!QFile::exists(out));
        QVERIFY(faultline::test::tempFilesBeside(out).isEmpty());
        QCOMPARE(contents(out + ".journal.jsonl"), journal);

        // Room again: the resume runs nothing and writes the results.
        const Outcome resumed = runLimited(args + QStringList{"--resume"}, 0);
        QCOMPARE(resumed.exitCode, 0);
        QVERIFY(QFile::exists(out));
        QCOMPARE(contents(out + ".journal.jsonl"), journal);
    }

    // A disk-backed HDF5 file whose writes fail (libhdf5 cannot close it cleanly): still exit 2
    // with the reason, no crash in libhdf5's exit handler, no .tmp left.
    void compareResultsOnAFullDisk()
    {
        using namespace faultline;
        const QString a = m_dir.filePath("a.safetensors"), b = m_dir.filePath("b.safetensors"),
                      out = m_dir.filePath("c.h5");
        HostTensor x = test::randomNormalTensor({512, 512}, 1), y = x;
        for (size_t i = 0; i < y.data.size(); i += 64) y.data[i] ^= std::byte{0x10};
        QVERIFY(writeSafetensors(a.toStdString(), {{"w", x.dtype, x.shape, x.data.data()}}).ok());
        QVERIFY(writeSafetensors(b.toStdString(), {{"w", y.dtype, y.shape, y.data.data()}}).ok());
        const Outcome full = runLimited({"compare", a, b, "--out", out, "--quiet"}, 4096);
        QVERIFY2(!full.crashed, full.err.constData());
        QCOMPARE(full.exitCode, 2);
        QVERIFY2(errorLine(full.err).contains(out.toUtf8()), full.err.constData());
        QVERIFY(!QFile::exists(out));
        QVERIFY(faultline::test::tempFilesBeside(out).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCliDiskFull)
#include "test_cli_disk_full.moc"
