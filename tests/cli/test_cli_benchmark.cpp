// `faultline benchmark` through the real executable: exit 0 when the single-pattern signature
// accuracy meets the target, 2 on bad options (the message naming the option's value); the JSON
// scorecard's fields; the same seed gives the same scorecard and another seed another one; --out
// writes scorecard.json, scorecard.txt and (GUI builds) scorecard.png.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>
#include <set>

#include "support/TestSupport.h"

using faultline::test::runProcess;

namespace {

const QStringList kSmall = {"benchmark", "--sizes", "128x192", "--dtypes", "float32,bfloat16", "--quiet"};

}  // namespace

class TestCliBenchmark : public QObject {
    Q_OBJECT

private slots:
    void jsonScorecard()
    {
        auto a =
            runProcess(QStringLiteral(FAULTLINE_EXE), kSmall + QStringList{"--seed", "11", "--json"}, 300000);
        QVERIFY2(!a.crashed, a.err.constData());
        QCOMPARE(a.exitCode, 0);
        const nlohmann::json j = nlohmann::json::parse(a.out.toStdString());
        QCOMPARE(j["format"].get<std::string>(), std::string("faultline-benchmark"));
        QCOMPARE(j["seed"].get<uint64_t>(), uint64_t(11));
        QCOMPARE(j["tolerance"].get<std::string>(), std::string("ulp:2"));
        QVERIFY(j["target_met"].get<bool>());
        const double kind = j["accuracy"]["single_pattern"]["kind"].get<double>();
        QVERIFY2(kind >= j["target_accuracy"].get<double>(), qPrintable(QString::number(kind)));
        QVERIFY(j["accuracy"]["single_pattern"]["cases"].get<uint64_t>() > 50);
        QCOMPARE(j["confusion"]["kinds"].size(), size_t(13));
        QCOMPARE(j["confusion"]["truth_by_result"].size(), size_t(13));
        std::set<std::string> names;
        for (const auto& d : j["detectors"]) names.insert(d["name"].get<std::string>());
        for (const char* n : {"faultline_compare", "faultline_bisect", "gpu_burn", "rel_tolerance", "abft",
                              "nan_loss_monitor"})
            QVERIFY2(names.count(n), n);
        QVERIFY(j["false_alarms"]["clean_cases"].get<uint64_t>() > 0);
        QCOMPARE(j["false_alarms"]["flagged"]["faultline_compare"].get<uint64_t>(), uint64_t(0));
        QVERIFY(!j["detection"]["by_pattern"].empty());
        QVERIFY(!j["detection"]["by_bit"].empty());
        for (const auto& c : j["cases"]) {
            QVERIFY(c.contains("truth") && c["truth"].contains("what") && c["truth"].contains("where"));
            QVERIFY(c["result"].contains("kind"));
        }

        // Reproducible: the same seed, the same bytes; another seed, another scorecard.
        auto b =
            runProcess(QStringLiteral(FAULTLINE_EXE), kSmall + QStringList{"--seed", "11", "--json"}, 300000);
        QCOMPARE(b.exitCode, 0);
        QCOMPARE(b.out, a.out);
        auto c =
            runProcess(QStringLiteral(FAULTLINE_EXE), kSmall + QStringList{"--seed", "12", "--json"}, 300000);
        QCOMPARE(c.exitCode, 0);
        QVERIFY(c.out != a.out);
    }

    void outDirectory()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString out = dir.filePath("card");
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE),
                            QStringList{"benchmark", "--sizes", "128x192", "--dtypes", "float16", "--quiet",
                                        "--seed", "3", "--out", out},
                            300000);
        QVERIFY2(!r.crashed, r.err.constData());
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("signature accuracy"), r.out.constData());
        QFile json(out + "/scorecard.json"), text(out + "/scorecard.txt");
        QVERIFY(json.open(QIODevice::ReadOnly) && text.open(QIODevice::ReadOnly));
        QCOMPARE(nlohmann::json::parse(json.readAll().toStdString())["seed"].get<uint64_t>(), uint64_t(3));
        QCOMPARE(text.readAll(), r.out);
#if FAULTLINE_HAVE_GUI
        QFile png(out + "/scorecard.png");
        QVERIFY(png.open(QIODevice::ReadOnly));
        QCOMPARE(png.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
#endif
    }

    void badOptions_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("stderrContains");
        QTest::newRow("small size") << QStringList{"--sizes", "10x10"} << "10x10";
        QTest::newRow("not a size") << QStringList{"--sizes", "big"} << "'big' is not ROWSxCOLS";
        QTest::newRow("integer dtype") << QStringList{"--dtypes", "int8"} << "int8";
        QTest::newRow("unknown dtype") << QStringList{"--dtypes", "float7"} << "float7";
        QTest::newRow("bad tolerance") << QStringList{"--tolerance", "ulp:x"} << "ulp:x";
        QTest::newRow("out is a file")
            << QStringList{"--out", QStringLiteral(FAULTLINE_EXE)} << "is not a directory";
    }
    void badOptions()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, stderrContains);
        auto r = runProcess(QStringLiteral(FAULTLINE_EXE), QStringList{"benchmark", "--quiet"} + args);
        QVERIFY2(!r.crashed, r.err.constData());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(QString::fromUtf8(r.err).contains(stderrContains), r.err.constData());
    }
};

QTEST_MAIN(TestCliBenchmark)
#include "test_cli_benchmark.moc"
