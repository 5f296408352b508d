// `faultline sweep` through the built executable: exit 0 on a healthy group, 1 naming the
// planted faulty GPU and link, 2 for a bad setup; the public JSON fields; the --out file.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "support/TestSupport.h"

using faultline::test::runProcess;

namespace {

faultline::test::ProcessResult sweepRun(const QStringList& args)
{
    return runProcess(QStringLiteral(FAULTLINE_EXE), QStringList{"sweep"} + args, 120000);
}

QString group(const QStringList& planted)
{
    QStringList targets;
    for (int i = 0; i < 8; ++i)
        targets << (planted.value(i).isEmpty() ? QStringLiteral("sim:healthy") : planted[i]);
    return targets.join(',');
}

}  // namespace

class TestCliSweep : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void healthyGroupExitsZero()
    {
        auto r = sweepRun({"--targets", group({}), "--bytes", "16384", "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value("faulty_gpus").toArray().size(), 0);
        QCOMPARE(o.value("faulty_links").toArray().size(), 0);
        QCOMPARE(o.value("targets").toArray().size(), 8);
        QCOMPARE(o.value("rounds").toArray().size(), 1);
    }

    void namesThePlantedParts()
    {
        QStringList planted(8);
        planted[3] = "sim:flip:rate=0.01";
        planted[5] = "sim:healthy:link_to=4,link_rate=0.01";
        const QString out = m_dir.filePath("sweep.h5");
        auto r = sweepRun({"--targets", group(planted), "--bytes", "16384", "--json", "--out", out});
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value("faulty_gpus").toArray(), QJsonArray({3}));
        QCOMPARE(o.value("faulty_links").toArray(), QJsonArray({QJsonArray({5, 4})}));
        const QJsonObject pair =
            o.value("rounds").toArray().at(0).toObject().value("pairs").toArray().at(0).toObject();
        for (const char* key : {"a", "b", "direction", "pass", "corrupted_bytes", "signature", "gbps"})
            QVERIFY2(pair.contains(key), key);
        // The result file holds the same document.
        auto inspect = runProcess(QStringLiteral(FAULTLINE_EXE), {"inspect", out}, 60000);
        QCOMPARE(inspect.exitCode, 0);
        QVERIFY2(inspect.out.contains("faultline_format = sweep"), inspect.out.constData());
        // ... and the failing link's first failing block, both sides; the passing way stores none.
        QVERIFY2(inspect.out.contains("links/5-4/expected") && inspect.out.contains("links/5-4/received"),
                 inspect.out.constData());
        QVERIFY2(!inspect.out.contains("links/4-5/"), inspect.out.constData());
        // Text: the faulty parts in words.
        auto text = sweepRun({"--targets", group(planted), "--bytes", "16384"});
        QCOMPARE(text.exitCode, 1);
        QVERIFY2(text.out.contains("faulty GPU 3") && text.out.contains("faulty link 5 -> 4"),
                 text.out.constData());
    }

    void badSetupsAreExitTwo_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("one target") << QStringList{"--targets", "sim:healthy"} << "at least two";
        QTest::newRow("bytes") << QStringList{"--targets", "sim:healthy,sim:healthy", "--bytes", "6"}
                               << "--bytes";
        QTest::newRow("pattern") << QStringList{"--targets", "sim:healthy,sim:healthy", "--pattern", "ring"}
                                 << "--pattern ring";
        QTest::newRow("unknown model") << QStringList{"--targets", "sim:healthy,sim:melt"} << "melt";
    }
    void badSetupsAreExitTwo()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, phrase);
        auto r = sweepRun(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.out.isEmpty(), r.out.constData());
        QVERIFY2(r.err.contains(phrase.toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliSweep)
#include "test_cli_sweep.moc"
