// The orchestrator against workers that break the protocol's types: a reply whose fields have
// the wrong JSON types, or whose on-device repetition check is not one, becomes an `error` run
// naming the problem (and the worker is restarted), never an exception that ends the campaign.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "cli/ReplayTrace.h"
#include "core/replay/Campaign.h"

using namespace faultline;

namespace {

// A fake faultline-worker: the hello, then `reply` (with the request's id spliced in) per
// request; with `exitAfterReply`, it exits (code 3) after its first reply, as a worker does after
// a fatal error.
QString writeFakeWorker(const QTemporaryDir& dir, const QString& name, const QString& reply,
                        bool exitAfterReply = false)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(
        "#!/bin/sh\n"
        "echo '{\"hello\":\"faultline-worker\",\"protocol\":1,\"target\":\"cpu\",\"description\":\"fake\","
        "\"bitwise_stable\":true}'\n"
        "while read -r line; do\n"
        "  id=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\n"
        "  echo \"{\\\"id\\\":$id," +
        reply.toUtf8() + "}\"\n" + QByteArray(exitAfterReply ? "  exit 3\n" : "") + "done\n");
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

// A campaign of 2 ops x 2 repetitions on one target served by `worker`, over the replay test
// trace written into `dir` ("" in `error` unless the trace could not be written).
CampaignOptions fakeCampaign(const QTemporaryDir& dir, const QString& worker, QString* error)
{
    const QString trace = dir.filePath("trace.h5");
    *error = faultline::test::makeReplayTrace(trace);
    CampaignOptions o;
    o.tracePath = trace.toStdString();
    o.targets = {*parseTargetSpec("cpu")};
    o.ops = "0,1";
    o.reps = 2;
    o.timeout = std::chrono::milliseconds(10000);
    o.workerProgram = worker.toStdString();
    o.scratchDir = dir.filePath("scratch").toStdString();
    return o;
}

}  // namespace

class TestCampaignProtocol : public QObject {
    Q_OBJECT

private slots:
    void stickyDeviceErrorsAreDeviceFaults()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString err;
        CampaignOptions o =
            fakeCampaign(dir,
                         writeFakeWorker(dir, "faulting-worker",
                                         R"(\"ok\":false,\"fatal\":true,\"error\":\"cuda:0: running the op: )"
                                         R"(cudaErrorIllegalAddress (700): an illegal memory access\")",
                                         true),
                         &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        o.outPath = dir.filePath("results.h5").toStdString();
        auto report = Campaign(o).run();
        QVERIFY2(report, report ? "" : report.message().c_str());
        // Every run reached a fresh worker (the last one exited) and was recorded as a device fault.
        QCOMPARE(report->runs.size(), size_t(4));
        for (const RunRecord& r : report->runs) {
            QCOMPARE(r.outcome, RunOutcome::Error);
            QVERIFY(r.deviceFault);
            QVERIFY2(r.error.find("cudaErrorIllegalAddress") != std::string::npos, r.error.c_str());
        }
        uint64_t faults = 0;
        for (const OpTargetStats& s : report->stats) faults += s.deviceFaults;
        QCOMPARE(faults, uint64_t(4));
        QVERIFY(report->targets[0].explanation.find("4 device fault(s)") != std::string::npos);
        QCOMPARE(report->targets[0].verdict, Verdict::Persistent);
        // The journal keeps it.
        std::vector<std::string> warnings;
        const auto journaled = readCampaignJournal(Campaign::journalPath(o.outPath), warnings);
        QCOMPARE(journaled.size(), size_t(4));
        QVERIFY(journaled[0].deviceFault);
    }

    void wronglyTypedRepliesAreErrors_data()
    {
        QTest::addColumn<QString>("reply");
        QTest::addColumn<QString>("expected");
        QTest::newRow("injected is text") << R"(\"ok\":true,\"outputs\":1,\"injected\":\"lots\")"
                                          << "worker answered out of protocol: ";
        QTest::newRow("golden_exact is a number") << R"(\"ok\":true,\"outputs\":1,\"golden_exact\":3)"
                                                  << "worker answered out of protocol: ";
        QTest::newRow("vs_rep is not a check")
            << R"(\"ok\":true,\"outputs\":1,\"vs_rep\":{\"rep\":0,\"mismatched\":\"x\"})"
            << "worker answered out of protocol: vs_rep is not a repetition check";
        QTest::newRow("negative mismatches")
            << R"(\"ok\":true,\"outputs\":1,\"vs_rep\":{\"rep\":0,\"mismatched\":-2})"
            << "vs_rep is not a repetition check";
    }

    void wronglyTypedRepliesAreErrors()
    {
        QFETCH(QString, reply);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString err;
        const CampaignOptions o = fakeCampaign(dir, writeFakeWorker(dir, "fake-worker", reply), &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        auto report = Campaign(o).run();
        QVERIFY2(report, report ? "" : report.message().c_str());
        QCOMPARE(report->runs.size(), size_t(4));  // every run recorded: the campaign went on
        for (const RunRecord& r : report->runs) {
            QCOMPARE(r.outcome, RunOutcome::Error);
            QVERIFY2(r.error.find(expected.toStdString()) != std::string::npos, r.error.c_str());
        }
        QCOMPARE(report->targets[0].failures, uint64_t(4));
    }
};

QTEST_APPLESS_MAIN(TestCampaignProtocol)
#include "test_campaign_protocol.moc"
