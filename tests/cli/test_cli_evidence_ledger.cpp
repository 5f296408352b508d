// `faultline evidence --ledger` through the real executable: the bundle carries the suspect's
// history from the ledger (case.json `ledger_history`, report.md "Device history") with its own
// events, campaigns with per-op rates and the rules that fired, and nothing of the other GPU in
// the same logs and campaigns; the history is read before the bundle is recorded (a bundle never
// cites itself, the next one cites it); the bundle still verifies; `found: false` for a suspect the
// ledger does not know; no field without --ledger; a ledger that cannot be opened is exit 2
// before anything is written; a bus-only Xid from when another board sat in the suspect's slot
// stays out of its bundle and its `ledger show` alike. On SQLite and on a PostgreSQL server the
// test starts.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/LedgerEngines.h"
#include "support/TestSupport.h"

using faultline::test::ProcessResult;
using faultline::test::runProcess;

namespace {

const char* const kSuspect = "1650122005678";
const char* const kOther = "1650122009999";

ProcessResult run(const QStringList& args)
{
    qputenv("FAULTLINE_HOST", "testhost");
    return runProcess(FAULTLINE_EXE, args, 120000);
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), qint64(bytes.size()));
}

nlohmann::json readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
}

// A dmesg log of two GPUs: the suspect (bus 3b) with two Xid 48 and a GPU reset, the other (bus
// 5e) with three Xid 79.
QByteArray twoGpuLog()
{
    QByteArray log =
        "[    0.000000] Linux version 6.1.0\n"
        "[    5.000000] NVRM: GPU at PCI:0000:3b:00: GPU-3b8e5a55-1f4c-2e9b-8a5e-0c7d1e2f3a4b\n"
        "[    5.000001] NVRM: GPU Board Serial Number: 1650122005678\n"
        "[    5.000002] NVRM: GPU at PCI:0000:5e:00: GPU-5e000000-0000-4000-8000-000000000002\n"
        "[    5.000003] NVRM: GPU Board Serial Number: 1650122009999\n";
    for (int i = 0; i < 2; ++i)
        log += QStringLiteral(
                   "[  %1.000000] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python3, An "
                   "uncorrectable double bit error (DBE) has been detected on GPU in the "
                   "framebuffer at partition %2.\n")
                   .arg(100 + i)
                   .arg(i)
                   .toUtf8();
    for (int i = 0; i < 3; ++i)
        log += QStringLiteral(
                   "[  %1.000000] NVRM: Xid (PCI:0000:5e:00): 79, pid=1, name=python3, GPU has "
                   "fallen off the bus.\n")
                   .arg(200 + i)
                   .toUtf8();
    log += "[  300.000000] NVRM: GPU at PCI:0000:3b:00: GPU has been reset\n";
    return log;
}

// A campaign report (`replay --json`) of one node: cuda:0 is the suspect, cuda:1 the other GPU;
// both failed op 0 (`suspectFailures` and 9 of 20 runs).
nlohmann::json campaign(const std::string& trace, int suspectFailures)
{
    auto rate = [](int f) { return f / 20.0; };
    auto target = [&](const char* label, int f) {
        return nlohmann::json{
            {"target", label},         {"verdict", "persistent"}, {"runs", 20},
            {"failures", f},           {"rate", rate(f)},         {"ci", {rate(f) / 2, rate(f) + 0.2}},
            {"explanation", "planted"}};
    };
    auto opRate = [&](int f) {
        return nlohmann::json{{"runs", 20}, {"failures", f}, {"rate", rate(f)}, {"ci", {rate(f) / 2, 0.9}}};
    };
    auto gpu = [](int index, const char* serial, const char* uuid, const char* bus) {
        return nlohmann::json{{"index", index},
                              {"serial", serial},
                              {"uuid", uuid},
                              {"pci_bus_id", bus},
                              {"name", "NVIDIA H100"}};
    };
    return {{"trace", trace},
            {"trace_digest", "digest-of-" + trace},
            {"reps", 20},
            {"seed", 7},
            {"node",
             {{"host", "testhost"},
              {"inventory",
               {{"gpus",
                 {gpu(0, kSuspect, "GPU-3b8e5a55-1f4c-2e9b-8a5e-0c7d1e2f3a4b", "0000:3b:00.0"),
                  gpu(1, kOther, "GPU-5e000000-0000-4000-8000-000000000002", "0000:5e:00.0")}}}}}},
            {"targets", {target("cuda:0", suspectFailures), target("cuda:1", 9)}},
            {"ops",
             {{{"index", 0},
               {"op", "gemm"},
               {"name", "layers.0.mlp"},
               {"targets", {{"cuda:0", opRate(suspectFailures)}, {"cuda:1", opRate(9)}}}}}}};
}

// A health document (`ledger add` input): `serial` seen in testhost's 0000:3b:00.0 at `timestamp`,
// and Xids naming only that bus id ({code, time}).
nlohmann::json slotDocument(const std::string& serial, const std::string& timestamp,
                            const std::vector<std::pair<int, std::string>>& busOnlyXids)
{
    const nlohmann::json identity = {
        {"bus_id", "0000:3b:00.0"}, {"serial", serial}, {"product", "NVIDIA H100"}};
    nlohmann::json events = nlohmann::json::array();
    for (const auto& [code, time] : busOnlyXids)
        events.push_back({{"kind", "xid"},
                          {"xid", code},
                          {"time", time},
                          {"bus_id", "0000:3b:00.0"},
                          {"message", "bus-only"},
                          {"source", "dmesg"}});
    return {{"format", "faultline-health"},
            {"version", 1},
            {"gpus",
             {{{"bus_id", "0000:3b:00.0"},
               {"serial", serial},
               {"identity", identity},
               {"snapshots",
                {{{"source", "smi-" + timestamp}, {"timestamp", timestamp}, {"identity", identity}}}}}}},
            {"unattributed_events", events}};
}

std::set<int> xidCodes(const nlohmann::json& timeline)
{
    std::set<int> codes;
    for (const auto& e : timeline.value("timeline", nlohmann::json::array()))
        if (e.value("kind", "") == "xid") codes.insert(e["xid"].get<int>());
    return codes;
}

}  // namespace

class TestCliEvidenceLedger : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;  // a new one for each engine's run
    QString m_log;

    QString path(const QString& name) const { return m_dir->filePath(name); }
    QString ledgerPath(const QString& name) const
    {
        return QString::fromStdString(faultline::test::ledgerSpec(m_dir->path(), name));
    }
    ProcessResult evidence(const QString& out, const QStringList& more) const
    {
        return run(QStringList{"evidence", "--out", path(out), "--logs", m_log, "--suspect", kSuspect} +
                   more);
    }

private slots:
    void initTestCase()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        m_log = path("dmesg.log");
        writeFile(m_log, twoGpuLog());
    }
    void init() { FL_LEDGER_ENGINE_INIT(); }

    void bundleCarriesTheSuspectsHistory()
    {
        const QString ledger = ledgerPath("history");
        writeFile(path("c1.json"), QByteArray::fromStdString(campaign("incident.h5", 6).dump()));
        writeFile(path("c2.json"), QByteArray::fromStdString(campaign("again.h5", 4).dump()));
        ProcessResult added =
            run({"ledger", "add", "--ledger", ledger, m_log, path("c1.json"), path("c2.json")});
        QVERIFY2(added.exitCode == 0, added.err.constData());

        ProcessResult first = evidence("case-a", {"--case-id", "CASE-A", "--ledger", ledger});
        QVERIFY2(first.exitCode == 0, first.err.constData());
        const nlohmann::json c = readJson(path("case-a/case.json"));
        QVERIFY(c.contains("ledger_history"));
        const nlohmann::json& h = c["ledger_history"];
        QVERIFY(h["found"].get<bool>());
        QCOMPARE(h["serial"].get<std::string>(), std::string(kSuspect));
        QCOMPARE(h["looked_up_by"].get<std::string>(), std::string("serial"));
        // Its own events: two Xid 48 and a GPU reset.
        QCOMPARE(h["events"]["xid"].get<int>(), 2);
        QCOMPARE(h["resets"].get<int>(), 1);
        QCOMPARE(h["event_summary"].size(), size_t(1));
        QCOMPARE(h["event_summary"][0]["code"].get<int>(), 48);
        QCOMPARE(h["event_summary"][0]["count"].get<int>(), 2);
        QCOMPARE(h["locations"][0]["bus_id"].get<std::string>(), std::string("0000:3b:00.0"));
        // Its campaigns (cuda:0 only) with the per-op rates and intervals they recorded.
        QCOMPARE(h["campaigns"].size(), size_t(2));
        std::multiset<int> failures;
        for (const auto& k : h["campaigns"]) {
            QCOMPARE(k["target"].get<std::string>(), std::string("cuda:0"));
            QCOMPARE(k["ops"].size(), size_t(1));
            QCOMPARE(k["ops"][0]["failures"], k["failures"]);
            QCOMPARE(k["ops"][0]["ci"][1].get<double>(), 0.9);
            failures.insert(k["failures"].get<int>());
        }
        QCOMPARE(failures, (std::multiset<int>{4, 6}));
        // Two SDC-positive campaigns within 30 days: the escalation rule, with its reason.
        bool rma = false;
        for (const auto& r : h["rules"])
            rma = rma || (r["rule"] == "rma_candidate" && !r["reason"].get<std::string>().empty());
        QVERIFY2(rma, h["rules"].dump().c_str());
        QCOMPARE(h["trends"]["failure_rate"][0]["failures"].get<int>(), 10);
        // Nothing of the other GPU: its serial, UUID, slot, Xid 79 or its campaign target.
        const std::string all = h.dump();
        for (const char* other : {kOther, "5e000000", "0000:5e:00.0", "cuda:1"})
            QVERIFY2(all.find(other) == std::string::npos, other);
        for (const auto& e : h["event_summary"]) QVERIFY(e["code"].get<int>() != 79);
        // Taken before this bundle was recorded: it cites no bundle.
        QVERIFY(h["evidence_bundles"].empty());

        QFile report(path("case-a/report.md"));
        QVERIFY(report.open(QIODevice::ReadOnly));
        const QByteArray md = report.readAll();
        QVERIFY(md.contains("## Device history"));
        QVERIFY(md.contains("RMA candidate"));
        QVERIFY(md.contains("Xid 48"));
        QVERIFY(!md.mid(md.indexOf("## Device history")).contains(kOther));
        // The manifest covers case.json as before: the bundle verifies.
        for (const QString& b : {path("case-a"), path("case-a.tar")}) {
            ProcessResult v = run({"verify", b});
            QVERIFY2(v.exitCode == 0, v.out.constData());
        }

        // The next bundle's history cites the first, and only it.
        ProcessResult second = evidence("case-b", {"--case-id", "CASE-B", "--ledger", ledger});
        QVERIFY2(second.exitCode == 0, second.err.constData());
        const nlohmann::json c2 = readJson(path("case-b/case.json"));
        const nlohmann::json& bundles = c2["ledger_history"]["evidence_bundles"];
        QCOMPARE(bundles.size(), size_t(1));
        QCOMPARE(bundles[0]["case_id"].get<std::string>(), std::string("CASE-A"));
        QCOMPARE(bundles[0]["intact"].get<bool>(), true);
        ProcessResult show = run({"ledger", "show", kSuspect, "--ledger", ledger, "--json"});
        QVERIFY2(show.exitCode == 0, show.err.constData());
        const nlohmann::json timeline = nlohmann::json::parse(show.out.toStdString(), nullptr, false);
        int recorded = 0;
        for (const auto& e : timeline.value("timeline", nlohmann::json::array()))
            recorded += e.value("kind", "") == "evidence";
        QCOMPARE(recorded, 2);
    }

    void anotherBoardsBusOnlyEventsStayOut()
    {
        // An earlier board in the suspect's slot (May), then the suspect (from June); an Xid 31
        // naming only the bus id in May, an Xid 94 in June.
        const QString ledger = ledgerPath("slot");
        writeFile(path("old-may1.json"),
                  QByteArray::fromStdString(slotDocument("OLDBOARD", "2026-05-01T00:00:00Z", {}).dump()));
        writeFile(path("old-may20.json"),
                  QByteArray::fromStdString(slotDocument("OLDBOARD", "2026-05-20T00:00:00Z", {}).dump()));
        writeFile(path("suspect-june.json"),
                  QByteArray::fromStdString(
                      slotDocument(kSuspect, "2026-06-01T00:00:00Z",
                                   {{31, "2026-05-10T00:00:00Z"}, {94, "2026-06-15T00:00:00Z"}})
                          .dump()));
        ProcessResult added = run({"ledger", "add", "--host", "testhost", "--ledger", ledger,
                                   path("old-may1.json"), path("old-may20.json"), path("suspect-june.json")});
        QVERIFY2(added.exitCode == 0, added.err.constData());

        auto show = [&](const char* serial) {
            ProcessResult r = run({"ledger", "show", serial, "--ledger", ledger, "--json"});
            [&] { QVERIFY2(r.exitCode == 0, r.err.constData()); }();
            return xidCodes(nlohmann::json::parse(r.out.toStdString(), nullptr, false));
        };
        const std::set<int> suspect = show(kSuspect);
        QVERIFY2(suspect.count(94) && !suspect.count(31), "the suspect's timeline: Xid 94 only of the two");
        const std::set<int> old = show("OLDBOARD");
        QCOMPARE(old, (std::set<int>{31}));

        ProcessResult r = evidence("case-slot", {"--case-id", "CASE-SLOT", "--ledger", ledger});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const nlohmann::json h = readJson(path("case-slot/case.json"))["ledger_history"];
        QVERIFY(h["found"].get<bool>());
        std::set<int> inBundle;
        for (const auto& e : h["event_summary"]) inBundle.insert(e["code"].get<int>());
        QCOMPARE(inBundle, suspect);  // the bundle and `ledger show` agree
        QVERIFY(h.dump().find("OLDBOARD") == std::string::npos);
    }

    void suspectUnknownToTheLedgerIsFoundFalse()
    {
        ProcessResult r = evidence("case-unknown", {"--ledger", ledgerPath("empty")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const nlohmann::json c = readJson(path("case-unknown/case.json"));
        QVERIFY(c.contains("ledger_history"));
        QCOMPARE(c["ledger_history"]["found"].get<bool>(), false);
        QCOMPARE(c["ledger_history"]["serial"].get<std::string>(), std::string(kSuspect));
        QFile report(path("case-unknown/report.md"));
        QVERIFY(report.open(QIODevice::ReadOnly));
        QVERIFY(report.readAll().contains("holds no history of this GPU"));
        QCOMPARE(run({"verify", path("case-unknown")}).exitCode, 0);
    }

    void noLedgerNoField()
    {
        if (faultline::test::ledgerEngine() != faultline::test::LedgerEngineKind::Sqlite)
            QSKIP("uses no ledger: run once, on the SQLite pass");
        ProcessResult r = evidence("case-plain", {});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const nlohmann::json c = readJson(path("case-plain/case.json"));
        QVERIFY(c.is_object() && c.contains("suspect"));
        QVERIFY(!c.contains("ledger_history"));
        QFile report(path("case-plain/report.md"));
        QVERIFY(report.open(QIODevice::ReadOnly));
        QVERIFY(!report.readAll().contains("Device history"));
    }

    void unusableLedgerIsExit2BeforeAnything()
    {
        if (faultline::test::ledgerEngine() != faultline::test::LedgerEngineKind::Sqlite)
            QSKIP("a file that is not a database: run once, on the SQLite pass");
        const QString bad = path("not-a-ledger.sqlite");
        writeFile(bad, QByteArray(4096, 'x'));
        ProcessResult r = evidence("case-bad", {"--ledger", bad});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(bad.toUtf8()), r.err.constData());
        QVERIFY(!QFileInfo::exists(path("case-bad")));
        QVERIFY(!QFileInfo::exists(path("case-bad.tar")));
    }
};

FL_LEDGER_TEST_MAIN(TestCliEvidenceLedger)
#include "test_cli_evidence_ledger.moc"
