// StoppingRule's parsers and words, shared by `replay --until-rate` and the replay panel: a rate
// as a number or a percentage, a duration with its unit, bad text named in the error; what ended
// an op's runs on a target, in the one wording the CLI, the panel and a results file's tables show.
#include <QtTest>

#include "core/replay/CampaignSummary.h"
#include "core/replay/Statistics.h"
#include "core/replay/StoppingRule.h"

using namespace faultline;

class TestStoppingRule : public QObject {
    Q_OBJECT

private slots:
    void parsesRates_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("rate");
        QTest::newRow("exponent") << "1e-3" << 1e-3;
        QTest::newRow("plain") << "0.001" << 1e-3;
        QTest::newRow("percent") << "0.1%" << 1e-3;
        QTest::newRow("blanks") << "  2.5e-4 " << 2.5e-4;
        QTest::newRow("zero (checkStoppingRule refuses it)") << "0" << 0.0;
    }

    void parsesRates()
    {
        QFETCH(QString, text);
        QFETCH(double, rate);
        auto parsed = parseRate(text.toStdString());
        QVERIFY2(parsed, parsed ? "" : parsed.message().c_str());
        QCOMPARE(*parsed, rate);
    }

    void refusesWhatIsNotARate_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("empty") << "";
        QTest::newRow("word") << "often";
        QTest::newRow("trailing text") << "1e-3x";
        QTest::newRow("percent alone") << "%";
        QTest::newRow("not finite") << "inf";
    }

    void refusesWhatIsNotARate()
    {
        QFETCH(QString, text);
        auto parsed = parseRate(text.toStdString());
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().code, ErrorCode::Usage);
        QVERIFY2(parsed.message().find("'" + text.toStdString() + "'") != std::string::npos,
                 parsed.message().c_str());
    }

    void aParsedRateIsRangeChecked()
    {
        StoppingRule rule;
        rule.untilRate = *parseRate("60%");
        QVERIFY(!checkStoppingRule(rule));
        rule.untilRate = *parseRate("1e-3");
        QVERIFY(checkStoppingRule(rule));
    }

    void saysWhatStoppedTheRuns()
    {
        StoppingRule rule;
        rule.untilRate = 1e-3;
        const uint64_t n = runsToRuleOut(rule.untilRate, rule.confidence);
        const std::string rate = stoppedByText(StoppedBy::Rate, n, 0, rule);
        QCOMPARE(rate, cleanRateText(n, 0.95) + " (stopped by rate: rate < 1e-3 at 95% reached)");
        QVERIFY2(rate.starts_with("no failure in " + std::to_string(n) + " runs: rate < "), rate.c_str());
        QCOMPARE(stoppedByText(StoppedBy::Failure, 7, 1, rule),
                 std::string("stopped by a failure after 7 run(s) (1 failed)"));
        const std::string budget = stoppedByText(StoppedBy::Budget, 40, 0, rule);
        QCOMPARE(budget,
                 cleanRateText(40, 0.95) + " (stopped by budget: budget spent before rate < 1e-3 at 95%)");
        QCOMPARE(stoppedByText(StoppedBy::Cancelled, 0, 0, rule),
                 std::string("no run (stopped by cancelled: cancelled before rate < 1e-3 at 95%)"));
    }
};

QTEST_GUILESS_MAIN(TestStoppingRule)
#include "test_stopping_rule.moc"
