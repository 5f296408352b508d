// `faultline collective` through the built executable, one rank process per target (the
// default) and in one process: exit 0 on a healthy group, 1 naming exactly the planted faulty
// GPU and link, a rank that hangs or crashes as a recorded outcome, 2 for a bad setup; the
// public JSON fields (the per-link table) and the --out file.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "support/CollectiveReplayTrace.h"
#include "support/TestSupport.h"

using faultline::test::runProcess;

namespace {

QString group(const QStringList& planted, int n = 8)
{
    QStringList targets;
    for (int i = 0; i < n; ++i)
        targets << (planted.value(i).isEmpty() ? QStringLiteral("sim:healthy") : planted[i]);
    return targets.join(',');
}

// The links table and the runs without the measured fields.
QJsonArray decidedLinks(QJsonArray links)
{
    for (qsizetype i = 0; i < links.size(); ++i) {
        QJsonObject l = links[i].toObject();
        l.remove("gbps");
        links[i] = l;
    }
    return links;
}

// Eight cuda: ranks (the trace's rank count), each with the parameters `settings` (":k=v,...").
QString cudaGroup(const QString& settings)
{
    QStringList targets;
    for (int i = 0; i < 8; ++i) targets << QStringLiteral("cuda:%1%2").arg(i).arg(settings);
    return targets.join(',');
}

}  // namespace

class TestCliCollective : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

    faultline::test::ProcessResult collective(const QStringList& args)
    {
        return runProcess(QStringLiteral(FAULTLINE_EXE), QStringList{"collective", m_trace} + args, 300000);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("collectives.h5");
        QCOMPARE(QString::fromStdString(faultline::test::writeCollectiveTrace(m_trace.toStdString(), 8)),
                 QString());
    }

    void healthyGroupExitsZero()
    {
        const QString out = m_dir.filePath("healthy-result.h5");
        auto r = collective({"--targets", group({}), "--json", "--out", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value("mode").toString(), QString("processes"));
        QCOMPARE(o.value("targets").toArray().size(), 8);
        QCOMPARE(o.value("faulty_gpus").toArray(), QJsonArray());
        QCOMPARE(o.value("faulty_links").toArray(), QJsonArray());
        QCOMPARE(o.value("rings").toArray(),
                 QJsonArray({QJsonArray({0, 1, 2, 3, 4, 5, 6, 7}), QJsonArray({7, 6, 5, 4, 3, 2, 1, 0})}));
        QCOMPARE(o.value("ops").toArray().size(), 5);  // the gemm is not a collective
        QCOMPARE(o.value("warnings").toArray().size(), 1);
        // 5 ops x 2 rings x 1 rep, each judged.
        const QJsonArray runs = o.value("runs").toArray();
        QCOMPARE(runs.size(), 10);
        for (const auto& run : runs) {
            QCOMPARE(run.toObject().value("status").toString(), QString("ok"));
            QVERIFY(!run.toObject().value("judged").toString().isEmpty());
        }
        // The links table: the 16 directed links of the two rings, each used, none failing.
        const QJsonArray links = o.value("links").toArray();
        QCOMPARE(links.size(), 16);
        for (const auto& l : links) {
            const QJsonObject x = l.toObject();
            for (const char* key :
                 {"src", "dst", "transfers", "failures", "corrupted_bytes", "gbps", "signature"})
                QVERIFY2(x.contains(key), key);
            QVERIFY(x.value("transfers").toInt() > 0);
            QCOMPARE(x.value("failures").toInt(), 0);
        }
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().contains("collective"));
    }

    void namesThePlantedParts_data()
    {
        QTest::addColumn<QStringList>("planted");
        QTest::addColumn<QString>("ops");
        QTest::addColumn<QJsonArray>("gpus");
        QTest::addColumn<QJsonArray>("links");
        QStringList link(8), gpu(8), both(8);
        link[2] = "sim:healthy:link_to=3,link_rate=0.01";
        gpu[5] = "sim:flip:rate=0.01";
        both[6] = "sim:stuck-bit:bit=30";
        both[1] = "sim:healthy:link_to=2,link_drop=0.5";
        for (const char* ops : {"all_reduce", "all_gather"}) {
            QTest::addRow("healthy, %s", ops) << QStringList(8) << ops << QJsonArray() << QJsonArray();
            QTest::addRow("link, %s", ops) << link << ops << QJsonArray() << QJsonArray({QJsonArray({2, 3})});
            QTest::addRow("GPU, %s", ops) << gpu << ops << QJsonArray({5}) << QJsonArray();
            QTest::addRow("both, %s", ops)
                << both << ops << QJsonArray({6}) << QJsonArray({QJsonArray({1, 2})});
        }
    }
    void namesThePlantedParts()
    {
        QFETCH(QStringList, planted);
        QFETCH(QString, ops);
        QFETCH(QJsonArray, gpus);
        QFETCH(QJsonArray, links);
        const QStringList args{"--targets", group(planted), "--ops", ops, "--reps", "2", "--json"};
        const bool healthy = gpus.isEmpty() && links.isEmpty();
        auto r = collective(args);
        QVERIFY2(r.exitCode == (healthy ? 0 : 1), r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value("faulty_gpus").toArray(), gpus);
        QCOMPARE(o.value("faulty_links").toArray(), links);
        // Through processes and in one process: the same hops, the same outcomes.
        auto local = collective(args + QStringList{"--in-process"});
        QCOMPARE(local.exitCode, r.exitCode);
        const QJsonObject l = QJsonDocument::fromJson(local.out).object();
        QCOMPARE(l.value("mode").toString(), QString("in-process"));
        QCOMPARE(decidedLinks(l.value("links").toArray()), decidedLinks(o.value("links").toArray()));
        QCOMPARE(l.value("runs").toArray(), o.value("runs").toArray());
    }

    void aRankThatHangsOrCrashesIsAnOutcome_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("status");
        QTest::newRow("hang") << "sim:hang:after=6"
                              << "hang";
        QTest::newRow("crash") << "sim:crash:after=6"
                               << "crash";
    }
    void aRankThatHangsOrCrashesIsAnOutcome()
    {
        QFETCH(QString, model);
        QFETCH(QString, status);
        QStringList planted(8);
        planted[4] = model;
        auto r = collective({"--targets", group(planted), "--ops", "all_gather", "--timeout", "2", "--json"});
        QVERIFY2(r.exitCode == 1, r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value("faulty_gpus").toArray(), QJsonArray({4}));
        bool seen = false;
        for (const auto& run : o.value("runs").toArray())
            if (run.toObject().value("status").toString() == status) {
                QCOMPARE(run.toObject().value("failed_rank").toInt(), 4);
                seen = true;
            }
        QVERIFY(seen);
    }

    void badSetupsExitTwo_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("one target") << QStringList{"--targets", "sim:healthy"} << "at least two targets";
        QTest::newRow("rank count") << QStringList{"--targets", group({}, 6)} << "but 6 targets";
        QTest::newRow("no collective")
            << QStringList{"--targets", group({}), "--ops", "2"} << "no collective op";
        QTest::newRow("ring not a number")
            << QStringList{"--targets", group({}), "--ring", "0,1,x"} << "'x' is not a rank index";
        QTest::newRow("ring repeats") << QStringList{"--targets", group({}), "--ring", "0,1,2,3,4,5,6,6"}
                                      << "not an order of the ranks";
        QTest::newRow("cuda and sim mixed")
            << QStringList{"--targets",
                           "cuda:0,cuda:1,sim:healthy,sim:healthy,sim:healthy,"
                           "sim:healthy,sim:healthy,sim:healthy"}
            << "does not mix them with sim ranks";
        QTest::newRow("nccl_algo unknown") << QStringList{"--targets", cudaGroup(":nccl_algo=Spiral")}
                                           << "nccl_algo=Spiral is not an NCCL algorithm";
        QTest::newRow("nccl_proto unknown") << QStringList{"--targets", cudaGroup(":nccl_proto=LL256")}
                                            << "nccl_proto=LL256 is not an NCCL protocol";
        QTest::newRow("channels out of range") << QStringList{"--targets", cudaGroup(":nccl_max_channels=65")}
                                               << "nccl_max_channels must be an integer";
        QTest::newRow("min channels above max")
            << QStringList{"--targets", cudaGroup(":nccl_min_channels=8,nccl_max_channels=4")}
            << "nccl_min_channels 8 exceeds nccl_max_channels 4";
        QTest::newRow("unknown cuda parameter")
            << QStringList{"--targets", cudaGroup(":algo=Ring")} << "unknown parameter algo";
        QTest::newRow("device twice") << QStringList{"--targets", cudaGroup("").replace("cuda:7", "cuda:0")}
                                      << "cuda:0 holds two ranks";
        QTest::newRow("ring with cuda")
            << QStringList{"--targets", cudaGroup(""), "--ring", "0,1,2,3,4,5,6,7"}
            << "--ring applies to sim:";
        QTest::newRow("in-process with cuda")
            << QStringList{"--targets", cudaGroup(""), "--in-process"} << "--in-process: cuda: ranks";
    }
    void badSetupsExitTwo()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        auto r = collective(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
    }

    // NCCL ranks need a driver: without one the command names the target and why, and gives no
    // verdict. With pinned NCCL settings too (they are valid, so the device is the problem).
    void cudaRanksWithoutADriverExitTwo_data()
    {
        QTest::addColumn<QString>("settings");
        QTest::newRow("plain") << QString();
        QTest::newRow("pinned") << QString(
            ":nccl_algo=ring,nccl_proto=Simple,nccl_min_channels=2,nccl_max_channels=4");
    }
    void cudaRanksWithoutADriverExitTwo()
    {
        QFETCH(QString, settings);
        if (QFile::exists("/dev/nvidiactl"))
            QSKIP(
                "this machine may have a usable CUDA driver: the NCCL ranks could start (tests/gpu covers "
                "them)");
        auto r = collective({"--targets", cudaGroup(settings), "--json"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.out.isEmpty(), r.out.constData());  // no report, no verdict
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains("target 'cuda:0"), r.err.constData());
        QVERIFY2(r.err.contains("no usable CUDA device") || r.err.contains("built without the CUDA target"),
                 r.err.constData());
    }

    void missingTraceNamesTheFile()
    {
        const QString missing = m_dir.filePath("missing.h5");
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), {"collective", missing, "--targets", group({})});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(missing.toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliCollective)
#include "test_cli_collective.moc"
