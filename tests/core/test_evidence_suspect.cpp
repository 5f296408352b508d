// Evidence blames only the suspect (core/evidence/SuspectTargets.h): a campaign target is tied to
// a physical GPU through the node's inventory (cuda:N <-> UUID, serial, bus id); a simulated
// target, the golden model and another GPU are never the suspect's evidence, only labelled
// context; the reproducer replays only the suspect's divergent ops, with repetitions sized to its
// measured rate; kernel logs whose Xids are another GPU's are context, with a warning.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "cli/ReplayTrace.h"
#include "core/evidence/EvidenceBundle.h"
#include "core/evidence/SuspectTargets.h"
#include "core/replay/CampaignResultsFile.h"

using namespace faultline;
using nlohmann::json;

namespace {

const std::string kSuspectUuid = "GPU-aaaa0000-0000-4000-8000-00000000000a";
const std::string kSuspectSerial = "1650000000001";
const std::string kOtherUuid = "GPU-bbbb0000-0000-4000-8000-00000000000b";
const std::string kOtherSerial = "1650000000002";
const std::string kFlip = "sim:flip:rate=1";

json target(const std::string& label, const std::string& verdict, int runs, int failures, json failing)
{
    return {{"target", label}, {"description", label}, {"verdict", verdict},    {"explanation", verdict},
            {"runs", runs},    {"failures", failures}, {"failing_ops", failing}};
}

json perOp(int runs, int failures)
{
    return {{"runs", runs},
            {"failures", failures},
            {"mismatches", failures ? 7 : 0},
            {"max_ulp", failures ? 99 : 0}};
}

// A node campaign over the four ops of the replay test trace, 10 repetitions: the golden model
// clean; a simulated flip failing every run of every op (40/40); the suspect cuda:0 failing 3 of
// 10 runs of op 1; another GPU, cuda:1, failing all 10 runs of op 3. The node's inventory ties
// cuda:0 and cuda:1 to their boards.
json campaignDoc(const std::string& trace, bool inventory = true)
{
    json ops = json::array();
    for (int i = 0; i < 4; ++i)
        ops.push_back({{"index", i},
                       {"op", i == 1   ? "softmax"
                              : i == 2 ? "add"
                                       : "gemm"},
                       {"name", "op" + std::to_string(i)},
                       {"targets",
                        {{"cpu", perOp(10, 0)},
                         {kFlip, perOp(10, 10)},
                         {"cuda:0", perOp(10, i == 1 ? 3 : 0)},
                         {"cuda:1", perOp(10, i == 3 ? 10 : 0)}}}});
    json doc = {
        {"trace", trace},
        {"reps", 10},
        {"seed", 5},
        {"reference", nullptr},
        {"cancelled", false},
        {"targets",
         {target("cpu", "healthy", 40, 0, json::array()), target(kFlip, "persistent", 40, 40, {0, 1, 2, 3}),
          target("cuda:0", "persistent", 40, 3, {1}), target("cuda:1", "device-specific", 40, 10, {3})}},
        {"ops", ops},
        {"node", {{"host", "node-7"}, {"scheduler", "none"}}}};
    if (inventory)
        doc["node"]["inventory"] = {{"driver_version", "580.65.06"},
                                    {"gpus",
                                     {{{"index", 0},
                                       {"uuid", kSuspectUuid},
                                       {"serial", kSuspectSerial},
                                       {"pci_bus_id", "0000:2a:00.0"}},
                                      {{"index", 1},
                                       {"uuid", kOtherUuid},
                                       {"serial", kOtherSerial},
                                       {"pci_bus_id", "0000:18:00.0"}}}}};
    return doc;
}

bool anyContains(const json& list, const std::string& what)
{
    for (const json& s : list)
        if (s.is_string() && s.get<std::string>().find(what) != std::string::npos) return true;
    return false;
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestEvidenceSuspect : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_trace;
    int m_serial = 0;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    QString writeCampaign(const json& doc)
    {
        const QString file = path(QString("results-%1.h5").arg(++m_serial));
        if (!writeCampaignResultsJson(file.toStdString(), doc)) return {};
        return file;
    }
    Result<CampaignEvidence> campaign(const json& doc)
    {
        const QString file = writeCampaign(doc);
        if (file.isEmpty()) return Error{"cannot write the campaign"};
        return readCampaignEvidence(file.toStdString());
    }
    QString writeLog(const QString& name, const QByteArray& text)
    {
        QFile f(path(name));
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
        f.write(text);
        return path(name);
    }
    // Builds a bundle from the campaign `doc` for `suspect`, with `logs`.
    Result<EvidenceResult> bundle(const json& doc, const std::string& suspect, const QStringList& logs = {})
    {
        EvidenceOptions o;
        o.outDir = path(QString("case-%1").arg(++m_serial)).toStdString();
        o.campaign = writeCampaign(doc).toStdString();
        o.suspect = suspect;
        for (const QString& l : logs) o.logs.push_back(l.toStdString());
        o.faultlineVersion = "test";
        return buildEvidenceBundle(o);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = path("trace.h5");
        const QString made = test::makeReplayTrace(m_trace);
        QVERIFY2(made.isEmpty(), qPrintable(made));
    }

    void targetsAreTiedThroughTheInventory_data()
    {
        QTest::addColumn<QString>("uuid");
        QTest::addColumn<QString>("serial");
        QTest::addColumn<QString>("bus");
        QTest::newRow("by UUID, any case") << QString::fromStdString(kSuspectUuid).toUpper() << ""
                                           << "";
        QTest::newRow("by serial") << "" << QString::fromStdString(kSuspectSerial) << "";
        QTest::newRow("by bus id as nvidia-smi spells it") << ""
                                                           << ""
                                                           << "00000000:2A:00.0";
    }
    void targetsAreTiedThroughTheInventory()
    {
        QFETCH(QString, uuid);
        QFETCH(QString, serial);
        QFETCH(QString, bus);
        auto c = campaign(campaignDoc(m_trace.toStdString()));
        QVERIFY2(c, c ? "" : c.message().c_str());
        const SuspectTargets t =
            tieTargetsToSuspect(*c, {uuid.toStdString(), serial.toStdString(), bus.toStdString()});
        QCOMPARE(t.ties.size(), size_t(4));
        QCOMPARE(t.find("cpu")->role, TargetRole::Golden);
        QCOMPARE(t.find(kFlip)->role, TargetRole::Simulated);
        QCOMPARE(t.find("cuda:0")->role, TargetRole::Suspect);
        QCOMPARE(t.find("cuda:0")->gpu.serial, kSuspectSerial);
        QCOMPARE(t.find("cuda:1")->role, TargetRole::OtherGpu);
        QCOMPARE(t.find("cuda:1")->gpu.serial, kOtherSerial);
        QVERIFY(t.isSuspect("cuda:0"));
        QVERIFY(!t.isSuspect(kFlip) && !t.isSuspect("cpu") && !t.isSuspect("cuda:1"));
        QVERIFY(t.warnings.empty());
        QCOMPARE(suspectDivergentOps(*c, t), std::vector<size_t>{1});
    }

    void cudaTargetsWithoutAnInventoryAreTiedToNoGpu()
    {
        auto c = campaign(campaignDoc(m_trace.toStdString(), false));
        QVERIFY(c);
        const SuspectTargets t = tieTargetsToSuspect(*c, {kSuspectUuid, "", ""});
        QCOMPARE(t.find("cuda:0")->role, TargetRole::Untied);
        QVERIFY(!t.anySuspect());
        QVERIFY(suspectDivergentOps(*c, t).empty());
        std::string all;
        for (const std::string& w : t.warnings) all += w + "\n";
        QVERIFY2(all.find("--inventory") != std::string::npos, all.c_str());
        QVERIFY2(all.find("no target of the campaign ran on the suspect GPU") != std::string::npos,
                 all.c_str());
        // The failures of the others are named as theirs.
        QVERIFY2(all.find(kFlip) != std::string::npos, all.c_str());
        // An inventory given to evidence ties them.
        const json given = campaignDoc("", true)["node"]["inventory"];
        QVERIFY(tieTargetsToSuspect(*c, {kSuspectUuid, "", ""}, given).isSuspect("cuda:0"));
    }

    // A simulation is the suspect's only where the trace declares its suspect device simulated by
    // it (the demo incident); never by name alone, never for another device.
    void simulatedStandInOnlyWhereTheTraceDeclaresIt()
    {
        auto c = campaign(campaignDoc(m_trace.toStdString()));
        QVERIFY(c);
        TraceDevice suspect{"gpu1", "sim", kSuspectUuid, kSuspectSerial,
                            "",     "",    "suspect",    {{"simulated_defect", kFlip}}};
        TraceDevice other{"gpu0", "sim", kOtherUuid,  kOtherSerial,
                          "",     "",    "reference", {{"simulated_defect", kFlip}}};
        QCOMPARE(tieTargetsToSuspect(*c, {kSuspectUuid, "", ""}, nullptr, {suspect}).find(kFlip)->role,
                 TargetRole::SuspectStandIn);
        QCOMPARE(tieTargetsToSuspect(*c, {kSuspectUuid, "", ""}, nullptr, {other}).find(kFlip)->role,
                 TargetRole::Simulated);
        QCOMPARE(tieTargetsToSuspect(*c, {kOtherUuid, "", ""}, nullptr, {suspect}).find(kFlip)->role,
                 TargetRole::Simulated);
    }

    void repetitionsFollowTheMeasuredRate_data()
    {
        QTest::addColumn<qulonglong>("failures");
        QTest::addColumn<qulonglong>("runs");
        QTest::addColumn<int>("ops");
        QTest::addColumn<uint>("reps");
        QTest::addColumn<bool>("capped");
        QTest::newRow("fails every run") << 51ull << 51ull << 17 << 2u << false;
        QTest::newRow("3 of 10 on one op") << 3ull << 10ull << 1 << 13u << false;  // ln .01 / ln .7 = 12.9
        QTest::newRow("1 of 100 on one op") << 1ull << 100ull << 1 << 459u << false;
        QTest::newRow("1 of 100 on three ops") << 1ull << 100ull << 3 << 153u << false;
        QTest::newRow("1 of 10000") << 1ull << 10000ull << 1 << kMaxReproducerReps << true;
        QTest::newRow("no measured rate") << 0ull << 40ull << 1 << kMaxReproducerReps << true;
    }
    void repetitionsFollowTheMeasuredRate()
    {
        QFETCH(qulonglong, failures);
        QFETCH(qulonglong, runs);
        QFETCH(int, ops);
        QFETCH(uint, reps);
        QFETCH(bool, capped);
        const ReproducerReps r = reproducerReps(failures, runs, size_t(ops));
        QCOMPARE(r.reps, reps);
        QCOMPARE(r.capped, capped);
        if (!capped) {
            QVERIFY(r.probability >= kReproducerConfidence);
            // One repetition fewer would not be enough (unless at the floor).
            if (r.reps > kMinReproducerReps)
                QVERIFY(1 - std::pow(1 - r.rate, double(r.reps - 1) * ops) < kReproducerConfidence);
        }
    }

    // The case: a simulated flip failed 40/40, another GPU failed too, the suspect failed 3
    // of 10 runs of one op; the kernel log holds only another GPU's Xids.
    void bundleBlamesOnlyTheSuspect()
    {
        const QString log = writeLog(
            "dmesg-other.log",
            "[ 4102.118001] NVRM: GPU at PCI:0000:18:00: " + QByteArray::fromStdString(kOtherUuid) +
                "\n[ 4102.118003] NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=python3, GPU has fallen off "
                "the bus.\n");
        auto r = bundle(campaignDoc(m_trace.toStdString()), kSuspectUuid, {log});
        QVERIFY2(r, r ? "" : r.message().c_str());
        const json& c = r->caseJson;
        // The suspect's identity, completed from the node's inventory.
        QCOMPARE(c["suspect"]["serial"].get<std::string>(), kSuspectSerial);
        // RMA reasons: the suspect's own failures only.
        const json reasons = c["rma_reasons"];
        QVERIFY2(anyContains(reasons, "cuda:0 failed 3 of 40"), reasons.dump().c_str());
        QVERIFY2(!anyContains(reasons, "sim:"), reasons.dump().c_str());
        QVERIFY2(!anyContains(reasons, "cuda:1"), reasons.dump().c_str());
        // The others: context, labelled.
        const json others = c["other_targets"];
        QVERIFY2(anyContains(others, kFlip + " (a simulated device, not the suspect GPU) failed 40 of 40"),
                 others.dump().c_str());
        QVERIFY2(anyContains(others, "cuda:1 (ran on another GPU (serial " + kOtherSerial),
                 others.dump().c_str());
        QVERIFY(anyContains(others, "context only"));
        // Every target says what it ran on.
        std::map<std::string, std::string> roles;
        for (const json& t : c["replay"]["targets"]) roles[t["target"]] = t["role"];
        QCOMPARE(roles["cuda:0"], std::string("suspect"));
        QCOMPARE(roles[kFlip], std::string("simulated"));
        QCOMPARE(roles["cuda:1"], std::string("other_gpu"));
        QCOMPARE(roles["cpu"], std::string("golden"));
        QCOMPARE(c["replay"]["suspect_targets"], json({"cuda:0"}));
        QCOMPARE(c["replay"]["suspect_ops"], json({1}));
        // The reproducer: the suspect's divergent op only, with the golden model as a control, at
        // repetitions sized to 3/10 (13), not the campaign's four ops and every target.
        const json& repro = c["reproducer"];
        QCOMPARE(repro["ops"], json({1}));
        const std::string command = repro["command"];
        QVERIFY2(command.find("--targets 'cpu,cuda:0' --ops 1 --reps 13 --seed 5") != std::string::npos,
                 command.c_str());
        QCOMPARE(repro["reps"]["reps"].get<int>(), 13);
        QCOMPARE(repro["expected"]["must_fail"], json({"cuda:0"}));
        const QByteArray script = readFile(QString::fromStdString(r->dir) + "/reproducer/reproduce.sh");
        QVERIFY(!script.contains("sim:flip"));
        QVERIFY(!script.contains("cuda:1"));
        // The kernel log's Xids are another GPU's: shown, with a warning.
        QVERIFY2(anyContains(c["warnings"],
                             "none of the 1 Xid/SXid event(s) is the suspect GPU's (bus 0000:18:00.0"),
                 c["warnings"].dump().c_str());
        bool otherListed = false;
        for (const json& g : c["gpus"])
            if (g.value("bus_id", json()) == json("0000:18:00.0"))
                otherListed = g["role"] == "other" && g["events"] == 1;
        QVERIFY(otherListed);
        // The report says it in words.
        const QByteArray report = readFile(QString::fromStdString(r->dir) + "/report.md");
        const qsizetype reasonsAt = report.indexOf("Candidate RMA reasons"),
                        checklistAt = report.indexOf("## Checklist");
        QVERIFY(reasonsAt >= 0 && checklistAt > reasonsAt);
        const QByteArray summary = report.mid(reasonsAt, checklistAt - reasonsAt);
        const qsizetype contextAt = summary.indexOf("context only");
        QVERIFY2(contextAt > 0, summary.constData());
        QVERIFY2(!summary.left(contextAt).contains("sim:flip"), summary.constData());
        QVERIFY(report.contains("**the suspect GPU**"));
        QVERIFY(report.contains("a simulated device, not the suspect"));
    }

    void suspectThatRanNothingIsSaidPlainly()
    {
        const std::string stranger = "GPU-cccc0000-0000-4000-8000-00000000000c";
        auto r = bundle(campaignDoc(m_trace.toStdString()), stranger);
        QVERIFY2(r, r ? "" : r.message().c_str());
        const json& c = r->caseJson;
        QVERIFY2(c["rma_reasons"].empty(), c["rma_reasons"].dump().c_str());
        QVERIFY2(anyContains(c["warnings"], "no target of the campaign ran on the suspect GPU"),
                 c["warnings"].dump().c_str());
        QVERIFY(c["reproducer"].is_null());
        QVERIFY(!QFile::exists(QString::fromStdString(r->dir) + "/reproducer/reproduce.sh"));
        QCOMPARE(c["replay"]["suspect_targets"], json::array());
        QCOMPARE(c["replay"]["suspect_reproduced"], json(false));
        for (const json& i : c["checklist"])
            if (i["item"] == "reproduction on replay") QCOMPARE(i["present"], json(false));
        QVERIFY(readFile(QString::fromStdString(r->dir) + "/report.md")
                    .contains("No target of this campaign ran on the suspect GPU"));
    }

    void cleanSuspectIsNoReproduction()
    {
        json doc = campaignDoc(m_trace.toStdString());
        doc["targets"][2] = target("cuda:0", "healthy", 40, 0, json::array());
        for (json& o : doc["ops"]) o["targets"]["cuda:0"] = perOp(10, 0);
        auto r = bundle(doc, kSuspectSerial);
        QVERIFY2(r, r ? "" : r.message().c_str());
        const json& c = r->caseJson;
        QVERIFY2(c["rma_reasons"].empty(), c["rma_reasons"].dump().c_str());
        QVERIFY2(anyContains(c["warnings"], "the suspect's target(s) cuda:0 failed none of 40 runs (rate <"),
                 c["warnings"].dump().c_str());
        QVERIFY(c["reproducer"].is_null());
        // A clean suspect rules nothing out about the suspect itself.
        QVERIFY2(!anyContains(c["ruled_out"], "cuda:0"), c["ruled_out"].dump().c_str());
        QVERIFY(anyContains(c["other_targets"], kFlip));
    }

    void suspectsOwnXidsNeedNoWarning()
    {
        const QString log =
            writeLog("dmesg-own.log",
                     "[ 4102.118003] NVRM: Xid (PCI:0000:2a:00): 63, pid='<unknown>', name=<unknown>, "
                     "Row Remapper: New row (0x0000000012ab34cd) marked for remapping, reset gpu to "
                     "activate.\n");
        auto r = bundle(campaignDoc(m_trace.toStdString()), kSuspectUuid, {log});
        QVERIFY2(r, r ? "" : r.message().c_str());
        QVERIFY2(!anyContains(r->caseJson["warnings"], "Xid/SXid event(s) is the suspect GPU's"),
                 r->caseJson["warnings"].dump().c_str());
        bool mine = false;
        for (const json& g : r->caseJson["gpus"])
            if (g["role"] == "suspect") mine = g["events"] == 1;
        QVERIFY(mine);
    }
};

QTEST_GUILESS_MAIN(TestEvidenceSuspect)
#include "test_evidence_suspect.moc"
