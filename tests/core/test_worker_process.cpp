// The orchestrator side of worker processes: lines, timeouts (hangs), crashes with stderr.
#include <QtTest>

#include "core/replay/WorkerProcess.h"

using faultline::WorkerProcess;
using namespace std::chrono_literals;

class TestWorkerProcess : public QObject {
    Q_OBJECT
private slots:
    void echoesLines()
    {
        WorkerProcess p;
        QVERIFY(p.start("/bin/cat", {}));
        QVERIFY(p.send("{\"id\":1}"));
        std::string line;
        QCOMPARE(p.readLine(line, 5000ms), WorkerProcess::ReadOutcome::Line);
        QCOMPARE(line, std::string("{\"id\":1}"));
        p.finish(2000ms);
        QCOMPARE(p.state(), WorkerProcess::State::Exited);
        QCOMPARE(p.exitStatus(), 0);
    }

    void hangBecomesTimeoutAndKill()
    {
        WorkerProcess p;
        QVERIFY(p.start("/bin/sh", {"-c", "sleep 30"}));
        std::string line;
        QElapsedTimer t;
        t.start();
        QCOMPARE(p.readLine(line, 300ms), WorkerProcess::ReadOutcome::Timeout);
        QVERIFY(t.elapsed() < 5000);
        p.kill();
        QCOMPARE(p.state(), WorkerProcess::State::Killed);
        QVERIFY(!p.running());
    }

    void crashIsClosedWithSignalAndStderr()
    {
        WorkerProcess p;
        QVERIFY(p.start("/bin/sh", {"-c", "echo 'device fell off the bus' >&2; kill -SEGV $$"}));
        std::string line;
        QCOMPARE(p.readLine(line, 5000ms), WorkerProcess::ReadOutcome::Closed);
        QCOMPARE(p.state(), WorkerProcess::State::Crashed);
        QCOMPARE(p.exitStatus(), 11);
        QVERIFY(p.stderrText().find("fell off the bus") != std::string::npos);
        QVERIFY(p.describeExit().find("signal 11") != std::string::npos);
    }

    void exitCodeIsReported()
    {
        WorkerProcess p;
        QVERIFY(p.start("/bin/sh", {"-c", "echo partial; exit 3"}));
        std::string line;
        QCOMPARE(p.readLine(line, 5000ms), WorkerProcess::ReadOutcome::Line);
        QCOMPARE(line, std::string("partial"));
        QCOMPARE(p.readLine(line, 5000ms), WorkerProcess::ReadOutcome::Closed);
        QCOMPARE(p.state(), WorkerProcess::State::Exited);
        QCOMPARE(p.exitStatus(), 3);
    }

    void missingProgramFailsToStartCleanly()
    {
        WorkerProcess p;
        QVERIFY(p.start("/nonexistent/faultline-worker", {}));  // fork succeeds, exec fails
        std::string line;
        QCOMPARE(p.readLine(line, 5000ms), WorkerProcess::ReadOutcome::Closed);
        QCOMPARE(p.exitStatus(), 127);
    }
};

QTEST_GUILESS_MAIN(TestWorkerProcess)
#include "test_worker_process.moc"
