// `faultline collective` on cuda: ranks through NCCL (label gpu): one faultline-worker process
// per GPU, the unique id relayed by the orchestrator, every collective of a small trace judged by
// the invariants (identical bits, exact blocks, golden sums within the bound), with NCCL's own
// choices and with pinned settings, which the report records. Needs NCCL in the build and at
// least 2 GPUs; skipped with the reason otherwise (a file of its own: CTest marks a whole test
// executable skipped when any of its functions skips).
#include <QTemporaryDir>
#include <QtTest>

#include "core/collectives/CollectiveReplay.h"
#include "core/replay/TargetSpec.h"
#include "kernels/CudaRuntime.h"
#include "kernels/NcclAllReduce.h"
#include "support/CollectiveReplayTrace.h"

using namespace faultline;

class TestNcclCollective : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;
    int m_ranks = 0;

private slots:
    void initTestCase()
    {
        if (!cuda::ncclBuilt()) QSKIP("this build has no NCCL (nccl.h/libnccl not found at configure time)");
        auto count = cuda::deviceCount();
        if (!count) QSKIP(qPrintable(QString::fromStdString("no CUDA device: " + count.message())));
        if (*count < 2)
            QSKIP(qPrintable(QString("NCCL collectives need 2 GPUs; this machine has %1").arg(*count)));
        m_ranks = std::min(*count, 4);
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("collectives.h5");
        QCOMPARE(QString::fromStdString(test::writeCollectiveTrace(m_trace.toStdString(), size_t(m_ranks))),
                 QString());
    }

    void everyCollectiveHoldsItsInvariants_data()
    {
        QTest::addColumn<QString>("settings");
        QTest::addColumn<QString>("algo");
        QTest::addColumn<QString>("proto");
        QTest::newRow("NCCL's choice") << QString() << QString() << QString();
        QTest::newRow("ring, simple, 2 channels")
            << ":nccl_algo=ring,nccl_proto=simple,nccl_min_channels=2,nccl_max_channels=2"
            << "Ring"
            << "Simple";
        QTest::newRow("ring, LL") << ":nccl_algo=Ring,nccl_proto=LL"
                                  << "Ring"
                                  << "LL";
    }
    void everyCollectiveHoldsItsInvariants()
    {
        QFETCH(QString, settings);
        QFETCH(QString, algo);
        QFETCH(QString, proto);
        CollectiveOptions o;
        o.tracePath = m_trace.toStdString();
        for (int r = 0; r < m_ranks; ++r)
            o.targets.push_back(
                parseTargetSpec("cuda:" + std::to_string(r) + settings.toStdString()).value().text);
        o.reps = 2;
        o.timeoutSeconds = 60;
        o.workerProgram = FAULTLINE_WORKER_EXE;
        auto report = runCollectiveReplay(o);
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        QCOMPARE(report->mode, std::string("nccl"));
        QCOMPARE(report->ops.size(), size_t(5));  // the gemm is not a collective
        QCOMPARE(report->runs.size(), size_t(10));
        for (const CollectiveRun& run : report->runs) {
            const QByteArray what =
                QByteArray::fromStdString(run.op + ": " + collectiveStatusName(run.status) + " " + run.error);
            QVERIFY2(run.status == RunOutcome::Ok, what.constData());
            QVERIFY2(run.identical && run.violations == 0 && run.ranksOff.empty(), what.constData());
            QVERIFY(!run.judged.empty());
        }
        QVERIFY(report->healthy());
        QVERIFY(report->links.empty());
        const nlohmann::json j = collectiveJson(*report);
        QCOMPARE(j.at("links_observable").get<bool>(), false);
        QCOMPARE(j.at("nccl").at("version").get<int>(), cuda::ncclLibraryVersion());
        QVERIFY(j.at("nccl").at("version").get<int>() > 0);
        const nlohmann::json& s = j.at("nccl").at("settings");
        QCOMPARE(s.size(), size_t(m_ranks));
        QCOMPARE(QString::fromStdString(s[0].at("algo").is_null() ? "" : s[0].at("algo").get<std::string>()),
                 algo);
        QCOMPARE(
            QString::fromStdString(s[0].at("proto").is_null() ? "" : s[0].at("proto").get<std::string>()),
            proto);
    }

    // A device that is not there is a clear error naming its target, never a verdict.
    void aMissingDeviceNamesTheTarget()
    {
        CollectiveOptions o;
        o.tracePath = m_trace.toStdString();
        for (int r = 0; r < m_ranks; ++r) o.targets.push_back("cuda:" + std::to_string(r == 1 ? 999 : r));
        o.workerProgram = FAULTLINE_WORKER_EXE;
        auto report = runCollectiveReplay(o);
        QVERIFY(!report.ok());
        QVERIFY2(report.message().find("cuda:999") != std::string::npos, report.message().c_str());
        QVERIFY2(report.message().find("no such device") != std::string::npos, report.message().c_str());
    }
};

QTEST_APPLESS_MAIN(TestNcclCollective)
#include "test_nccl_collective.moc"
