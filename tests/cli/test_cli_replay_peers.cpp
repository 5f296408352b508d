// `faultline replay` judging outputs by bits: golden-exact targets against the golden model,
// production-library targets against their peers (same peer key), with a majority or
// --reference deciding which bits are right. Sub-bound corruption (low mantissa bits) passes
// the op's rounding-error bound and is caught only this way. A repetition the target found
// bitwise identical to a judged one is not copied to the host (unless --copy-all).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "ReplayTrace.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

// Flips among the two lowest mantissa bits of 2 % of gemm outputs: inside the gemm bound.
// (Target labels are normalised: parameters sorted and joined by '+'.)
const QString kSubBoundFlip = "sim:flip:bit_hi=1+bit_lo=0+library=blas+op=gemm+rate=0.02";

faultline::test::ProcessResult replay(const QString& trace, const QString& targets,
                                      const QStringList& extra = {}, int reps = 2)
{
    qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
    return faultline::test::runProcess(
        QStringLiteral(FAULTLINE_EXE),
        QStringList{"replay", trace, "--targets", targets, "--reps", QString::number(reps), "--json",
                    "--quiet", "--timeout", "30"} +
            extra,
        120000);
}

QJsonObject targetNamed(const QJsonObject& report, const QString& label)
{
    for (const QJsonValue& t : report["targets"].toArray())
        if (t["target"].toString() == label) return t.toObject();
    return {};
}

}  // namespace

class TestCliReplayPeers : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("trace.h5");
        const QString err = faultline::test::makeReplayTrace(m_trace);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    void goldenExactTargetsAreJudgedByBits()
    {
        // The same sub-bound flips on the golden library: the cpu target's bits are the contract.
        const QString flip = "sim:flip:bit_hi=1+bit_lo=0+op=gemm+rate=0.02";
        const auto r = replay(m_trace, "cpu," + flip);
        QCOMPARE(r.exitCode, 1);
        const QJsonObject report = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(targetNamed(report, "cpu")["verdict"].toString(), QString("healthy"));
        QCOMPARE(targetNamed(report, flip)["verdict"].toString(), QString("device-specific"));
        for (const QJsonValue& run : report["runs"].toArray()) {
            const QJsonObject g = run["vs_golden"].toObject();
            QVERIFY(run["golden_exact"].toBool());
            QCOMPARE(g["judged"].toString(), QString("bitwise"));
            if (run["target"].toString() == flip && run["op"].toString() == "gemm") {
                QCOMPARE(run["outcome"].toString(), QString("mismatch"));
                QVERIFY(g["differing"].toInt() > 0);
                QCOMPARE(g["beyond_tolerance"].toInt(), 0);  // the bound alone would have passed it
            } else {
                QCOMPARE(run["outcome"].toString(), QString("ok"));
            }
        }
    }

    void peersCatchWhatTheBoundMisses()
    {
        const QString a = "sim:healthy:library=blas", b = "sim:healthy:library=blas+seed=2";
        const auto r = replay(m_trace, a + "," + b + "," + kSubBoundFlip);
        QVERIFY2(r.exitCode == 1, r.err.constData());
        const QJsonObject report = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(targetNamed(report, a)["verdict"].toString(), QString("healthy"));
        QCOMPARE(targetNamed(report, b)["verdict"].toString(), QString("healthy"));
        const QJsonObject bad = targetNamed(report, kSubBoundFlip);
        QCOMPARE(bad["verdict"].toString(), QString("device-specific"));
        QCOMPARE(bad["failures"].toInt(),
                 4);  // both runs of both gemms; softmax and add are golden-exact and clean
        QVERIFY(!bad["peer_key"].toString().isEmpty());
        const QJsonObject gemm = report["ops"].toArray()[0].toObject();
        const QJsonObject group = gemm["peers"].toArray()[0].toObject();
        QCOMPARE(group["basis"].toString(), QString("majority"));
        QCOMPARE(group["differing"].toArray(), QJsonArray{kSubBoundFlip});
        QCOMPARE(gemm["targets"].toObject()[kSubBoundFlip].toObject()["peer_mismatches"].toInt(), 2);
        QCOMPARE(report["ops"].toArray()[3].toObject()["peers"].toArray().size(), 1);
        QVERIFY(!report["ops"].toArray()[1].toObject().contains("peers"));  // softmax: no peers needed
        for (const QJsonValue& run : report["runs"].toArray()) {
            if (run["op"].toString() != "gemm") continue;
            QCOMPARE(run["golden_exact"].toBool(), false);
            QCOMPARE(run["vs_golden"]["judged"].toString(), QString("bound"));
            QCOMPARE(run["outcome"].toString(), QString("ok"));  // inside the bound, every one
            QCOMPARE(run["vs_peers"]["equal"].toBool(), run["target"].toString() != kSubBoundFlip);
        }
    }

    void twoPeersAndAReference()
    {
        const QString healthy = "sim:healthy:library=blas";
        const QString targets = healthy + "," + kSubBoundFlip;
        // Two peers that differ: nothing says which is right, and the report says so.
        auto r = replay(m_trace, targets);
        QCOMPARE(r.exitCode, 0);
        QJsonObject report = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(report["ops"].toArray()[0].toObject()["peers"].toArray()[0].toObject()["basis"].toString(),
                 QString("none"));
        QVERIFY(QJsonDocument(report["warnings"].toArray()).toJson().contains("--reference"));
        QCOMPARE(targetNamed(report, kSubBoundFlip)["peer_split_ops"].toArray(), QJsonArray({0, 3}));
        // The known-healthy one as the reference convicts the other.
        r = replay(m_trace, targets, {"--reference", healthy});
        QCOMPARE(r.exitCode, 1);
        report = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(report["reference"].toString(), healthy);
        QCOMPARE(targetNamed(report, kSubBoundFlip)["verdict"].toString(), QString("device-specific"));
        QCOMPARE(targetNamed(report, healthy)["verdict"].toString(), QString("healthy"));
        // A reference that is not a target is refused before anything runs.
        r = replay(m_trace, targets, {"--reference", "cuda:7"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("reference 'cuda:7' is not one of the targets"), r.err.constData());
        r = replay(m_trace, targets, {"--reference", "gpu:0"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("--reference"), r.err.constData());
    }

    void identicalRepetitionsAreNotCopied()
    {
        const QString flaky = "sim:intermittent:k=1+n=2+rate=0.01";  // fails every other repetition
        for (const bool copyAll : {false, true}) {
            const auto r =
                replay(m_trace, "cpu," + flaky, copyAll ? QStringList{"--copy-all"} : QStringList{}, 4);
            QCOMPARE(r.exitCode, 1);
            const QJsonObject report = QJsonDocument::fromJson(r.out).object();
            QCOMPARE(targetNamed(report, "cpu")["verdict"].toString(), QString("healthy"));
            QCOMPARE(targetNamed(report, flaky)["verdict"].toString(), QString("device-specific"));
            QMap<QString, QString> firstDigest;  // target/op -> rep 0's digest
            int skipped = 0, runs = 0;
            for (const QJsonValue& v : report["runs"].toArray()) {
                const QJsonObject run = v.toObject();
                ++runs;
                const QString key = run["target"].toString() + "/" + QString::number(run["op_index"].toInt());
                const bool copied = !run.contains("host_copy");
                if (run["rep"].toInt() == 0) {
                    QVERIFY(copied);
                    QVERIFY(!run.contains("vs_rep"));
                    firstDigest[key] = run["digest"].toString();
                    continue;
                }
                // Every later repetition was compared where it ran with the first.
                const QJsonObject vsRep = run["vs_rep"].toObject();
                QCOMPARE(vsRep["rep"].toInt(), 0);
                const bool identical = vsRep["mismatched"].toInt() == 0;
                QCOMPARE(identical, run["digest"].toString() == firstDigest[key]);
                QCOMPARE(copied, copyAll || !identical);
                if (!copied) ++skipped;
                if (run["target"].toString() == "cpu") QCOMPARE(run["outcome"].toString(), QString("ok"));
            }
            QCOMPARE(runs, 2 * 4 * 4);
            // Without --copy-all: the cpu's 3 later repetitions of each of 4 ops, and the flaky
            // target's healthy repetitions that matched its healthy first one.
            if (copyAll)
                QCOMPARE(skipped, 0);
            else
                QVERIFY2(skipped >= 12, qPrintable(QString::number(skipped)));
            QVERIFY(report["warnings"].toArray().isEmpty());
        }
    }

private:
    QTemporaryDir m_dir;
    QString m_trace;
};

QTEST_MAIN(TestCliReplayPeers)
#include "test_cli_replay_peers.moc"
