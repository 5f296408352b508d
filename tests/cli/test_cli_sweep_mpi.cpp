// `faultline sweep` over MPI: eight faultline-sweep-rank processes under mpirun, each rank one
// simulated GPU and the bytes going through MPI, name exactly the planted faulty GPU and link,
// and agree with the in-process sweep transfer by transfer.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include "support/TestSupport.h"

namespace {

QString group(const QStringList& planted)
{
    QStringList targets;
    for (int i = 0; i < 8; ++i)
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
    if (!p.waitForFinished(180000)) {
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

// The rounds without the measured fields.
QJsonArray decided(QJsonArray rounds)
{
    for (qsizetype i = 0; i < rounds.size(); ++i) {
        QJsonObject round = rounds[i].toObject();
        QJsonArray pairs = round.value("pairs").toArray();
        for (qsizetype k = 0; k < pairs.size(); ++k) {
            QJsonObject p = pairs[k].toObject();
            p.remove("gbps");
            p.remove("seconds");
            pairs[k] = p;
        }
        round["pairs"] = pairs;
        rounds[i] = round;
    }
    return rounds;
}

}  // namespace

class TestCliSweepMpi : public QObject {
    Q_OBJECT

private slots:
    void mpiRanksNameThePlantedParts_data()
    {
        QTest::addColumn<QStringList>("planted");
        QTest::addColumn<QJsonArray>("gpus");
        QTest::addColumn<QJsonArray>("links");
        QStringList none(8), link(8), gpu(8), both(8);
        link[1] = "sim:healthy:link_to=0,link_rate=0.01";
        gpu[6] = "sim:stuck-bit:bit=30";
        both[3] = "sim:flip:rate=0.01";
        both[5] = "sim:healthy:link_to=4,link_drop=0.5";
        QTest::newRow("healthy") << none << QJsonArray() << QJsonArray();
        QTest::newRow("faulty link") << link << QJsonArray() << QJsonArray({QJsonArray({1, 0})});
        QTest::newRow("faulty GPU") << gpu << QJsonArray({6}) << QJsonArray();
        QTest::newRow("both") << both << QJsonArray({3}) << QJsonArray({QJsonArray({5, 4})});
    }
    void mpiRanksNameThePlantedParts()
    {
        QFETCH(QStringList, planted);
        QFETCH(QJsonArray, gpus);
        QFETCH(QJsonArray, links);
        const QStringList sweep{"--targets", group(planted), "--bytes", "16384", "--reps", "3", "--json"};
        const Run mpi = run(QStringLiteral(FAULTLINE_MPIEXEC),
                            QStringList{"--oversubscribe", "-np", "8", FAULTLINE_SWEEP_RANK_EXE} + sweep);
        const bool healthy = gpus.isEmpty() && links.isEmpty();
        QVERIFY2(mpi.exitCode == (healthy ? 0 : 1), mpi.err.constData());
        QCOMPARE(mpi.json.value("faulty_gpus").toArray(), gpus);
        QCOMPARE(mpi.json.value("faulty_links").toArray(), links);
        QCOMPARE(mpi.json.value("targets").toArray().size(), 8);
        // The same transfers, the same outcomes, as all ranks in one process.
        const Run local = run(QStringLiteral(FAULTLINE_EXE), QStringList{"sweep"} + sweep);
        QCOMPARE(local.exitCode, healthy ? 0 : 1);
        QCOMPARE(decided(mpi.json.value("rounds").toArray()), decided(local.json.value("rounds").toArray()));
    }

    void oneTargetPerRank()
    {
        const Run r =
            run(QStringLiteral(FAULTLINE_MPIEXEC), {"--oversubscribe", "-np", "2", FAULTLINE_SWEEP_RANK_EXE,
                                                    "--targets", "sim:healthy,sim:healthy,sim:healthy"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("3 targets for 2 MPI ranks"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliSweepMpi)
#include "test_cli_sweep_mpi.moc"
