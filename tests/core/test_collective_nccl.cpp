// The NCCL path of the collective replay without a GPU: the cuda: target settings, and the
// orchestrator driving host stand-ins of the rank processes (tests/support/FakeNcclRank.cpp,
// which like NCCL return from "run" only once every rank has joined): the unique id relayed, every
// collective judged by the invariants, the settings and version recorded, no links attributed,
// and a rank that hangs, crashes, fails or corrupts as a recorded outcome.
#include <QTemporaryDir>
#include <QtTest>
#include <cstdlib>

#include "core/collectives/CollectiveNccl.h"
#include "support/CollectiveReplayTrace.h"

using namespace faultline;

class TestCollectiveNccl : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

    CollectiveOptions options(const QString& settings = {})
    {
        CollectiveOptions o;
        o.tracePath = m_trace.toStdString();
        for (int r = 0; r < 4; ++r)
            o.targets.push_back(
                parseTargetSpec("cuda:" + std::to_string(r) + (r == 0 ? settings.toStdString() : ""))
                    .value()
                    .text);
        o.workerProgram = FAULTLINE_FAKE_NCCL_RANK_EXE;
        o.timeoutSeconds = 3;
        return o;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("collectives.h5");
        QCOMPARE(QString::fromStdString(test::writeCollectiveTrace(m_trace.toStdString(), 4)), QString());
        QVERIFY(QDir().mkpath(m_dir.filePath("rendezvous")));
        qputenv("FAULTLINE_FAKE_NCCL_DIR", m_dir.filePath("rendezvous").toUtf8());
    }
    void init() { qunsetenv("FAULTLINE_FAKE_NCCL_FAULT"); }

    void settingsAreValidated_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("error");  // empty: valid
        QTest::newRow("none") << "cuda:0"
                              << "";
        QTest::newRow("all")
            << "cuda:1:nccl_algo=tree,nccl_proto=ll128,nccl_min_channels=1,nccl_max_channels=64"
            << "";
        QTest::newRow("algo") << "cuda:0:nccl_algo=spiral"
                              << "nccl_algo=spiral is not an NCCL algorithm";
        QTest::newRow("proto") << "cuda:0:nccl_proto=fast"
                               << "nccl_proto=fast is not an NCCL protocol";
        QTest::newRow("channels 0") << "cuda:0:nccl_min_channels=0"
                                    << "nccl_min_channels must be an integer";
        QTest::newRow("channels 2.5") << "cuda:0:nccl_max_channels=2.5"
                                      << "nccl_max_channels must be an integer";
        QTest::newRow("min > max") << "cuda:0:nccl_min_channels=9,nccl_max_channels=8"
                                   << "exceeds";
        QTest::newRow("unknown") << "cuda:0:link_to=1"
                                 << "unknown parameter link_to";
    }
    void settingsAreValidated()
    {
        QFETCH(QString, target);
        QFETCH(QString, error);
        auto spec = parseTargetSpec(target.toStdString());
        QVERIFY(spec.ok());
        auto s = ncclSettingsOf(*spec);
        if (error.isEmpty()) {
            QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        } else {
            QVERIFY(!s.ok());
            QVERIFY2(QString::fromStdString(s.message()).contains(error), s.message().c_str());
            QVERIFY2(s.message().find("target 'cuda:") == 0, s.message().c_str());
        }
    }

    void settingsBecomeTheVariables()
    {
        auto s =
            ncclSettingsOf(*parseTargetSpec("cuda:0:nccl_algo=ring,nccl_proto=simple,nccl_min_channels=2,"
                                            "nccl_max_channels=4"));
        QVERIFY(s.ok());
        applyNcclSettings(*s);
        QCOMPARE(qgetenv("NCCL_ALGO"), QByteArray("Ring"));
        QCOMPARE(qgetenv("NCCL_PROTO"), QByteArray("Simple"));
        QCOMPARE(qgetenv("NCCL_MIN_NCHANNELS"), QByteArray("2"));
        QCOMPARE(qgetenv("NCCL_MAX_NCHANNELS"), QByteArray("4"));
        applyNcclSettings({});
        QVERIFY(!qEnvironmentVariableIsSet("NCCL_ALGO") && !qEnvironmentVariableIsSet("NCCL_MAX_NCHANNELS"));
    }

    void healthyRanksHoldEveryInvariant()
    {
        CollectiveOptions o = options(":nccl_algo=ring,nccl_proto=LL");
        o.reps = 2;
        auto report = runCollectiveReplay(o);
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        QCOMPARE(report->mode, std::string("nccl"));
        QCOMPARE(report->runs.size(), size_t(10));  // 5 collectives x 2 reps
        for (const CollectiveRun& run : report->runs) {
            QVERIFY2(run.status == RunOutcome::Ok,
                     (run.op + ": " + collectiveStatusName(run.status) + " " + run.error).c_str());
            QVERIFY(!run.judged.empty());
        }
        QVERIFY(report->healthy());
        const nlohmann::json j = collectiveJson(*report);
        QCOMPARE(j.at("links_observable").get<bool>(), false);
        QCOMPARE(j.at("links").size(), size_t(0));
        QCOMPARE(j.at("rings").size(), size_t(0));
        QCOMPARE(j.at("nccl").at("version").get<int>(), 22703);
        QCOMPARE(j.at("nccl").at("settings")[0].at("algo").get<std::string>(), std::string("Ring"));
        QCOMPARE(j.at("nccl").at("settings")[0].at("proto").get<std::string>(), std::string("LL"));
        QVERIFY(j.at("nccl").at("settings")[1].at("algo").is_null());
        QVERIFY(QString::fromStdString(collectiveText(*report)).contains("links: not observable"));
    }

    void aFaultyRankIsAnOutcome_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<QString>("status");
        QTest::addColumn<int>("failedRank");  // -1: none named
        QTest::newRow("corrupt") << "2:corrupt"
                                 << "diverged" << -1;
        QTest::newRow("error") << "1:error"
                               << "error" << 1;
        QTest::newRow("crash") << "3:crash"
                               << "crash" << 3;
        QTest::newRow("hang") << "1:hang"
                              << "hang" << -1;  // the others wait for it: no one to blame
    }
    void aFaultyRankIsAnOutcome()
    {
        QFETCH(QString, fault);
        QFETCH(QString, status);
        QFETCH(int, failedRank);
        qputenv("FAULTLINE_FAKE_NCCL_FAULT", fault.toUtf8());
        CollectiveOptions o = options();
        o.ops = "0";  // the sum all_reduce
        o.reps = 2;
        auto report = runCollectiveReplay(o);
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        QCOMPARE(report->runs.size(), size_t(2));
        for (const CollectiveRun& run : report->runs) {
            QCOMPARE(QString::fromStdString(collectiveStatusName(run.status)), status);
            QCOMPARE(run.failedRank, int64_t(failedRank));
            if (status == "diverged") {
                QCOMPARE(run.ranksOff, std::vector<size_t>{2});
                QVERIFY(!run.identical);
            }
            if (status == "error") QVERIFY2(run.error.find("cuda:1") != std::string::npos, run.error.c_str());
        }
        QVERIFY(!report->healthy());
        if (failedRank >= 0) QCOMPARE(report->faultyGpus(), std::vector<size_t>{size_t(failedRank)});
    }

    void aRankWithoutADeviceNamesItsTarget()
    {
        qputenv("FAULTLINE_FAKE_NCCL_FAULT", "2:probe");
        auto report = runCollectiveReplay(options());
        QVERIFY(!report.ok());
        QVERIFY2(report.message().find("target 'cuda:2': no usable CUDA device") == 0,
                 report.message().c_str());
    }

    void setupErrors_data()
    {
        QTest::addColumn<QStringList>("targets");
        QTest::addColumn<QString>("error");
        QTest::newRow("mixed") << QStringList{"cuda:0", "sim:healthy", "cuda:2", "cuda:3"} << "does not mix";
        QTest::newRow("repeated") << QStringList{"cuda:0", "cuda:1", "cuda:1", "cuda:3"}
                                  << "cuda:1 holds two ranks";
    }
    void setupErrors()
    {
        QFETCH(QStringList, targets);
        QFETCH(QString, error);
        CollectiveOptions o = options();
        o.targets.clear();
        for (const QString& t : targets) o.targets.push_back(t.toStdString());
        auto setup = prepareCollectiveReplay(o);
        QVERIFY(!setup.ok());
        QVERIFY2(QString::fromStdString(setup.message()).contains(error), setup.message().c_str());
        QCOMPARE(setup.error().code, ErrorCode::Usage);
    }
};

QTEST_GUILESS_MAIN(TestCollectiveNccl)
#include "test_collective_nccl.moc"
