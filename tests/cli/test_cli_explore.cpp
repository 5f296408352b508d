// `faultline explore`: simulated defects whose trigger conditions the command is not told (only
// the target's spec knows them) are explored around the recorded inputs: it names the magnitude
// band, the k range, the dtype and the SM under which each fired, and where it never did.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "TriggerTrace.h"
#include "support/TestSupport.h"

using faultline::test::jsonObject;
using faultline::test::makeTriggerTrace;
using faultline::test::runFaultline;

class TestCliExplore : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

    QJsonObject explore(const QString& op, const QString& target, const QString& vary, int expectedExit = 1)
    {
        auto r = runFaultline(
            {"explore", m_trace, "--op", op, "--targets", target, "--vary", vary, "--runs", "30", "--json"});
        if (r.exitCode != expectedExit) {
            qWarning("explore exit %d: %s", r.exitCode, r.err.constData());
            return {};
        }
        return jsonObject(r.out);
    }

    // For every condition of `vary`: whether it fired on the (one) target.
    static QMap<int, bool> firedByCondition(const QJsonObject& o)
    {
        QMap<int, bool> fired;
        for (const auto& v : o.value("cells").toArray()) {
            const QJsonObject c = v.toObject();
            fired[c.value("condition").toInt()] = c.value("failures").toInt() > 0;
        }
        return fired;
    }

    static QJsonObject finding(const QJsonObject& o, const QString& axis)
    {
        for (const auto& v : o.value("findings").toArray())
            if (v.toObject().value("axis").toString() == axis) return v.toObject();
        return {};
    }

private slots:
    void initTestCase()
    {
        m_trace = m_dir.filePath("trace.h5");
        QVERIFY(makeTriggerTrace(m_trace).isEmpty());
    }

    void namesTheMagnitudeBand()
    {
        // Fires only when the largest |input| is in [16, 64); op 2's largest is 40.
        const QJsonObject o = explore("2", "sim:flip:rate=1,mag_lo=16,mag_hi=64,run_rate=0.5", "scale");
        QVERIFY(!o.isEmpty());
        const QMap<int, bool> fired = firedByCondition(o);
        int firing = 0;
        for (const auto& v : o.value("conditions").toArray()) {
            const QJsonObject c = v.toObject();
            QCOMPARE(c.value("vary").toString(), QString("scale"));
            const double m = c.value("max_abs").toDouble();
            QVERIFY2(fired[c.value("index").toInt()] == (m >= 16 && m < 64),
                     qPrintable(QString("%1 (max |x| %2)").arg(c.value("label").toString()).arg(m)));
            firing += fired[c.value("index").toInt()] ? 1 : 0;
        }
        QVERIFY(firing >= 2);
        const QJsonObject f = finding(o, "scale");
        const QJsonArray range = f.value("range").toArray();
        QVERIFY(range.at(0).toDouble() >= 16 && range.at(1).toDouble() < 64);
        QVERIFY2(f.value("text").toString().contains("fired for largest |x| 20 to 40"),
                 qPrintable(f.value("text").toString()));
        QVERIFY(f.value("text").toString().contains("never at 10 and below, at 80 and above"));
    }

    void namesTheKRange()
    {
        // Fires only for k in [100, 200]; the recorded k is 512.
        const QJsonObject o = explore("0", "sim:flip:rate=1,inner_lo=100,inner_hi=200,run_rate=0.5", "block");
        QVERIFY(!o.isEmpty());
        const QMap<int, bool> fired = firedByCondition(o);
        for (const auto& v : o.value("conditions").toArray()) {
            const QJsonObject c = v.toObject();
            const qint64 inner = c.value("inner").toInteger();
            QVERIFY2(fired[c.value("index").toInt()] == (inner >= 100 && inner <= 200),
                     qPrintable(c.value("label").toString()));
        }
        const QJsonObject k = finding(o, "k");
        QCOMPARE(k.value("range").toArray(), (QJsonArray{128.0, 128.0}));
        QVERIFY2(k.value("text").toString().contains("never at 64 and below, at 256 and above"),
                 qPrintable(k.value("text").toString()));
        // Cutting rows or columns keeps k at 512: never.
        QVERIFY(finding(o, "rows").value("fired").toArray().isEmpty());
        QVERIFY(finding(o, "cols").value("text").toString().startsWith("never fired"));
    }

    void namesTheDtype()
    {
        const QString out = m_dir.filePath("explore-dtype.h5");
        auto r = runFaultline({"explore", m_trace, "--op", "1", "--targets",
                               "cpu,sim:flip:rate=1,only_dtype=bf16,run_rate=0.5", "--vary", "dtype",
                               "--runs", "20", "--out", out});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.out.contains("dtype: fired on bfloat16; never on float32, tf32, float16"),
                 r.out.constData());
        QVERIFY2(r.out.contains("dtype: never fired"), r.out.constData());  // the golden cpu
        QVERIFY(QFile::exists(out));
    }

    // A defect of the FP32 cores (float32 computed in FP32, never with TF32 operands) is told from
    // one of the tensor cores: the tf32 condition replays the gemm through cuBLAS with tf32=1.
    void namesTheCores()
    {
        const QJsonObject o = explore("1", "sim:flip:rate=1,only_dtype=fp32,run_rate=0.5", "dtype");
        QVERIFY(!o.isEmpty());
        const QJsonObject d = finding(o, "dtype");
        QVERIFY2(d.value("text").toString() == "fired on float32; never on tf32, bfloat16, float16",
                 qPrintable(d.value("text").toString()));
        const QJsonObject t = explore("1", "sim:flip:rate=1,only_dtype=tf32,run_rate=0.5", "dtype");
        QVERIFY2(finding(t, "dtype").value("text").toString() ==
                     "fired on tf32; never on float32, bfloat16, float16",
                 qPrintable(finding(t, "dtype").value("text").toString()));
        // A cpu target alone never computes with TF32: no such condition.
        auto r = runFaultline({"explore", m_trace, "--op", "1", "--targets", "cpu", "--vary", "dtype",
                               "--runs", "2", "--json"});
        QCOMPARE(r.exitCode, 0);
        QStringList labels;
        for (const auto& c : jsonObject(r.out).value("conditions").toArray())
            labels << c.toObject().value("label").toString();
        QCOMPARE(labels, (QStringList{"float32", "bfloat16", "float16"}));
    }

    void namesTheSm()
    {
        // Fires only in the tiles of virtual SM 3 of 8 (op 1's output is 64x64, 8x8 tiles of 8).
        const QJsonObject o =
            explore("1", "sim:flip:rate=1,only_sm=3,sms=8,tile=8,run_rate=0.5", "placement,block");
        QVERIFY(!o.isEmpty());
        const QJsonObject sm = finding(o, "sm");
        QCOMPARE(sm.value("sms").toArray(), QJsonArray{3});
        QVERIFY2(sm.value("text").toString().startsWith("fired only in tiles of SM 3"),
                 qPrintable(sm.value("text").toString()));
        QVERIFY(!sm.value("fired").toArray().isEmpty());
        // Smaller grids put the same tiles on other SMs: the failures stay on SM 3, and grids of 1
        // and 2 blocks, which never reach it, never fire.
        QVERIFY2(sm.value("text").toString().contains(
                     "it stayed there with grids of 4, 8, 32 blocks, which compute the tiles on other SMs: "
                     "bound to the SM, not to the tiles; never fired with grids of 1, 2 blocks"),
                 qPrintable(sm.value("text").toString()));
        // A defect bound to no SM is named in the tiles of many.
        const QJsonObject all = explore("1", "sim:flip:rate=1,sms=8,tile=8,run_rate=0.5", "placement");
        QVERIFY(!all.isEmpty());
        QCOMPARE(finding(all, "sm").value("sms").toArray().size(), 8);
    }

    // A defect bound to the data (a corrupted address range) moves to other SMs with the grid.
    void smallerGridsShowADataBoundDefect()
    {
        const QJsonObject o = explore("1", "sim:range:length=256,sms=8,tile=8", "placement");
        QVERIFY(!o.isEmpty());
        const QString text = finding(o, "sm").value("text").toString();
        QVERIFY2(text.contains("the SMs changed with the grid (grids of 1, 2, 4, 8, 32 blocks): the defect "
                               "follows the tiles"),
                 qPrintable(text));
        QStringList grids;
        for (const auto& c : o.value("conditions").toArray())
            if (c.toObject().value("axis").toString() == "grid")
                grids << QString::number(c.toObject().value("grid").toInt());
        QCOMPARE(grids, (QStringList{"1", "2", "4", "8", "32"}));
    }

    void healthyAndErrors()
    {
        const QJsonObject o = explore("3", "sim:healthy", "scale,dtype,placement", 0);
        QVERIFY(!o.isEmpty());
        for (const auto& v : o.value("cells").toArray())
            QVERIFY(v.toObject().value("rules_out").toObject().value("rate_below").toDouble() > 0);
        // Placement is explored with smaller grids too: nothing left unexplored to warn about.
        QVERIFY2(o.value("warnings").toArray().isEmpty(), qPrintable(QJsonDocument(o).toJson()));
        int grids = 0;
        for (const auto& c : o.value("conditions").toArray()) grids += c.toObject().value("axis") == "grid";
        QCOMPARE(grids, 5);
        struct Case {
            QStringList args;
            QByteArray phrase;
        };
        const Case cases[] = {{{"--op", "9", "--targets", "cpu"}, "has no op 9"},
                              {{"--op", "1", "--targets", "cpu", "--vary", "heat"}, "--vary 'heat'"},
                              {{"--op", "1", "--targets", "sim:nosuch"}, "nosuch"},
                              {{"--op", "1", "--targets", "gpu:2"}, "gpu:2"}};
        for (const Case& c : cases) {
            auto r = runFaultline(QStringList{"explore", m_trace} + c.args);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(c.phrase), r.err.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestCliExplore)
#include "test_cli_explore.moc"
