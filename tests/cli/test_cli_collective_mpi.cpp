// `faultline collective` over MPI: faultline-collective-rank under mpirun, eight processes of one
// simulated rank each and two processes of four ranks each (two nodes), the chunks between
// processes going through MPI. Exactly the planted faulty GPU and link are named, and the result
// equals the in-process replay hop by hop and run by run.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "support/CollectiveReplayTrace.h"
#include "support/TestSupport.h"

namespace {

QString group(const QStringList& planted, int n = 8)
{
    QStringList targets;
    for (int i = 0; i < n; ++i)
        targets << (planted.value(i).isEmpty() ? QStringLiteral("sim:healthy") : planted[i]);
    return targets.join(',');
}

struct Run {
    int exitCode = -1;
    QJsonObject json;
    QByteArray err;
};

Run run(const QString& program, const QStringList& args)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // CI runs as root; Open MPI refuses that unless told it is meant.
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    p.setProcessEnvironment(env);
    p.start(program, args);
    Run r;
    if (!p.waitForFinished(300000)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.exitCode = p.exitCode();
    r.json = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    r.err = p.readAllStandardError();
    return r;
}

QJsonArray decidedLinks(QJsonArray links)
{
    for (qsizetype i = 0; i < links.size(); ++i) {
        QJsonObject l = links[i].toObject();
        l.remove("gbps");
        links[i] = l;
    }
    return links;
}

}  // namespace

class TestCliCollectiveMpi : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace8, m_trace2;

    void compareWithInProcess(const Run& mpi, const QString& trace, const QStringList& args)
    {
        const Run local =
            run(QStringLiteral(FAULTLINE_EXE), QStringList{"collective", trace, "--in-process"} + args);
        QCOMPARE(mpi.exitCode, local.exitCode);
        QCOMPARE(mpi.json.value("mode").toString(), QString("mpi"));
        QCOMPARE(mpi.json.value("faulty_gpus").toArray(), local.json.value("faulty_gpus").toArray());
        QCOMPARE(mpi.json.value("faulty_links").toArray(), local.json.value("faulty_links").toArray());
        QCOMPARE(mpi.json.value("runs").toArray(), local.json.value("runs").toArray());
        QCOMPARE(decidedLinks(mpi.json.value("links").toArray()),
                 decidedLinks(local.json.value("links").toArray()));
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace8 = m_dir.filePath("eight.h5");
        m_trace2 = m_dir.filePath("two.h5");
        QCOMPARE(QString::fromStdString(faultline::test::writeCollectiveTrace(m_trace8.toStdString(), 8)),
                 QString());
        QCOMPARE(QString::fromStdString(faultline::test::writeCollectiveTrace(m_trace2.toStdString(), 2)),
                 QString());
    }

    void mpiRanksNameThePlantedParts_data()
    {
        QTest::addColumn<QStringList>("planted");
        QTest::addColumn<QString>("processes");
        QTest::addColumn<QJsonArray>("gpus");
        QTest::addColumn<QJsonArray>("links");
        QStringList none(8), link(8), gpu(8), both(8);
        link[2] = "sim:healthy:link_to=3,link_rate=0.01";
        gpu[5] = "sim:flip:rate=0.01";
        both[6] = "sim:stuck-bit:bit=30";
        both[1] = "sim:healthy:link_to=2,link_drop=0.5";
        for (const char* np : {"8", "2"}) {
            QTest::addRow("healthy, %s processes", np) << none << np << QJsonArray() << QJsonArray();
            QTest::addRow("faulty link, %s processes", np)
                << link << np << QJsonArray() << QJsonArray({QJsonArray({2, 3})});
            QTest::addRow("faulty GPU, %s processes", np) << gpu << np << QJsonArray({5}) << QJsonArray();
            QTest::addRow("both, %s processes", np)
                << both << np << QJsonArray({6}) << QJsonArray({QJsonArray({1, 2})});
        }
    }
    void mpiRanksNameThePlantedParts()
    {
        QFETCH(QStringList, planted);
        QFETCH(QString, processes);
        QFETCH(QJsonArray, gpus);
        QFETCH(QJsonArray, links);
        const QStringList args{"--targets", group(planted), "--ops", "all_reduce,all_gather", "--json"};
        const Run mpi = run(
            QStringLiteral(FAULTLINE_MPIEXEC),
            QStringList{"--oversubscribe", "-np", processes, FAULTLINE_COLLECTIVE_RANK_EXE, m_trace8} + args);
        const bool healthy = gpus.isEmpty() && links.isEmpty();
        QVERIFY2(mpi.exitCode == (healthy ? 0 : 1), mpi.err.constData());
        QCOMPARE(mpi.json.value("faulty_gpus").toArray(), gpus);
        QCOMPARE(mpi.json.value("faulty_links").toArray(), links);
        compareWithInProcess(mpi, m_trace8, args);
    }

    void twoProcessesOfOneRankEach()
    {
        // Two ranks, one per process: the link 0->1 is the only one that fails.
        const QStringList args{"--targets", "sim:healthy:link_to=1,link_bit=2,sim:healthy", "--json"};
        const Run mpi =
            run(QStringLiteral(FAULTLINE_MPIEXEC),
                QStringList{"--oversubscribe", "-np", "2", FAULTLINE_COLLECTIVE_RANK_EXE, m_trace2} + args);
        QVERIFY2(mpi.exitCode == 1, mpi.err.constData());
        QCOMPARE(mpi.json.value("faulty_links").toArray(), QJsonArray({QJsonArray({0, 1})}));
        QCOMPARE(mpi.json.value("faulty_gpus").toArray(), QJsonArray());
        compareWithInProcess(mpi, m_trace2, args);
    }

    void processCountMustDivideTheRanks()
    {
        const Run r = run(
            QStringLiteral(FAULTLINE_MPIEXEC),
            {"--oversubscribe", "-np", "3", FAULTLINE_COLLECTIVE_RANK_EXE, m_trace8, "--targets", group({})});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("8 ranks on 3 MPI processes"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliCollectiveMpi)
#include "test_cli_collective_mpi.moc"
