// Where fleet tasks stand (core/fleet/FleetStatus.h): the scheduler's states parsed from squeue
// and sacct, and combined with what the tasks left in DIR/results; a task nobody knows of is
// failed, never dropped.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "core/fleet/FleetStatus.h"

using namespace faultline;

namespace {

void writeFile(const QString& path, const QByteArray& text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

}  // namespace

class TestFleetStatus : public QObject {
    Q_OBJECT

private slots:
    void schedulerStatesParse()
    {
        const auto q = parseSchedulerStates("12_0 RUNNING\n12_3 PENDING\n  \n12 PENDING\n12_x RUNNING\n");
        QCOMPARE(q.size(), size_t(2));
        QCOMPARE(q.at(0), std::string("RUNNING"));
        QCOMPARE(q.at(3), std::string("PENDING"));
        const auto a = parseSchedulerStates("12_1|TIMEOUT\n12_2|CANCELLED by 0\n");
        QCOMPARE(a.at(1), std::string("TIMEOUT"));
        QCOMPARE(a.at(2), std::string("CANCELLED"));
    }

    void resultsAndQueueCombine()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("results"));
        const QString r = dir.filePath("results/");
        writeFile(r + "0.h5", "x");
        writeFile(r + "0.exit", "1\n");
        writeFile(r + "1.exit", "2\n");
        const std::map<uint32_t, std::string> queue = {{2, "RUNNING"}, {3, "PENDING"}};
        const std::map<uint32_t, std::string> accounting = {{4, "TIMEOUT"}};
        FleetStatus s = fleetStatus(dir.path().toStdString(), 6, &queue, &accounting);
        QCOMPARE(s.list[0].state, std::string("done"));
        QCOMPARE(s.list[0].detail, std::string("a target diverged"));
        QCOMPARE(s.list[1].state, std::string("failed"));
        QVERIFY(s.list[1].detail.find("exited 2 without a results file") != std::string::npos);
        QCOMPARE(s.list[2].state, std::string("running"));
        QCOMPARE(s.list[3].state, std::string("pending"));
        QCOMPARE(s.list[4].state, std::string("failed"));
        QVERIFY(s.list[4].detail.find("TIMEOUT") != std::string::npos);
        QCOMPARE(s.list[5].state, std::string("failed"));  // neither queued nor finished: lost
        QVERIFY(!s.complete());
        const nlohmann::json j = s.toJson();
        QCOMPARE(j["done"].get<int>(), 1);
        QCOMPARE(j["failed"].get<int>(), 3);
        QCOMPARE(j["source"].get<std::string>(), std::string("squeue+sacct"));
        // Without a scheduler to ask, a task without results is unknown, not failed.
        s = fleetStatus(dir.path().toStdString(), 6, nullptr, nullptr);
        QCOMPARE(s.list[2].state, std::string("unknown"));
        QCOMPARE(s.list[1].state, std::string("failed"));
        QCOMPARE(s.source, std::string("results"));
    }

    void manifestRoundTrip()
    {
        QTemporaryDir dir;
        FleetManifest m;
        m.scheduler = "slurm";
        m.tasks = 4;
        m.trace = "/t.h5";
        m.jobIds = {"17"};
        QVERIFY(writeFleetManifest(dir.path().toStdString(), m).ok());
        auto back = readFleetManifest(dir.path().toStdString());
        QVERIFY(back.ok());
        QCOMPARE(back->tasks, 4u);
        QCOMPARE(back->jobIds, std::vector<std::string>{"17"});
        auto missing = readFleetManifest(dir.filePath("nope").toStdString());
        QVERIFY(!missing.ok());
        QVERIFY(missing.message().find("fleet.json") != std::string::npos);
    }

    // fleet.json's fields are checked with their ranges: its task count drives loops over the
    // tasks (-1 read as 4,294,967,295 once), its job ids go to squeue and sacct.
    void manifestFieldsAreChecked_data()
    {
        QTest::addColumn<QByteArray>("fields");
        QTest::addColumn<QString>("named");
        QTest::newRow("tasks -1") << QByteArray("\"tasks\":-1") << "\"tasks\"";
        QTest::newRow("tasks 1e12") << QByteArray("\"tasks\":1000000000000") << "\"tasks\"";
        QTest::newRow("tasks 0") << QByteArray("\"tasks\":0") << "\"tasks\"";
        QTest::newRow("tasks 100001") << QByteArray("\"tasks\":100001") << "\"tasks\"";
        QTest::newRow("tasks 2.5") << QByteArray("\"tasks\":2.5") << "\"tasks\"";
        QTest::newRow("tasks text") << QByteArray("\"tasks\":\"4\"") << "\"tasks\"";
        QTest::newRow("tasks missing") << QByteArray("\"trace\":\"/t.h5\"") << "\"tasks\"";
        QTest::newRow("job id with options")
            << QByteArray("\"tasks\":2,\"job_ids\":[\"17 -u root\"]") << "\"job_ids\"";
        QTest::newRow("job id a number") << QByteArray("\"tasks\":2,\"job_ids\":[17]") << "\"job_ids\"";
        QTest::newRow("scheduler") << QByteArray("\"tasks\":2,\"scheduler\":\"pbs\"") << "\"scheduler\"";
        QTest::newRow("trace not text") << QByteArray("\"tasks\":2,\"trace\":7") << "\"trace\"";
        QTest::newRow("version 2") << QByteArray("\"tasks\":2,\"faultline_version\":2")
                                   << "faultline_version";
        QTest::newRow("format a number") << QByteArray("\"tasks\":2,\"faultline_format\":1") << "fleet job";
    }

    void manifestFieldsAreChecked()
    {
        QFETCH(QByteArray, fields);
        QFETCH(QString, named);
        QTemporaryDir dir;
        QFile f(dir.filePath("fleet.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        // Later keys win: the row's fields replace the defaults.
        QByteArray text =
            "{\"faultline_format\":\"fleet-job\",\"faultline_version\":1,\"scheduler\":\"slurm\"," + fields +
            "}";
        if (fields.contains("faultline_format") || fields.contains("faultline_version") ||
            fields.contains("scheduler"))
            text = "{" + fields +
                   (fields.contains("faultline_format") ? "" : ",\"faultline_format\":\"fleet-job\"") +
                   (fields.contains("scheduler") ? "" : ",\"scheduler\":\"slurm\"") + "}";
        f.write(text);
        f.close();
        const auto m = readFleetManifest(dir.path().toStdString());
        QVERIFY2(!m.ok(), text.constData());
        QVERIFY2(m.message().find("fleet.json") != std::string::npos, m.message().c_str());
        QVERIFY2(m.message().find(named.toStdString()) != std::string::npos, m.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestFleetStatus)
#include "test_fleet_status.moc"
