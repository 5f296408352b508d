// A campaign's memory is bounded by its ops and targets, not by its number of runs: ten times the
// repetitions may not take more memory than a small constant, and the report still counts every
// run while listing a bounded number of them.
#include <sys/resource.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "ReplayTrace.h"
#include "support/TestSupport.h"

using faultline::test::makeReplayTrace;
using faultline::test::runProcess;

namespace {

// The largest resident set of any child waited for so far, in KiB (Linux: ru_maxrss is in KiB
// and covers the children's waited-for descendants: the workers).
long childrenPeakKiB()
{
    struct rusage usage {};
    getrusage(RUSAGE_CHILDREN, &usage);
    return usage.ru_maxrss;
}

QJsonObject replayJson(const QString& trace, int reps)
{
    qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
    const auto r = runProcess(
        QStringLiteral(FAULTLINE_EXE),
        {"replay", trace, "--targets", "cpu", "--ops", "2", "--reps", QString::number(reps), "--json"},
        300000);
    if (r.exitCode != 0) qWarning("replay exit %d: %s", r.exitCode, r.err.constData());
    return QJsonDocument::fromJson(r.out).object();
}

}  // namespace

class TestCliReplayScale : public QObject {
    Q_OBJECT

private slots:
    void memoryDoesNotGrowWithRuns()
    {
        QTemporaryDir dir;
        const QString trace = dir.filePath("t.h5");
        QCOMPARE(makeReplayTrace(trace), QString());

        // The small campaign first: the peak after it is its own; after the large one it is the
        // larger of the two.
        const int small = 12000, large = 120000;
        const QJsonObject a = replayJson(trace, small);
        QCOMPARE(a.value("runs_total").toInteger(), small);
        const long smallPeak = childrenPeakKiB();
        const QJsonObject b = replayJson(trace, large);
        const long largePeak = childrenPeakKiB();
        QCOMPARE(b.value("runs_total").toInteger(), large);
        const QJsonObject target = b.value("targets").toArray().at(0).toObject();
        QCOMPARE(target.value("runs").toInteger(), large);
        QCOMPARE(target.value("verdict").toString(), QStringLiteral("healthy"));
        const qint64 listed = b.value("runs_listed").toInteger();
        QCOMPARE(qint64(b.value("runs").toArray().size()), listed);
        QVERIFY2(listed < 100, qPrintable(QString::number(listed)));
        // Holding every run took about 2 KiB each: 108,000 more would be over 200 MiB.
        qInfo("peak RSS: %ld KiB for %d runs, %ld KiB for %d runs", smallPeak, small, largePeak, large);
        QVERIFY2(largePeak < smallPeak + 32 * 1024,
                 qPrintable(QStringLiteral("%1 KiB after %2 runs, %3 KiB after %4")
                                .arg(smallPeak)
                                .arg(small)
                                .arg(largePeak)
                                .arg(large)));
    }
};

QTEST_GUILESS_MAIN(TestCliReplayScale)
#include "test_cli_replay_scale.moc"
