// What a file is, by its content (core/incident/ResultFile.h), and what its results show
// (ResultTables.h): each kind of file Faultline writes is recognised whatever its name (a
// campaign saved as "report.dat" is still a campaign), its report is read back, and the tables
// carry the file's verdicts, rates and intervals; a trace or snapshot is part of an incident;
// anything else is an error naming the file.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "core/collectives/LinkMatrix.h"
#include "core/collectives/Sweep.h"
#include "core/compare/CompareResultsFile.h"
#include "core/compare/CompareRun.h"
#include "core/evidence/BundleSealer.h"
#include "core/incident/ResultFile.h"
#include "core/incident/ResultTables.h"
#include "core/io/SnapshotWriter.h"
#include "core/replay/CampaignResultsFile.h"
#include "core/replay/CampaignSummary.h"
#include "core/replay/Statistics.h"

using namespace faultline;

namespace {

void writeText(const QString& path, const QByteArray& text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(text), text.size());
}

RunRecord run(const std::string& target, size_t op, uint32_t rep, RunOutcome outcome)
{
    RunRecord r;
    r.target = target;
    r.opIndex = op;
    r.op = "gemm";
    r.name = "mlp.fc" + std::to_string(op);
    r.rep = rep;
    r.outcome = outcome;
    r.ms = 1.5;
    r.digest = outcome == RunOutcome::Ok ? "aa" : "bb";
    r.goldenExact = true;
    return r;
}

// A campaign: `cpu` clean over 2 ops x 10 reps, `sim:flip` failing 7 of its 20 runs.
CampaignReport plantedCampaign()
{
    std::vector<RunRecord> runs;
    for (size_t op = 0; op < 2; ++op)
        for (uint32_t rep = 0; rep < 10; ++rep) {
            runs.push_back(run("cpu", op, rep, RunOutcome::Ok));
            const bool fails = (op == 0 && rep < 5) || (op == 1 && rep < 2);
            runs.push_back(run("sim:flip", op, rep, fails ? RunOutcome::Mismatch : RunOutcome::Ok));
        }
    std::map<std::string, TargetInfo> info{{"cpu", {"golden model", true, ""}},
                                           {"sim:flip", {"random bit flips", true, ""}}};
    CampaignReport report = summarizeCampaign(runs, {"cpu", "sim:flip"}, info);
    report.trace = "incident-trace.h5";
    report.reps = 10;
    report.seed = 7;
    return report;
}

const ResultTable* tableOf(const ResultSummary& s, const std::string& title)
{
    for (const ResultTable& t : s.tables)
        if (t.title == title) return &t;
    return nullptr;
}

// The row whose first cell is `key`, or null.
const std::vector<std::string>* rowOf(const ResultTable& t, const std::string& key)
{
    for (const auto& row : t.rows)
        if (!row.empty() && row.front() == key) return &row;
    return nullptr;
}

size_t columnOf(const ResultTable& t, const std::string& title)
{
    for (size_t c = 0; c < t.columns.size(); ++c)
        if (t.columns[c] == title) return c;
    return t.columns.size();
}

}  // namespace

class TestResultFile : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }

private slots:
    void aCampaignIsRecognisedByContentAndShowsItsVerdictsAndRates()
    {
        // Saved under a name that says nothing: the content decides.
        const std::string file = path("report.dat");
        const CampaignReport planted = plantedCampaign();
        QVERIFY(writeCampaignResults(file, planted).ok());
        auto kind = detectResultKind(file);
        QVERIFY2(kind, kind ? "" : kind.message().c_str());
        QCOMPARE(*kind, ResultKind::Campaign);
        auto doc = readResultDocument(file, *kind);
        QVERIFY2(doc, doc ? "" : doc.message().c_str());
        const ResultSummary s = summarizeResult(*doc);
        QVERIFY(QString::fromStdString(s.title).contains("report.dat"));
        QVERIFY(QString::fromStdString(s.lines.front()).contains("incident-trace.h5"));

        const ResultTable* verdicts = tableOf(s, "Verdicts");
        QVERIFY(verdicts);
        QCOMPARE(verdicts->rows.size(), size_t(2));
        const auto* flip = rowOf(*verdicts, "sim:flip");
        const auto* cpu = rowOf(*verdicts, "cpu");
        QVERIFY(flip && cpu);
        // The verdicts and rates are the file's: the failing target's rate with its Wilson
        // interval, the clean one what it rules out.
        const TargetSummary& flipSummary = planted.targets[1];
        QCOMPARE(flipSummary.target, std::string("sim:flip"));
        QCOMPARE((*flip)[columnOf(*verdicts, "Verdict")], nameOf(flipSummary.verdict));
        QCOMPARE((*flip)[columnOf(*verdicts, "Failures/runs")], std::string("7/20"));
        QCOMPARE((*flip)[columnOf(*verdicts, "Rate (95% CI)")], rateText(wilsonInterval(7, 20)));
        QCOMPARE((*flip)[columnOf(*verdicts, "Reason")], flipSummary.explanation);
        QCOMPARE((*cpu)[columnOf(*verdicts, "Verdict")], std::string("healthy"));
        QCOMPARE((*cpu)[columnOf(*verdicts, "Rate (95% CI)")],
                 "< " + rateBoundText(cleanRateBound(20)) + " (95%)");

        // The per-op table: one row per op and target, with its own counts.
        const ResultTable* ops = tableOf(s, "Ops");
        QVERIFY(ops);
        QCOMPARE(ops->rows.size(), size_t(4));
        const size_t target = columnOf(*ops, "Target"), failures = columnOf(*ops, "Failures/runs");
        QStringList flipOps;
        for (const auto& row : ops->rows)
            if (row[target] == "sim:flip") flipOps << QString::fromStdString(row[0] + ":" + row[failures]);
        QCOMPARE(flipOps, QStringList({"0:5/10", "1:2/10"}));

        // Every run is listed.
        const ResultTable* runs = tableOf(s, "Runs");
        QVERIFY(runs);
        QCOMPARE(runs->rows.size(), size_t(40));
        size_t mismatches = 0;
        for (const auto& row : runs->rows) mismatches += row[columnOf(*runs, "Outcome")] == "mismatch";
        QCOMPARE(mismatches, size_t(7));
    }

    void anAdaptiveCampaignSaysWhatStoppedEachCell()
    {
        // replay --until-rate: each op and target says what ended its runs, and a clean cell
        // what it rules out.
        CampaignReport planted = plantedCampaign();
        planted.stopping.untilRate = 0.3;  // 10 clean runs rule it out at 95% (bound 0.259)
        for (OpTargetStats& s : planted.stats)
            s.stoppedBy = s.failures > 0 ? StoppedBy::Failure : StoppedBy::Rate;
        const std::string file = path("adaptive.h5");
        QVERIFY(writeCampaignResults(file, planted).ok());
        auto doc = readResultDocument(file, ResultKind::Campaign);
        QVERIFY2(doc, doc ? "" : doc.message().c_str());
        const ResultSummary s = summarizeResult(*doc);
        const ResultTable* ops = tableOf(s, "Ops");
        QVERIFY(ops);
        const size_t target = columnOf(*ops, "Target"), stopped = columnOf(*ops, "Stopped by"),
                     rate = columnOf(*ops, "Rate (95% CI)"), rulesOut = columnOf(*ops, "What it rules out");
        QCOMPARE(ops->rows.size(), size_t(4));
        for (const auto& row : ops->rows) {
            QCOMPARE(row[stopped], std::string(row[target] == "sim:flip" ? "failure" : "rate"));
            if (row[target] == "cpu") {
                QCOMPARE(row[rate], "< " + rateBoundText(cleanRateBound(10)) + " (95%)");
                // The clean cell in the CLI's words: what 10 clean runs rule out.
                QVERIFY2(row[rulesOut].starts_with(cleanRateText(10, planted.stopping.confidence)),
                         row[rulesOut].c_str());
                QVERIFY2(row[rulesOut].find("stopped by rate") != std::string::npos, row[rulesOut].c_str());
            } else {
                QVERIFY2(row[rulesOut].starts_with("stopped by a failure after 10 run(s)"),
                         row[rulesOut].c_str());
            }
        }
        QVERIFY2(s.lines.front().find("runs until a failure or rate < 0.3 at 95%") != std::string::npos,
                 s.lines.front().c_str());
        // A campaign of fixed repetitions leaves the column empty.
        const std::string fixed = path("fixed.h5");
        QVERIFY(writeCampaignResults(fixed, plantedCampaign()).ok());
        auto fixedDoc = readResultDocument(fixed, ResultKind::Campaign);
        QVERIFY(fixedDoc);
        const ResultSummary f = summarizeResult(*fixedDoc);
        for (const auto& row : tableOf(f, "Ops")->rows) {
            QVERIFY(row[columnOf(*tableOf(f, "Ops"), "Stopped by")].empty());
            QVERIFY(row[columnOf(*tableOf(f, "Ops"), "What it rules out")].empty());
        }
    }

    void aMergedFleetIsAFleet()
    {
        nlohmann::json report = campaignJson(plantedCampaign());
        report["fleet"] = {{"node_count", 2}, {"gpu_count", 2}, {"nodes", nlohmann::json::array()}};
        const std::string file = path("fleet.h5");
        QVERIFY(writeCampaignResultsJson(file, report).ok());
        auto kind = detectResultKind(file);
        QVERIFY(kind);
        QCOMPARE(*kind, ResultKind::Fleet);
        auto doc = readResultDocument(file, *kind);
        QVERIFY(doc && doc->report.contains("fleet"));
    }

    void aComparisonShowsItsTensors()
    {
        const std::string a = path("suspect.h5"), b = path("reference.h5");
        std::vector<float> values(64, 1.0f);
        for (const auto& [file, bump] : {std::pair{a, true}, std::pair{b, false}}) {
            auto w = SnapshotWriter::create(file);
            QVERIFY(w);
            std::vector<float> v = values;
            if (bump) v[9] = 2.0f;
            QVERIFY(w->writeTensor("layer.weight", DType::Float32, {8, 8}, v.data()).ok());
            QVERIFY(w->close().ok());
        }
        for (const std::string& snapshot : {a, b}) {
            auto kind = detectResultKind(snapshot);
            QVERIFY(kind);
            QCOMPARE(*kind, ResultKind::Incident);
        }
        auto sa = openTensorFile(a);
        auto sb = openTensorFile(b);
        QVERIFY(sa && sb);
        auto report = compareFiles(**sa, **sb);
        QVERIFY2(report, report ? "" : report.message().c_str());
        const std::string file = path("compare.h5");
        QVERIFY(writeCompareResults(file, *report).ok());
        auto kind = detectResultKind(file);
        QVERIFY(kind);
        QCOMPARE(*kind, ResultKind::Compare);
        auto doc = readResultDocument(file, *kind);
        QVERIFY2(doc, doc ? "" : doc.message().c_str());
        const ResultSummary s = summarizeResult(*doc);
        const ResultTable* tensors = tableOf(s, "Tensors");
        QVERIFY(tensors);
        const auto* row = rowOf(*tensors, "layer.weight");
        QVERIFY(row);
        QCOMPARE((*row)[columnOf(*tensors, "Mismatches")], std::string("1"));
    }

    void aSweepIsASweep()
    {
        SweepOptions o;
        o.targets.assign(2, "sim:healthy");
        o.bytes = 4096;
        auto r = runSweep(o);
        QVERIFY(r);
        const std::string file = path("sweep.h5");
        QVERIFY(writeSweepResults(file, *r).ok());
        auto kind = detectResultKind(file);
        QVERIFY(kind);
        QCOMPARE(*kind, ResultKind::Sweep);
        auto doc = readResultDocument(file, *kind);
        QVERIFY(doc);
        const ResultTable* gpus = tableOf(summarizeResult(*doc), "GPUs");
        QVERIFY(gpus);
        QCOMPARE(gpus->rows.size(), size_t(2));
    }

    void aHealthReportShowsItsGpus()
    {
        const QString file = m_dir.filePath("health-output.txt");
        using nlohmann::json;
        const json gpu = {
            {"bus_id", "0000:3b:00.0"},
            {"uuid", "GPU-1"},
            {"serial", "1650\x1b[2J"},
            {"product", "H100"},
            {"recommendation", "drain"},
            {"xid_summary", {{"79", 2}}},
            {"recommendation_reasons", json::array({{{"action", "drain"}, {"reason", "Xid 79 x2"}}})},
            {"events", json::array({{{"bus_id", "0000:3b:00.0"},
                                     {"kind", "xid"},
                                     {"xid", 79},
                                     {"name", "GPU_HAS_FALLEN_OFF_THE_BUS"}}})}};
        const json health = {{"format", "faultline-health"}, {"version", 1},
                             {"sources", {"dmesg.log"}},     {"warnings", json::array()},
                             {"something_found", true},      {"gpus", json::array({gpu})}};
        writeText(file, QByteArray::fromStdString(health.dump(2)));
        auto kind = detectResultKind(file.toStdString());
        QVERIFY2(kind, kind ? "" : kind.message().c_str());
        QCOMPARE(*kind, ResultKind::Health);
        auto doc = readResultDocument(file.toStdString(), *kind);
        QVERIFY(doc);
        const ResultSummary s = summarizeResult(*doc);
        const ResultTable* gpus = tableOf(s, "GPUs");
        QVERIFY(gpus && gpus->rows.size() == 1);
        const auto& row = gpus->rows.front();
        QCOMPARE(row[columnOf(*gpus, "Recommendation")], std::string("drain"));
        QCOMPARE(row[columnOf(*gpus, "Xids")], std::string("Xid 79 ×2"));
        // Text from the file is made printable: no escape sequence reaches the screen.
        QCOMPARE(row[columnOf(*gpus, "Serial")], std::string("1650\\x1b[2J"));
        QCOMPARE(tableOf(s, "Events")->rows.size(), size_t(1));
    }

    void anEvidenceBundleCarriesVerifysResult()
    {
        const QString dir = m_dir.filePath("bundle");
        QVERIFY(QDir().mkpath(dir));
        using nlohmann::json;
        const json target = {{"target", "cuda:1"},  {"role", "suspect"}, {"verdict", "persistent"},
                             {"runs", 40},          {"failures", 12},    {"rate", 0.3},
                             {"ci95", {0.18, 0.45}}};
        const json caseJson = {
            {"schema", "faultline-evidence-case"},
            {"schema_version", 1},
            {"case", {{"id", "case-1"}}},
            {"suspect", {{"serial", "1650923012345"}, {"uuid", "GPU-9"}, {"bus_id", "0000:3b:00.0"}}},
            {"rma_reasons", {"sim:sm failed 12 of 40 runs"}},
            {"replay", {{"targets", json::array({target})}}},
            {"checklist",
             json::array(
                 {{{"item", "reproduction"}, {"present", true}, {"required", true}, {"detail", "ok"}}})}};
        writeText(dir + "/case.json", QByteArray::fromStdString(caseJson.dump(2)));
        writeText(dir + "/report.md", "# report\n");
        auto sealed = sealBundle(dir.toStdString());
        QVERIFY2(sealed, sealed ? "" : sealed.message().c_str());
        for (const QString& bundle : {dir, dir + ".tar"}) {
            auto kind = detectResultKind(bundle.toStdString());
            QVERIFY2(kind, kind ? "" : kind.message().c_str());
            QCOMPARE(*kind, ResultKind::Evidence);
            auto doc = readResultDocument(bundle.toStdString(), *kind);
            QVERIFY2(doc, doc ? "" : doc.message().c_str());
            QVERIFY(doc->check && doc->check->intact());
            const ResultSummary s = summarizeResult(*doc);
            QVERIFY(QString::fromStdString(s.lines.front()).startsWith("Intact"));
            const ResultTable* targets = tableOf(s, "Targets");
            QVERIFY(targets && targets->rows.size() == 1);
            QCOMPARE(targets->rows[0][columnOf(*targets, "Role")], std::string("suspect"));
            QCOMPARE(targets->rows[0][columnOf(*targets, "Rate (95% CI)")],
                     rateText(RateInterval{0.3, 0.18, 0.45}));
        }
        // A changed file: the check says so and names it.
        writeText(dir + "/report.md", "# changed\n");
        auto doc = readResultDocument(dir.toStdString(), ResultKind::Evidence);
        QVERIFY(doc && doc->check && !doc->check->intact());
        const ResultSummary s = summarizeResult(*doc);
        QVERIFY(QString::fromStdString(s.lines.front()).startsWith("NOT intact"));
        QVERIFY(rowOf(*tableOf(s, "Check"), "report.md"));
    }

    void whatIsNoResultIsAnErrorNamingTheFile()
    {
        const QString json = m_dir.filePath("other.json");
        writeText(json, QByteArray::fromStdString(nlohmann::json{{"format", "something-else"}}.dump()));
        const QString empty = m_dir.filePath("empty-dir");
        QVERIFY(QDir().mkpath(empty));
        const QString text = m_dir.filePath("notes.txt");
        writeText(text, "not a file Faultline writes\n");
        const QString broken = m_dir.filePath("broken.json");
        writeText(broken, "{\"format\": ");
        for (const QString& file : {json, empty, text, broken, m_dir.filePath("missing.h5")}) {
            auto kind = detectResultKind(file.toStdString());
            QVERIFY2(!kind, qPrintable(file));
            QVERIFY2(QString::fromStdString(kind.message()).contains(file), kind.message().c_str());
        }
        // A reader asked for the wrong kind says what the file is.
        auto wrong = readResultDocument(json.toStdString(), ResultKind::Health);
        QVERIFY(!wrong);
        QVERIFY(QString::fromStdString(wrong.message()).contains(json));
    }

    void initTestCase() { QVERIFY(m_dir.isValid()); }
};

QTEST_GUILESS_MAIN(TestResultFile)
#include "test_result_file.moc"
