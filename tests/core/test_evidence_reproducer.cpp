// The minimal reproducer of an evidence bundle (core/evidence/MinimalReproducer.h) and the
// campaign fields it is made of (core/evidence/CampaignEvidence.h): text from a results file is
// refused at the boundary when it is not printable, and reproduce.sh never runs it even when it
// gets past (comments print it escaped, commands quote it). The script compares verdicts as the
// replay prints them, replays a fleet suspect on its own node's target, and says clearly (exit 2)
// when a campaign's targets cannot be replayed.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "cli/ReplayTrace.h"
#include "core/Text.h"
#include "core/evidence/CampaignEvidence.h"
#include "core/evidence/MinimalReproducer.h"
#include "core/evidence/SuspectTargets.h"
#include "core/replay/CampaignResultsFile.h"

using namespace faultline;
using nlohmann::json;

namespace {

// A small single-node campaign: cpu healthy, a simulated stuck bit persistent on op 1.
json campaignDoc()
{
    const std::string sim = "sim:stuck-bit:bit=20";
    return {{"trace", "trace.h5"},
            {"reps", 3},
            {"seed", 7},
            {"reference", nullptr},
            {"cancelled", false},
            {"targets",
             {{{"target", "cpu"},
               {"description", "golden model"},
               {"verdict", "healthy"},
               {"explanation", "no failure"},
               {"runs", 12},
               {"failures", 0},
               {"failing_ops", json::array()}},
              {{"target", sim},
               {"description", "stuck bit"},
               {"verdict", "persistent"},
               {"explanation", "failed every run"},
               {"runs", 12},
               {"failures", 3},
               {"failing_ops", {1}}}}},
            {"ops",
             {{{"index", 1},
               {"op", "softmax"},
               {"name", "layer.1"},
               {"targets",
                {{"cpu", {{"runs", 3}, {"failures", 0}}},
                 {sim,
                  {{"runs", 3},
                   {"failures", 3},
                   {"mismatches", 1},
                   {"max_ulp", 5},
                   {"signature", "stuck-bit"}}}}}}}}};
}

// A merged fleet campaign of three GPUs: node-b's cuda:3 failed on its own node (persistent on
// op 1); node-c's cuda:1 was healthy on its node and only the fleet's peer vote found it
// different (op 2).
json fleetDoc()
{
    auto gpu = [](const char* label, const char* target, const char* verdict, const char* nodeVerdict,
                  const char* uuid, const char* serial, const char* bus, json failing) {
        return json{{"target", label},
                    {"description", "cuda"},
                    {"verdict", verdict},
                    {"explanation", ""},
                    {"runs", 6},
                    {"failures", failing.empty() ? 0 : 2},
                    {"failing_ops", failing},
                    {"fleet_gpu",
                     {{"host", std::string(label).substr(0, 6)},
                      {"task", ""},
                      {"target", target},
                      {"index", 0},
                      {"uuid", uuid},
                      {"serial", serial},
                      {"name", "H100"},
                      {"pci_bus_id", bus},
                      {"node_verdict", nodeVerdict},
                      {"outlier_ops", json::array()},
                      {"file", "x.h5"}}}};
    };
    json ops = json::array();
    for (int i : {1, 2})
        ops.push_back({{"index", i},
                       {"op", i == 1 ? "softmax" : "add"},
                       {"name", "layer"},
                       {"targets", json::object()}});
    return {
        {"trace", "trace.h5"},
        {"reps", 3},
        {"seed", 0},
        {"reference", nullptr},
        {"cancelled", false},
        {"targets",
         {gpu("node-a/cuda:0", "cuda:0", "healthy", "healthy", "GPU-aaa", "111", "0000:01:00.0",
              json::array()),
          gpu("node-b/cuda:3", "cuda:3", "persistent", "persistent", "GPU-bbb", "222", "0000:41:00.0", {1}),
          gpu("node-c/cuda:1", "cuda:1", "device-specific", "healthy", "GPU-ccc", "333", "0000:81:00.0",
              {2})}},
        {"ops", ops},
        {"fleet", {{"nodes", json::array()}}}};
}

// The ties of a campaign whose target `suspect` is taken as the suspect's (a CampaignEvidence
// made some other way: its labels may be anything).
SuspectTargets suspectIs(const CampaignEvidence& c, const std::string& suspect)
{
    SuspectTargets s;
    s.suspect = {"GPU-test", "", ""};
    for (const CampaignTargetEvidence& t : c.targets)
        s.ties.push_back({t.target,
                          t.target == suspect ? TargetRole::Suspect
                          : t.target == "cpu" ? TargetRole::Golden
                                              : TargetRole::Simulated,
                          {},
                          ""});
    return s;
}

struct ScriptRun {
    int exitCode = -1;
    QByteArray out, err;
};

// Runs `sh script` with FAULTLINE=`faultline`.
ScriptRun runScript(const QString& script, const QString& faultline)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("FAULTLINE", faultline);
    p.setProcessEnvironment(env);
    p.setWorkingDirectory(QFileInfo(script).absolutePath());
    p.start("sh", {script});
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return {};
    }
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

// A stand-in for faultline that prints `out` and exits with `code`, whatever it is asked.
QString writeStub(const QString& path, const QByteArray& out, int code)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
    f.write("#!/bin/sh\ncat <<'EOF'\n" + out + "EOF\nexit " + QByteArray::number(code) + "\n");
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

}  // namespace

class TestEvidenceReproducer : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_trace;
    int m_serial = 0;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    // The campaign `doc` as a results file, read back.
    Result<CampaignEvidence> campaign(const json& doc, QString* file = nullptr)
    {
        const QString results = path(QString("results-%1.h5").arg(++m_serial));
        if (file) *file = results;
        if (Status st = writeCampaignResultsJson(results.toStdString(), doc); !st) return st.error();
        return readCampaignEvidence(results.toStdString());
    }
    // A fresh folder for a reproducer.
    QString folder()
    {
        const QString dir = path(QString("repro-%1").arg(++m_serial));
        QDir().mkpath(dir);
        return dir;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = path("trace.h5");
        const QString made = test::makeReplayTrace(m_trace);
        QVERIFY2(made.isEmpty(), qPrintable(made));
    }

    void campaignTextThatIsNotPrintableIsRefused_data()
    {
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QString>("field");
        const QByteArray injected = "sim:nan\nid > /tmp/pwned";
        QTest::newRow("target label") << "/targets/1/target" << injected << "targets[1].target";
        QTest::newRow("verdict") << "/targets/1/verdict" << QByteArray("persistent\nid > /tmp/pwned")
                                 << "targets[1].verdict";
        // A verdict is one of replay's words (parsed once, here): printable text that is not one is refused.
        QTest::newRow("unknown verdict")
            << "/targets/1/verdict" << QByteArray("exploded") << "targets[1].verdict";
        QTest::newRow("fleet node verdict") << "/targets/1/fleet_gpu/node_verdict" << QByteArray("sick")
                                            << "targets[1].fleet_gpu.node_verdict";
        QTest::newRow("reference") << "/reference" << QByteArray("cpu\r\nid") << "reference";
        QTest::newRow("op kind") << "/ops/0/op" << QByteArray("softmax\x1b[2J") << "ops[0].op";
        QTest::newRow("op name") << "/ops/0/name" << QByteArray("layer.1\nid") << "ops[0].name";
        QTest::newRow("op target") << "/ops/0/targets/+" << injected << "ops[0].targets";
        // (Invalid UTF-8 never gets this far: the report is JSON, whose reader refuses it.)
        QTest::newRow("tab") << "/targets/0/target" << QByteArray("cpu\tx") << "targets[0].target";
    }
    void campaignTextThatIsNotPrintableIsRefused()
    {
        QFETCH(QString, pointer);
        QFETCH(QByteArray, value);
        QFETCH(QString, field);
        json doc = campaignDoc();
        if (pointer.endsWith("/+"))
            doc[json::json_pointer(pointer.chopped(2).toStdString())][value.toStdString()] = {{"runs", 1}};
        else
            doc[json::json_pointer(pointer.toStdString())] = value.toStdString();
        QString file;
        auto c = campaign(doc, &file);
        QVERIFY(!c);
        QCOMPARE(c.code(), ErrorCode::Format);
        QVERIFY2(c.message().rfind(file.toStdString(), 0) == 0, c.message().c_str());
        QVERIFY2(c.message().find(field.toStdString()) != std::string::npos, c.message().c_str());
        // The message itself is one printable line.
        QVERIFY2(isPrintableText(c.message()), c.message().c_str());
        // Printable text with quotes and shell syntax is a name like any other.
        json fine = campaignDoc();
        fine["ops"][0]["name"] = "layer.'$(id)'`id`;\"x\"";
        QVERIFY(campaign(fine));
    }

    // Text that gets past the reader (a CampaignEvidence made some other way) still never runs.
    void scriptNeverRunsCampaignText_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        const QString marker = path("pwned");
        QTest::newRow("target label") << "target"
                                      << "sim:nan\ntouch " + marker + " #";
        QTest::newRow("reference") << "reference"
                                   << "cpu\ntouch " + marker + " #";
        QTest::newRow("quoted") << "target"
                                << "cpu' ; touch " + marker + " ; echo '";
        QTest::newRow("substitution") << "target"
                                      << "$(touch " + marker + ")`touch " + marker + "`";
    }
    void scriptNeverRunsCampaignText()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        const QString marker = path("pwned");
        auto c = campaign(campaignDoc());
        QVERIFY2(c, c ? "" : c.message().c_str());
        if (field == "target") c->targets[1].target = value.toStdString();
        if (field == "reference") c->reference = value.toStdString();
        const QString dir = folder();
        SuspectTargets ties = suspectIs(*c, c->targets[1].target);
        auto r = writeMinimalReproducer(*c, m_trace.toStdString(), dir.toStdString(), ties);
        QVERIFY2(r, r ? "" : r.message().c_str());
        const QString script = QString::fromStdString(r->script);
        QProcess syntax;
        syntax.start("sh", {"-n", script});
        QVERIFY(syntax.waitForFinished(30000));
        QVERIFY2(syntax.exitCode() == 0, syntax.readAllStandardError().constData());
        const QString stub = writeStub(path("stub-faultline"), "", 0);
        QVERIFY(!stub.isEmpty());
        const ScriptRun run = runScript(script, stub);
        QVERIFY2(!QFile::exists(marker), qPrintable("the script ran campaign text:\n" + run.out + run.err));
        QVERIFY(run.exitCode != 0);  // nothing was reproduced
    }

    void verdictsAreComparedAsTheReplayPrintsThem()
    {
        auto c = campaign(campaignDoc());
        QVERIFY(c);
        auto r = writeMinimalReproducer(*c, m_trace.toStdString(), folder().toStdString(),
                                        suspectIs(*c, "sim:stuck-bit:bit=20"));
        QVERIFY2(r, r ? "" : r.message().c_str());
        QVERIFY(r->replayable);
        QCOMPARE(r->expectedExitCode, 1);
        QCOMPARE(r->mustFail, std::vector<std::string>{"sim:stuck-bit:bit=20"});
        QVERIFY2(r->command.find("--targets 'cpu,sim:stuck-bit:bit=20'") != std::string::npos,
                 r->command.c_str());
        const QByteArray table =
            "  target                             verdict          failures  rate (95% CI)          "
            "deterministic\n"
            "  cpu                                healthy             0/12   0%                     yes\n"
            "      no failure\n"
            "  sim:stuck-bit:bit=20               persistent          3/12   25%                    yes\n";
        const QString script = QString::fromStdString(r->script);
        const ScriptRun same = runScript(script, writeStub(path("stub-same"), table, 1));
        QVERIFY2(same.exitCode == 0, same.out.constData());
        QVERIFY(same.out.contains("reproduced: sim:stuck-bit:bit=20 fails again"));
        QVERIFY(same.out.contains("reproduced: cpu is healthy"));
        // With fewer targets and repetitions a persistent defect may come out device-specific or
        // transient: it still fails again, which is what reproduces it.
        QByteArray alone = table;
        alone.replace("persistent     ", "device-specific");
        const ScriptRun other1 = runScript(script, writeStub(path("stub-alone"), alone, 1));
        QVERIFY2(other1.exitCode == 0, other1.out.constData());
        QByteArray healed = table;
        healed.replace("persistent  ", "healthy     ");
        const ScriptRun other = runScript(script, writeStub(path("stub-healed"), healed, 0));
        QCOMPARE(other.exitCode, 1);
        QVERIFY2(other.out.contains("NOT reproduced: sim:stuck-bit:bit=20 should fail again"),
                 other.out.constData());
        const ScriptRun failed = runScript(script, writeStub(path("stub-failed"), "error: x\n", 2));
        QCOMPARE(failed.exitCode, 2);
    }

    void fleetSuspectReplaysOnItsOwnTarget()
    {
        auto c = campaign(fleetDoc());
        QVERIFY2(c, c ? "" : c.message().c_str());
        QVERIFY(c->fleet);
        auto r = writeMinimalReproducer(*c, m_trace.toStdString(), folder().toStdString(),
                                        tieTargetsToSuspect(*c, {"", "222", ""}));
        QVERIFY2(r, r ? "" : r.message().c_str());
        QVERIFY2(r->replayable, r->notReplayable.c_str());
        QCOMPARE(r->fleetGpu, std::string("node-b/cuda:3"));
        QCOMPARE(r->ops, std::vector<size_t>{1});  // its own failing ops, not the whole fleet's
        QVERIFY2(r->command.find("--targets 'cuda:3'") != std::string::npos, r->command.c_str());
        QCOMPARE(r->expectedVerdicts.size(), size_t(1));
        QCOMPARE(r->expectedVerdicts[0].second, Verdict::Persistent);
        const ScriptRun run = runScript(QString::fromStdString(r->script),
                                        writeStub(path("stub-fleet"), "  cuda:3   persistent   2/6\n", 1));
        QVERIFY2(run.exitCode == 0, run.out + run.err);
        // By bus id too, however it is written.
        // nvidia-smi spells the bus id so
        auto b = writeMinimalReproducer(*c, m_trace.toStdString(), folder().toStdString(),
                                        tieTargetsToSuspect(*c, {"", "", "00000000:41:00.0"}));
        QVERIFY(b && b->replayable && b->fleetGpu == "node-b/cuda:3");
    }

    void fleetCampaignsThatCannotBeReplayedSaySo()
    {
        auto c = campaign(fleetDoc());
        QVERIFY(c);
        // Only the fleet's peer vote found node-c's GPU different: replaying it alone cannot show that.
        auto r = writeMinimalReproducer(*c, m_trace.toStdString(), folder().toStdString(),
                                        tieTargetsToSuspect(*c, {"GPU-ccc", "", ""}));
        QVERIFY2(r, r ? "" : r.message().c_str());
        QVERIFY(!r->replayable);
        QVERIFY2(r->notReplayable.find("peer") != std::string::npos, r->notReplayable.c_str());
        QCOMPARE(r->ops, std::vector<size_t>{2});  // its own ops, for a replay by hand
        QVERIFY(QFile::exists(QString::fromStdString(r->trace)));
        const ScriptRun run =
            runScript(QString::fromStdString(r->script), writeStub(path("stub-never"), "", 0));
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("cannot replay"), run.err.constData());
    }

    // A suspect that is none of the fleet's GPUs (or no suspect at all) failed nothing: there is
    // nothing of its own to reproduce, and the other GPUs' failures are not made its reproducer.
    void fleetSuspectNotAmongItsGpusHasNoReproducer_data()
    {
        QTest::addColumn<QString>("uuid");
        QTest::newRow("not among the fleet's GPUs") << "GPU-zzz";
        QTest::newRow("no suspect") << "";
    }
    void fleetSuspectNotAmongItsGpusHasNoReproducer()
    {
        QFETCH(QString, uuid);
        auto c = campaign(fleetDoc());
        QVERIFY(c);
        const SuspectTargets ties = tieTargetsToSuspect(*c, {uuid.toStdString(), "", ""});
        QVERIFY(!ties.anySuspect());
        QVERIFY(suspectDivergentOps(*c, ties).empty());
        QVERIFY(!writeMinimalReproducer(*c, m_trace.toStdString(), folder().toStdString(), ties));
        bool said = false;
        for (const std::string& w : ties.warnings)
            said = said || w.find("no target of the campaign ran on the suspect GPU") != std::string::npos;
        QVERIFY(said);
    }

    void referencesThatAreNotReplayTargetsSaySo()
    {
        json doc = campaignDoc();
        doc["reference"] = "gpu9";
        auto c = campaign(doc);
        QVERIFY2(c, c ? "" : c.message().c_str());
        auto r = writeMinimalReproducer(*c, m_trace.toStdString(), folder().toStdString(),
                                        suspectIs(*c, "sim:stuck-bit:bit=20"));
        QVERIFY2(r, r ? "" : r.message().c_str());
        QVERIFY(!r->replayable);
        QVERIFY2(r->notReplayable.find("gpu9") != std::string::npos, r->notReplayable.c_str());
        const ScriptRun run =
            runScript(QString::fromStdString(r->script), writeStub(path("stub-gpu9"), "", 0));
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("gpu9"), run.err.constData());
    }

    void commentTextCannotEndTheLine()
    {
        for (const std::string& s : {std::string("a\nb"), std::string("a\rb"),
                                     std::string("a\x85"
                                                 "b"),
                                     std::string("a\xe2\x80\xa8"
                                                 "b"),
                                     std::string("a\xff")}) {
            const std::string c = shellCommentText(s);
            QVERIFY2(c.find('\n') == std::string::npos && c.find('\r') == std::string::npos, c.c_str());
            QVERIFY2(isPrintableText(c), c.c_str());
        }
        QCOMPARE(shellQuote("it's"), std::string("'it'\\''s'"));
    }
};

QTEST_GUILESS_MAIN(TestEvidenceReproducer)
#include "test_evidence_reproducer.moc"
