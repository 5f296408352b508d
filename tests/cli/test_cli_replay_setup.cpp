// Bad setups never become device evidence: a target that cannot start, an option out of range, a
// trace whose ops cannot be replayed, a journal of another campaign, an output that is the input.
// Each is exit 2 with one line naming the cause, and no verdict.
#include <sys/wait.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "ReplayTrace.h"
#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

using faultline::test::makeReplayTrace;
using faultline::test::runProcess;

namespace {

faultline::test::ProcessResult faultlineRun(const QStringList& args, int timeoutMs = 120000)
{
    qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
    return runProcess(QStringLiteral(FAULTLINE_EXE), args, timeoutMs);
}

// A trace whose only op cannot be replayed: a gemm whose inner dimensions disagree (`flaw`
// "shapes"), a layernorm with eps=NaN ("eps"), or a gemm with a parameter the golden model does
// not read ("parameter": judging it without would compare another computation).
QString makeMalformedTrace(const QString& path, const QString& flaw = QStringLiteral("shapes"))
{
    using namespace faultline;
    const bool shapes = flaw == "shapes";
    const HostTensor a = test::randomNormalTensor({8, 5}, 1),
                     b = test::randomNormalTensor({shapes ? 6u : 5u, 4}, 2);
    const HostTensor d = test::randomNormalTensor({8, 4}, 3);
    auto w = TraceWriter::create(path.toStdString());
    if (!w) return QString::fromStdString(w.message());
    Status st = w->addDevice({"gpu0", "suspect", "", "", "", "", "suspect", {}});
    if (st) st = w->addTensor("a", {a.dtype, a.shape, a.data.data()});
    if (st) st = w->addTensor("b", {b.dtype, b.shape, b.data.data()});
    const HostTensor g = test::randomNormalTensor({5}, 4);
    if (st && flaw == "eps") st = w->addTensor("g", {g.dtype, g.shape, g.data.data()});
    TraceOp op;
    op.index = 0;
    op.op = "gemm";
    op.name = "broken";
    op.inputs = {"a", "b"};
    if (flaw == "parameter") op.params["transpose_b"] = int64_t(1);
    if (flaw == "eps") {
        op.op = "rmsnorm";
        op.inputs = {"a", "g"};
        op.params["eps"] = std::nan("");
    }
    if (st) st = w->addOp(op, {{"gpu0", {{d.dtype, d.shape, d.data.data()}}}});
    if (st) st = w->close();
    return st ? QString() : QString::fromStdString(st.message());
}

int lineCount(const QByteArray& text)
{
    return int(text.trimmed().split('\n').size());
}

}  // namespace

class TestCliReplaySetup : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("trace.h5");
        QVERIFY(makeReplayTrace(m_trace).isEmpty());
    }

    void setupErrorsAreNotVerdicts_data()
    {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown fault model") << QStringList{"--targets", "cpu,sim:flpi"} << "sim:flpi";
        QTest::newRow("unknown parameter") << QStringList{"--targets", "sim:stuck-bit:bti=3"} << "bti";
        QTest::newRow("cuda without a usable driver") << QStringList{"--targets", "cpu,cuda:0"} << "cuda:0";
        QTest::newRow("cuda with an NCCL setting (collective only)")
            << QStringList{"--targets", "cpu,cuda:0:nccl_algo=Ring"}
            << "nccl_algo is a setting of NCCL ranks";
        QTest::newRow("timeout nan") << QStringList{"--targets", "cpu", "--timeout", "nan"} << "--timeout";
        QTest::newRow("timeout 1e300")
            << QStringList{"--targets", "cpu", "--timeout", "1e300"} << "--timeout";
    }

    void setupErrorsAreNotVerdicts()
    {
        QFETCH(QStringList, extra);
        QFETCH(QString, expected);
        if (expected == "cuda:0" && QFile::exists("/dev/nvidiactl"))
            QSKIP("this machine may have a usable CUDA driver: cuda:0 could start");
        auto r = faultlineRun(QStringList{"replay", m_trace, "--reps", "2", "--quiet"} + extra);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.out.isEmpty(), r.out.constData());  // no report, no verdict
        QVERIFY2(r.err.contains(expected.toUtf8()), r.err.constData());
        QVERIFY2(!r.err.contains("device-specific") && !r.err.contains("persistent"), r.err.constData());
    }

    void unreplayableTraceHasNoVerdict_data()
    {
        QTest::addColumn<QString>("flaw");
        QTest::addColumn<QString>("why");
        QTest::newRow("gemm shapes disagree") << "shapes"
                                              << "";
        QTest::newRow("eps is NaN") << "eps"
                                    << "eps";
        QTest::newRow("a parameter the op does not read") << "parameter"
                                                          << "transpose_b";
    }
    void unreplayableTraceHasNoVerdict()
    {
        QFETCH(QString, flaw);
        QFETCH(QString, why);
        const QString bad = m_dir.filePath("malformed-" + flaw + ".h5");
        QVERIFY(makeMalformedTrace(bad, flaw).isEmpty());
        const QString out = m_dir.filePath("malformed-results-" + flaw + ".h5");
        auto r = faultlineRun(
            {"replay", bad, "--targets", "cpu,sim:healthy", "--reps", "2", "--out", out, "--quiet"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("no selected op can be replayed"), r.err.constData());
        QVERIFY2(r.err.contains(bad.toUtf8()), r.err.constData());
        QVERIFY2(r.err.contains(why.toUtf8()), r.err.constData());
        QVERIFY2(r.out.isEmpty(), r.out.constData());
        // Nothing is left that a later campaign would have to resume.
        QVERIFY(!QFile::exists(out + ".journal.jsonl"));

        // bisect says it could check nothing, and exits 2 rather than "no op left its bound".
        auto b = faultlineRun({"bisect", bad, "--suspect", "gpu0", "--json", "--quiet"});
        QCOMPARE(b.exitCode, 2);
        const QJsonObject o = QJsonDocument::fromJson(b.out).object();
        QCOMPARE(o.value("checked_ops").toInt(-1), 0);
        QVERIFY2(b.err.contains("no op could be checked"), b.err.constData());
    }

    void outputMayNotBeTheInput()
    {
        auto r = faultlineRun({"replay", m_trace, "--targets", "cpu", "--out", m_trace, "--quiet"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("is the trace this campaign replays"), r.err.constData());
        QCOMPARE(lineCount(r.err), 1);
    }

    void resumeRefusesAnotherCampaignsJournal()
    {
        const QString out = m_dir.filePath("resume.h5");
        auto first =
            faultlineRun({"replay", m_trace, "--targets", "cpu", "--reps", "1", "--out", out, "--quiet"});
        QCOMPARE(first.exitCode, 0);

        // Another trace (other content, same shape of campaign).
        const QString other = m_dir.filePath("other.h5");
        QVERIFY(makeReplayTrace(other, 2).isEmpty());
        auto wrongTrace = faultlineRun(
            {"replay", other, "--targets", "cpu", "--reps", "1", "--out", out, "--resume", "--quiet"});
        QCOMPARE(wrongTrace.exitCode, 2);
        QVERIFY2(wrongTrace.err.contains("belongs to another trace"), wrongTrace.err.constData());

        auto wrongSeed = faultlineRun({"replay", m_trace, "--targets", "cpu", "--reps", "1", "--out", out,
                                       "--resume", "--seed", "7", "--quiet"});
        QCOMPARE(wrongSeed.exitCode, 2);
        QVERIFY2(wrongSeed.err.contains("--seed"), wrongSeed.err.constData());

        auto wrongTargets = faultlineRun({"replay", m_trace, "--targets", "sim:healthy", "--reps", "1",
                                          "--out", out, "--resume", "--quiet"});
        QCOMPARE(wrongTargets.exitCode, 2);
        QVERIFY2(wrongTargets.err.contains("a target this campaign does not run"),
                 wrongTargets.err.constData());

        // Duplicated and unknown lines are reported, not counted.
        QFile j(out + ".journal.jsonl");
        QVERIFY(j.open(QIODevice::ReadOnly));
        QList<QByteArray> lines = j.readAll().trimmed().split('\n');
        j.close();
        QCOMPARE(lines.size(), 1 + 4);  // header + 4 ops x 1 rep
        QByteArray unknown = lines[1];
        unknown.replace("\"outcome\":\"ok\"", "\"outcome\":\"sideways\"");
        QVERIFY(j.open(QIODevice::Append));
        j.write(lines[2] + "\n" + unknown + "\n");
        j.close();
        auto resumed = faultlineRun({"replay", m_trace, "--targets", "cpu", "--reps", "1", "--out", out,
                                     "--resume", "--json", "--quiet"});
        QCOMPARE(resumed.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(resumed.out).object();
        QCOMPARE(o.value("runs").toArray().size(), 4);
        const QJsonArray targets = o.value("targets").toArray();
        QCOMPARE(targets.size(), 1);
        QCOMPARE(targets[0].toObject().value("runs").toInt(), 4);
        QString warnings;
        for (const QJsonValue& w : o.value("warnings").toArray()) warnings += w.toString() + "\n";
        QVERIFY2(warnings.contains("repeated run"), qPrintable(warnings));
        QVERIFY2(warnings.contains("unreadable journal line"), qPrintable(warnings));
    }

    void orphanedScratchDirsAreRemoved()
    {
        // A scratch directory left by an orchestrator killed with -9 (its pid is gone) is removed
        // by the next campaign; one of a live orchestrator is not touched.
        const pid_t child = ::fork();
        if (child == 0) ::_exit(0);
        QVERIFY(child > 0);
        ::waitpid(child, nullptr, 0);
        const QString orphan = QDir::temp().filePath(QString("faultline-replay-%1-orphan").arg(child));
        const QString alive = QDir::temp().filePath(QString("faultline-replay-%1-alive").arg(::getpid()));
        QVERIFY(QDir().mkpath(orphan + "/inner"));
        QVERIFY(QDir().mkpath(alive));
        auto r =
            faultlineRun({"replay", m_trace, "--targets", "cpu", "--reps", "1", "--ops", "2", "--quiet"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(!QFileInfo::exists(orphan), qPrintable(orphan));
        QVERIFY(QFileInfo::exists(alive));
        QDir(alive).removeRecursively();
    }
};

QTEST_GUILESS_MAIN(TestCliReplaySetup)
#include "test_cli_replay_setup.moc"
