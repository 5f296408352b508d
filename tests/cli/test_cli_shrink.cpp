// `faultline shrink`: minimal reproducers of simulated defects whose trigger conditions the
// command is not told (only the target's spec knows them): a k range, one SM's tiles, a
// magnitude band, each firing in half the runs. The result holds at most 1/16 of the original's
// elements, fails at a rate inside the original's interval, and `replay` runs it.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "TriggerTrace.h"
#include "core/replay/TensorLoad.h"
#include "support/TestSupport.h"

using faultline::test::jsonObject;
using faultline::test::makeTriggerTrace;
using faultline::test::runFaultline;

namespace {

// The shapes of the minimal trace's one op's inputs, and its largest |x|.
struct MinimalOp {
    size_t index = 0;
    std::vector<std::vector<uint64_t>> shapes;
    double maxAbs = 0;
    QString error;
};

MinimalOp readMinimal(const QString& path)
{
    MinimalOp m;
    auto trace = faultline::readTrace(path.toStdString());
    if (!trace) {
        m.error = QString::fromStdString(trace.message());
        return m;
    }
    if (trace->ops.size() != 1) {
        m.error = QString("%1 ops in the minimal trace").arg(trace->ops.size());
        return m;
    }
    m.index = trace->ops[0].index;
    auto inputs = faultline::loadOpInputs(*trace, trace->ops[0]);
    if (!inputs) {
        m.error = QString::fromStdString(inputs.message());
        return m;
    }
    for (const faultline::HostTensor& t : *inputs) {
        m.shapes.push_back(t.shape);
        for (uint64_t i = 0; i < t.elementCount(); ++i)
            m.maxAbs = std::max(m.maxAbs, double(std::fabs(t.as<float>()[i])));
    }
    return m;
}

}  // namespace

class TestCliShrink : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

    // Shrinks op `op` on `target` into a new file; checks what every minimal reproducer must
    // hold and returns the JSON report.
    QJsonObject shrink(const QString& op, const QString& target, const QString& out)
    {
        auto r = runFaultline({"shrink", m_trace, "--op", op, "--target", target, "--out", out, "--json"});
        if (r.crashed || r.timedOut || r.exitCode != 0) {
            qWarning("shrink exit %d: %s", r.exitCode, r.err.constData());
            return {};
        }
        return jsonObject(r.out);
    }

    static void checkReproduces(const QJsonObject& o)
    {
        const QJsonObject original = o.value("original").toObject(), minimal = o.value("minimal").toObject();
        QVERIFY(o.value("reproduced").toBool());
        // The original failed in some runs, not all: the interval is a real one.
        const double low = original.value("ci").toArray().at(0).toDouble();
        const double high = original.value("ci").toArray().at(1).toDouble();
        QVERIFY2(low > 0.1 && high < 0.95, qPrintable(QString("original ci [%1, %2]").arg(low).arg(high)));
        const double rate = minimal.value("rate").toDouble();
        QVERIFY2(rate >= low && rate <= high,
                 qPrintable(QString("minimal rate %1 outside [%2, %3]").arg(rate).arg(low).arg(high)));
        QVERIFY(o.value("minimal_reproduces").toBool());
        QVERIFY(minimal.value("runs").toInteger() >= original.value("runs").toInteger());
        // At most 1/16 of the original's elements.
        const qint64 before = original.value("elements").toInteger(),
                     after = minimal.value("elements").toInteger();
        QVERIFY2(after * 16 <= before, qPrintable(QString("%1 of %2 elements").arg(after).arg(before)));
        QCOMPARE(o.value("element_ratio").toDouble(), double(after) / double(before));
        QVERIFY(o.value("time_ratio").toDouble() > 0);
        QVERIFY(!o.value("steps").toArray().isEmpty());
    }

private slots:
    void initTestCase()
    {
        m_trace = m_dir.filePath("trace.h5");
        QVERIFY(makeTriggerTrace(m_trace).isEmpty());
    }

    void kRange()
    {
        // Fires only for k >= 300 (the trace's k is 512).
        const QString target = "sim:flip:rate=1,inner_lo=300,run_rate=0.5";
        const QString out = m_dir.filePath("min-k.h5");
        const QJsonObject o = shrink("0", target, out);
        QVERIFY(!o.isEmpty());
        checkReproduces(o);
        const MinimalOp m = readMinimal(out);
        QVERIFY2(m.error.isEmpty(), qPrintable(m.error));
        QCOMPARE(m.index, size_t(0));
        QCOMPARE(m.shapes.size(), size_t(2));
        const uint64_t k = m.shapes[0][1];
        QVERIFY2(k >= 300 && k < 512, qPrintable(QString("k %1").arg(k)));
        QCOMPARE(m.shapes[1][0], k);
        QCOMPARE(m.shapes[0][0], uint64_t(1));  // one row and one column are enough
        QCOMPARE(m.shapes[1][1], uint64_t(1));
        // `replay` runs it, and it fails there too.
        auto r = runFaultline({"replay", out, "--targets", target, "--reps", "40", "--quiet", "--json"});
        QCOMPARE(r.exitCode, 1);
        const QJsonObject t = jsonObject(r.out).value("targets").toArray().at(0).toObject();
        QVERIFY(t.value("failures").toInteger() > 0);
        QVERIFY(t.value("failures").toInteger() < 40);
    }

    void oneSm()
    {
        // Fires only in the tiles of virtual SM 3 of 8 (8x8 tiles; the output is 64x64).
        const QString target = "sim:flip:rate=1,only_sm=3,sms=8,tile=8,run_rate=0.5";
        const QString out = m_dir.filePath("min-sm.h5");
        const QJsonObject o = shrink("1", target, out);
        QVERIFY(!o.isEmpty());
        checkReproduces(o);
        const MinimalOp m = readMinimal(out);
        QVERIFY2(m.error.isEmpty(), qPrintable(m.error));
        // The output [rows, cols] must still hold a tile of SM 3: tile 3 in row-major order.
        const uint64_t rows = m.shapes[0][0], cols = m.shapes[1][1];
        const uint64_t tileCols = (cols + 7) / 8, tiles = tileCols * ((rows + 7) / 8);
        QVERIFY2(tiles > 3, qPrintable(QString("output %1x%2 has no tile of SM 3").arg(rows).arg(cols)));
        QCOMPARE(m.shapes[0][1], uint64_t(1));  // k = 1 is enough
    }

    void magnitudeBand()
    {
        // Fires only when the largest |input| is in [16, 64): op 2's A holds one 40.
        const QString target = "sim:flip:rate=1,mag_lo=16,mag_hi=64,run_rate=0.5";
        const QString out = m_dir.filePath("min-mag.h5");
        const QJsonObject o = shrink("2", target, out);
        QVERIFY(!o.isEmpty());
        checkReproduces(o);
        const MinimalOp m = readMinimal(out);
        QVERIFY2(m.error.isEmpty(), qPrintable(m.error));
        QVERIFY2(m.maxAbs >= 16 && m.maxAbs < 64, qPrintable(QString("max |x| %1").arg(m.maxAbs)));
        // An element-wise op shrinks by its rows and columns the same way.
        const QString outAdd = m_dir.filePath("min-add.h5");
        const QJsonObject add = shrink("3", target, outAdd);
        QVERIFY(!add.isEmpty());
        checkReproduces(add);
        const MinimalOp a = readMinimal(outAdd);
        QVERIFY2(a.error.isEmpty(), qPrintable(a.error));
        QCOMPARE(a.shapes[0], a.shapes[1]);
        QVERIFY(a.maxAbs >= 16);
    }

    void text()
    {
        const QString out = m_dir.filePath("min-text.h5");
        auto r = runFaultline({"shrink", m_trace, "--op", "2", "--target",
                               "sim:flip:rate=1,mag_lo=16,run_rate=0.5", "--out", out});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("original: 2688 elements") &&
                     r.out.contains("inside the original interval") &&
                     r.out.contains("written: " + out.toUtf8()),
                 r.out.constData());
    }

    void neverFails()
    {
        // A healthy target: nothing to shrink; the report says what its runs rule out, nothing is written.
        const QString out = m_dir.filePath("min-healthy.h5");
        auto r = runFaultline({"shrink", m_trace, "--op", "3", "--target", "sim:healthy", "--out", out,
                               "--max-runs", "300", "--json"});
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = jsonObject(r.out);
        QVERIFY(!o.value("reproduced").toBool());
        QCOMPARE(o.value("original").toObject().value("runs").toInt(), 300);
        QVERIFY(o.value("rules_out").toObject().value("rate_below").toDouble() < 0.01);
        QVERIFY(!QFile::exists(out));
        r = runFaultline(
            {"shrink", m_trace, "--op", "3", "--target", "sim:healthy", "--out", out, "--max-runs", "300"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.out.contains("never failed: no failure in 300 runs"), r.out.constData());
    }

    void errors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("no such op") << QStringList{"--op", "9", "--target", "sim:flip"} << "has no op 9";
        QTest::newRow("unknown target") << QStringList{"--op", "1", "--target", "gpu:3"} << "gpu:3";
        QTest::newRow("unknown model") << QStringList{"--op", "1", "--target", "sim:nosuch"} << "nosuch";
        QTest::newRow("two targets") << QStringList{"--op", "1", "--target", "cpu,sim:flip"} << "one target";
        QTest::newRow("bad trigger") << QStringList{"--op", "1", "--target", "sim:flip:run_rate=2"}
                                     << "run_rate";
        QTest::newRow("budget") << QStringList{"--op", "1", "--target", "sim:flip", "--budget", "soon"}
                                << "--budget";
        QTest::newRow("confidence") << QStringList{"--op", "1", "--target", "sim:flip", "--confidence", "2"}
                                    << "--confidence";
    }
    void errors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, phrase);
        const QString out = m_dir.filePath("never.h5");
        auto r = runFaultline(QStringList{"shrink", m_trace, "--out", out} + args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(phrase.toUtf8()), r.err.constData());
        QVERIFY(!QFile::exists(out));
    }

    void fileErrors()
    {
        // A trace that is not there, and an output that exists, are named.
        const QString missing = m_dir.filePath("missing.h5");
        auto r = runFaultline(
            {"shrink", missing, "--op", "0", "--target", "sim:flip", "--out", m_dir.filePath("x.h5")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(missing.toUtf8()), r.err.constData());
        r = runFaultline({"shrink", m_trace, "--op", "0", "--target", "sim:flip", "--out", m_trace});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(m_trace.toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliShrink)
#include "test_cli_shrink.moc"
