// `faultline merge-traces`: three per-rank capture files (each with an add of its own and four
// collectives holding every rank's inputs and its own output) join into one trace whose
// collectives carry every rank's output, bisect clean, and show a planted wrong block with its
// source and destination ranks; ranks that disagree on the sequence, a missing file, a corrupt
// file and --out naming an input are exit 2 with one line naming the file.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include "core/trace/Trace.h"
#include "support/CollectiveTrace.h"
#include "support/TestSupport.h"

using faultline::test::ProcessResult;
using namespace faultline;
using namespace faultline::test;

namespace {

ProcessResult run(const QStringList& args)
{
    return runProcess(QStringLiteral(FAULTLINE_EXE), args, 120000);
}

QJsonObject jsonOf(const ProcessResult& r)
{
    return QJsonDocument::fromJson(r.out).object();
}

bool oneLineNaming(const ProcessResult& r, const QString& file)
{
    const QString err = QString::fromUtf8(r.err).trimmed();
    return r.exitCode == 2 && !err.contains('\n') && err.contains(file);
}

}  // namespace

class TestCliMergeTraces : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    QStringList writeRanks(const QString& stem, Plant plant, int dropLastOnRank = -1, int maxOnRank = -1)
    {
        const CollectiveCase c(plant);
        QStringList files;
        for (size_t r = 0; r < 3; ++r) {
            const QString path = m_dir.filePath(stem + "-" + QString::number(r) + ".h5");
            const QString error =
                writeRankTrace(path, c, r, int(r) == dropLastOnRank, int(r) == maxOnRank ? "max" : "sum");
            if (!error.isEmpty()) qFatal("%s", qPrintable(error));
            files << path;
        }
        return files;
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void mergesAndBisectsClean()
    {
        const QStringList files = writeRanks("clean", Plant::None);
        const QString out = m_dir.filePath("clean-merged.h5");
        const ProcessResult r =
            run(QStringList{"merge-traces"} + files + QStringList{"--out", out, "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject j = jsonOf(r);
        QCOMPARE(j["ops"].toInt(), 7);  // three adds, four collectives
        QCOMPARE(j["rank_ops"].toInt(), 3);
        QCOMPARE(j["collectives"].toInt(), 4);
        QCOMPARE(j["devices"].toArray().size(), 3);
        QCOMPARE(j["groups"].toArray().size(), 1);
        QCOMPARE(j["groups"][0]["collectives"].toInt(), 4);
        QVERIFY(j["shared_tensors"].toInt() > 0);  // every file holds every rank's inputs
        QVERIFY(j["warnings"].toArray().isEmpty());

        auto trace = readTrace(out.toStdString());
        QVERIFY2(trace.ok(), trace.ok() ? "" : trace.message().c_str());
        QCOMPARE(trace->ops.size(), size_t(7));
        size_t collectives = 0;
        std::set<std::string> addInputs;
        for (const TraceOp& op : trace->ops) {
            if (op.op == "add") {
                QCOMPARE(op.outputs.size(), size_t(1));
                addInputs.insert(op.inputs[0]);
                continue;
            }
            ++collectives;
            QCOMPARE(op.outputs.size(), size_t(3));  // every rank's output
        }
        QCOMPARE(collectives, size_t(4));
        QCOMPARE(addInputs, (std::set<std::string>{"g0/t0", "g1/t0", "g2/t0"}));  // prefixed ids

        const ProcessResult b = run({"bisect", out, "--suspect", "g1", "--json"});
        QVERIFY2(b.exitCode == 0, b.out.constData());
        const QJsonObject report = jsonOf(b);
        QCOMPARE(report["checked_ops"].toInt(), 5);  // g1's add and the four collectives
        int holding = 0;
        for (const QJsonValue op : report["ops"].toArray())
            if (op["collective"].isObject()) {
                QVERIFY(op["collective"]["holds"].toBool());
                QVERIFY(op["collective"]["missing_ranks"].toArray().isEmpty());
                ++holding;
            }
        QCOMPARE(holding, 4);

        // Replay on the golden target judges every rank's recorded output, reduce_scatter's
        // rank r against block r of the reduction.
        qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        const ProcessResult replay =
            run({"replay", out, "--targets", "cpu", "--reps", "1", "--quiet", "--json"});
        QVERIFY2(replay.exitCode == 0, replay.err.constData());
        int scatterRuns = 0;
        for (const QJsonValue runValue : jsonOf(replay)["runs"].toArray()) {
            const QJsonObject rec = runValue.toObject();
            QCOMPARE(rec["outcome"].toString(), QStringLiteral("ok"));
            if (rec["op"].toString() != "reduce_scatter") continue;
            ++scatterRuns;
            const QJsonObject vs = rec["vs_recorded"].toObject();
            QCOMPARE(vs.size(), 3);
            for (const QString& label : vs.keys()) {
                QVERIFY2(!vs[label].toObject().contains("error"), qPrintable(label));
                QCOMPARE(vs[label].toObject()["mismatches"].toInt(), 0);
            }
        }
        QCOMPARE(scatterRuns, 1);
    }

    void plantedBlockIsAttributed()
    {
        const QStringList files = writeRanks("planted", Plant::GatherBlock2OnRank0);
        const QString out = m_dir.filePath("planted-merged.h5");
        const ProcessResult r = run(QStringList{"merge-traces"} + files + QStringList{"--out", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.out.contains("4 collective(s) joined"));
        const ProcessResult b = run({"bisect", out, "--suspect", "g1", "--json"});
        QCOMPARE(b.exitCode, 1);
        const QJsonObject report = jsonOf(b);
        QJsonObject failed;
        for (const QJsonValue op : report["ops"].toArray())
            if (op["verdict"].toString() == "divergent") failed = op.toObject();
        QCOMPARE(failed["op"].toString(), QStringLiteral("all_gather"));
        QCOMPARE(report["first_divergent_op"].toInt(), failed["index"].toInt());
        const QJsonObject f = failed["collective"]
                                  .toObject()["invariants"]
                                  .toArray()[0]
                                  .toObject()["failures"]
                                  .toArray()[0]
                                  .toObject();
        QCOMPARE(f["source_rank"].toInt(), 2);
        QCOMPARE(f["destination_rank"].toInt(), 0);
        QCOMPARE(f["differing_bytes"].toInt(), 1);
        const ProcessResult text = run({"bisect", out, "--suspect", "g1"});
        QVERIFY2(text.out.contains("the block from rank 2 (g2) on rank 0 (g0)"), text.out.constData());
    }

    void disagreeingRanksAreAnError()
    {
        // Rank 1 recorded a max where the others recorded a sum.
        const QStringList op = writeRanks("op", Plant::None, -1, 1);
        const ProcessResult r =
            run(QStringList{"merge-traces"} + op + QStringList{"--out", m_dir.filePath("op.h5")});
        QVERIFY2(oneLineNaming(r, op[1]), r.err.constData());
        QVERIFY2(r.err.contains("reduce_op") && r.err.contains("collective #1"), r.err.constData());
        QVERIFY(!QFile::exists(m_dir.filePath("op.h5")));
        QVERIFY(tempFilesBeside(m_dir.filePath("op.h5")).isEmpty());
        // Rank 2 stopped before the broadcast.
        const QStringList count = writeRanks("count", Plant::None, 2);
        const ProcessResult c =
            run(QStringList{"merge-traces"} + count + QStringList{"--out", m_dir.filePath("count.h5")});
        QVERIFY2(oneLineNaming(c, count[2]), c.err.constData());
        QVERIFY2(c.err.contains("recorded 4 collective(s) of it") && c.err.contains(" 3"), c.err.constData());
    }

    void badInputsAreExit2NamingTheFile()
    {
        const QStringList files = writeRanks("bad", Plant::None);
        const QString missing = m_dir.filePath("no-such-rank.h5");
        const ProcessResult m =
            run({"merge-traces", files[0], missing, "--out", m_dir.filePath("bad-missing.h5")});
        QVERIFY2(oneLineNaming(m, missing), m.err.constData());

        const QString corrupt = m_dir.filePath("corrupt.h5");
        QFile f(corrupt);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not an HDF5 file at all");
        f.close();
        const ProcessResult c =
            run({"merge-traces", files[0], corrupt, "--out", m_dir.filePath("bad-corrupt.h5")});
        QVERIFY2(oneLineNaming(c, corrupt), c.err.constData());

        const ProcessResult same = run({"merge-traces", files[0], files[1], "--out", files[1]});
        QVERIFY2(oneLineNaming(same, files[1]), same.err.constData());
        QVERIFY(same.err.contains("one of the rank files"));

        const ProcessResult twice =
            run({"merge-traces", files[0], files[0], "--out", m_dir.filePath("twice.h5")});
        QVERIFY2(oneLineNaming(twice, files[0]), twice.err.constData());

        const ProcessResult none = run({"merge-traces", "--out", m_dir.filePath("none.h5")});
        QCOMPARE(none.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestCliMergeTraces)
#include "test_cli_merge_traces.moc"
