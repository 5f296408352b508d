// Merging node campaigns (core/fleet/FleetMerge.h) on planted documents: the majority digest per
// op and peer key names the outlier GPU with how many peers agreed; a split vote names nobody;
// golden-exact targets (no peer key) do not vote; missing and failed tasks are listed; inventory
// UUIDs and serials reach the GPU rows; a bad document is refused naming the file; the merged
// report is a campaign results file.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "core/Text.h"
#include "core/fleet/FleetMerge.h"
#include "core/replay/CampaignResultsFile.h"
#include "core/replay/Statistics.h"

using namespace faultline;
using nlohmann::json;

namespace {

const std::string kPeerKey = "NVIDIA H100 80GB HBM3, 132 SMs, cc 9.0, driver 550, cublas 12.4";

// One node's campaign: GPUs cuda:0..n-1 on op 0 (gemm), each with the given first digest.
json nodeCampaign(const std::string& host, const std::string& task, const std::vector<std::string>& digests,
                  bool withInventory = true)
{
    json targets = json::array(), opTargets = json::object(), gpus = json::array();
    for (size_t i = 0; i < digests.size(); ++i) {
        const std::string label = "cuda:" + std::to_string(i);
        targets.push_back({{"target", label},
                           {"verdict", "healthy"},
                           {"explanation", "all runs within the golden model's bounds"},
                           {"runs", 3},
                           {"failures", 0},
                           {"failing_ops", json::array()},
                           {"rate", 0.0},
                           {"ci", {0.0, 0.56}},
                           {"peer_key", kPeerKey},
                           {"determinism", {{"expected", true}, {"certified", true}}}});
        opTargets[label] = {
            {"runs", 3}, {"failures", 0}, {"first_digest", digests[i]}, {"rate", 0.0}, {"ci", {0.0, 0.56}}};
        gpus.push_back({{"index", int(i)},
                        {"uuid", "GPU-" + host + "-" + std::to_string(i)},
                        {"serial", "SN" + host + std::to_string(i)},
                        {"name", "NVIDIA H100"}});
    }
    json node = {{"host", host}, {"task", task}, {"job_id", "4711"}, {"scheduler", "slurm"}};
    if (withInventory) node["inventory"] = {{"gpus", gpus}};
    return {
        {"trace", "/shared/trace.h5"},
        {"reps", 3},
        {"seed", 1},
        {"targets", targets},
        {"ops", json::array({{{"index", 0}, {"op", "gemm"}, {"name", "mlp.fc1"}, {"targets", opTargets}}})},
        {"runs", json::array()},
        {"warnings", json::array()},
        {"cancelled", false},
        {"node", node}};
}

// The same campaign as replayed from the trace with content digest `traceDigest`.
json withTrace(json c, const std::string& traceDigest)
{
    c["trace_digest"] = traceDigest;
    return c;
}

std::vector<std::string> outlierLabels(const json& merged)
{
    std::vector<std::string> labels;
    for (const json& o : merged["fleet"]["outliers"]) labels.push_back(o["gpu"].get<std::string>());
    std::sort(labels.begin(), labels.end());
    return labels;
}

// Whether every string in `j` (keys and values) is printable text.
bool allPrintable(const json& j)
{
    if (j.is_string()) return isPrintableText(j.get_ref<const std::string&>());
    if (j.is_object()) {
        for (const auto& [k, v] : j.items())
            if (!isPrintableText(k) || !allPrintable(v)) return false;
        return true;
    }
    if (j.is_array())
        for (const json& e : j)
            if (!allPrintable(e)) return false;
    return true;
}

bool anyContains(const json& strings, const std::string& a, const std::string& b = {})
{
    for (const json& w : strings) {
        const std::string t = w.get<std::string>();
        if (t.find(a) != std::string::npos && t.find(b) != std::string::npos) return true;
    }
    return false;
}

const json* gpuRow(const json& merged, const std::string& label)
{
    for (const json& g : merged["fleet"]["gpus"])
        if (g["gpu"] == label) return &g;
    return nullptr;
}

}  // namespace

class TestFleetMerge : public QObject {
    Q_OBJECT

private slots:
    void theMajorityNamesTheOutlier()
    {
        FleetMerger m;
        m.expectTasks(3);
        QVERIFY(m.add("a.h5", nodeCampaign("n1", "0", {"d1", "d1"})).ok());
        QVERIFY(m.add("b.h5", nodeCampaign("n2", "1", {"d1", "bad"})).ok());
        QVERIFY(m.add("c.h5", nodeCampaign("n3", "2", {"d1", "d1"})).ok());
        const json r = m.result().value();
        const json& outliers = r["fleet"]["outliers"];
        QCOMPARE(outliers.size(), size_t(1));
        QCOMPARE(outliers[0]["gpu"].get<std::string>(), std::string("n2/cuda:1"));
        QCOMPARE(outliers[0]["uuid"].get<std::string>(), std::string("GPU-n2-1"));
        QCOMPARE(outliers[0]["serial"].get<std::string>(), std::string("SNn21"));
        QCOMPARE(outliers[0]["ops"][0]["agreeing"].get<int>(), 5);
        QCOMPARE(outliers[0]["ops"][0]["peers"].get<int>(), 6);
        QCOMPARE(outliers[0]["ops"][0]["majority_digest"].get<std::string>(), std::string("d1"));
        QVERIFY(r["fleet"]["missing_tasks"].empty());
        // Its verdict: the node saw nothing; the fleet did.
        const json* bad = gpuRow(r, "n2/cuda:1");
        QVERIFY(bad);
        QCOMPARE((*bad)["node_verdict"].get<std::string>(), std::string("healthy"));
        QCOMPARE((*bad)["verdict"].get<std::string>(), std::string("device-specific"));
        QCOMPARE((*gpuRow(r, "n1/cuda:0"))["verdict"].get<std::string>(), std::string("healthy"));
        // A clean GPU's row and target say what its runs rule out; one that failed says nothing.
        const json& clean = (*gpuRow(r, "n1/cuda:0"))["rules_out"];
        QCOMPARE(clean["rate_below"].get<double>(), cleanRateBound(3));
        QCOMPARE(clean["confidence"].get<double>(), 0.95);
        const auto target = std::find_if(r["targets"].begin(), r["targets"].end(),
                                         [](const json& t) { return t["target"] == "n1/cuda:0"; });
        QVERIFY(target != r["targets"].end());
        QCOMPARE((*target)["rules_out"], clean);
        json failing = nodeCampaign("n4", "3", {"d1"});
        failing["targets"][0]["failures"] = 2;
        failing["targets"][0]["verdict"] = "transient";
        FleetMerger f;
        QVERIFY(f.add("d.h5", failing).ok());
        QVERIFY((*gpuRow(f.result().value(), "n4/cuda:0"))["rules_out"].is_null());
        QVERIFY((*bad)["rules_out"].is_null());  // the outlier: its runs passed, the fleet's vote did not
        // The campaign part: one target per GPU, the outlier flagged in the op's stats.
        QCOMPARE(r["targets"].size(), size_t(6));
        QVERIFY(r["ops"][0]["targets"]["n2/cuda:1"].value("fleet_outlier", false));
        QVERIFY(!r["ops"][0]["targets"]["n2/cuda:0"].value("fleet_outlier", false));
        QCOMPARE(r["fleet"]["peer_votes"][0]["basis"].get<std::string>(), std::string("majority"));
    }

    void aSplitVoteNamesNobody()
    {
        FleetMerger m;
        QVERIFY(m.add("a.h5", nodeCampaign("n1", "0", {"d1", "d2"})).ok());
        const json r = m.result().value();
        QVERIFY(r["fleet"]["outliers"].empty());
        QCOMPARE(r["fleet"]["peer_votes"][0]["basis"].get<std::string>(), std::string("none"));
    }

    void targetsWithoutPeersDoNotVote()
    {
        json c = nodeCampaign("n1", "0", {"d1", "d1", "x"});
        for (json& t : c["targets"]) t.erase("peer_key");
        FleetMerger m;
        QVERIFY(m.add("a.h5", c).ok());
        const json r = m.result().value();
        QVERIFY(r["fleet"]["outliers"].empty());
        QVERIFY(r["fleet"]["peer_votes"].empty());
    }

    void filesWithoutDigestsSayTheyDoNotVote()
    {
        json c = nodeCampaign("old", "0", {"d1", "d1"});
        for (auto& [label, st] : c["ops"][0]["targets"].items()) st.erase("first_digest");
        FleetMerger m;
        QVERIFY(m.add("old.h5", c).ok());
        const json r = m.result().value();
        QVERIFY(r["fleet"]["peer_votes"].empty());
        QCOMPARE(r["warnings"].size(), size_t(1));
        QVERIFY(r["warnings"][0].get<std::string>().find("old.h5: 2 op result(s)") != std::string::npos);
    }

    void oneHostInSeveralTasksIsQualified()
    {
        FleetMerger m;
        QVERIFY(m.add("a.h5", nodeCampaign("vm", "0", {"d1"})).ok());
        QVERIFY(m.add("b.h5", nodeCampaign("vm", "1", {"d1"})).ok());
        const json r = m.result().value();
        QVERIFY(gpuRow(r, "vm#0/cuda:0"));
        QVERIFY(gpuRow(r, "vm#1/cuda:0"));
    }

    void missingAndFailedTasksAreListed()
    {
        FleetMerger m;
        m.expectTasks(4);
        m.taskFailed("2", "replay exited 2");
        QVERIFY(m.add("a.h5", nodeCampaign("n1", "0", {"d1"})).ok());
        QVERIFY(m.add("b.h5", nodeCampaign("n2", "1", {"d1"})).ok());
        const json r = m.result().value();
        const json& missing = r["fleet"]["missing_tasks"];
        QCOMPARE(missing.size(), size_t(2));
        QCOMPARE(missing[0]["task"].get<int>(), 2);
        QCOMPARE(missing[0]["reason"].get<std::string>(), std::string("replay exited 2"));
        QCOMPARE(missing[1]["task"].get<int>(), 3);
        QCOMPARE(missing[1]["reason"].get<std::string>(), std::string("no results file"));
        QCOMPARE(r["warnings"].size(), size_t(2));
    }

    void aBadDocumentIsRefusedNamingTheFile()
    {
        FleetMerger m;
        Status s = m.add("broken.h5", json{{"targets", 3}});
        QVERIFY(!s.ok());
        QVERIFY(s.message().find("broken.h5") != std::string::npos);
        json c = nodeCampaign("n1", "0", {"d1"});
        c["targets"][0]["target"] = 17;  // a number where a label belongs
        s = m.add("typed.h5", c);
        QVERIFY(!s.ok());
        QVERIFY(s.message().find("typed.h5") != std::string::npos);
        QCOMPARE(m.nodeCount(), size_t(0));
        QVERIFY(m.result().value()["fleet"]["gpus"].empty());
    }

    void theMergedReportIsACampaignResultsFile()
    {
        QTemporaryDir dir;
        FleetMerger m;
        QVERIFY(m.add("a.h5", nodeCampaign("n1", "0", {"d1", "d1"})).ok());
        QVERIFY(m.add("b.h5", nodeCampaign("n2", "1", {"d1", "zz"})).ok());
        const std::string path = dir.filePath("fleet.h5").toStdString();
        QVERIFY(m.write(path).ok());
        // Nothing but the merged file is written there (the scratch files are elsewhere).
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{"fleet.h5"});
        auto back = readCampaignResults(path);
        QVERIFY2(back.ok(), back.ok() ? "" : back.message().c_str());
        QCOMPARE((*back)["targets"].size(), size_t(4));
        QCOMPARE((*back)["fleet"]["outliers"][0]["gpu"].get<std::string>(), std::string("n2/cuda:1"));
        QCOMPARE(*back, m.result().value());
        QCOMPARE((*back)["targets"][3]["fleet_gpu"]["uuid"].get<std::string>(), std::string("GPU-n2-1"));
        // A merged file is not merged again as if it were a node.
        FleetMerger again;
        QVERIFY(!again.addFile(path).ok());
    }
    // Each file is read once: its rows are spooled beside the output and streamed by the second
    // pass, so the merge of files equals the merge of the same documents held in memory even
    // when the files are gone by then; the scratch directory goes with the merger.
    void filesAreReadOnceAndSpooled()
    {
        QTemporaryDir dir;
        std::vector<std::string> paths;
        FleetMerger inMemory;
        for (int n = 0; n < 5; ++n) {
            const json c = nodeCampaign("n" + std::to_string(n), std::to_string(n),
                                        {"d1", n == 3 ? "other" : "d1", "d1"});
            paths.push_back(dir.filePath(QString("node-%1.h5").arg(n)).toStdString());
            QVERIFY(writeCampaignResultsJson(paths.back(), c).ok());
            QVERIFY(inMemory.add(paths.back(), c).ok());
        }
        const auto scratchDirs = [&] {
            return QDir(dir.path())
                .entryList(QStringList{".faultline-merge-*"}, QDir::AllEntries | QDir::Hidden);
        };
        {
            FleetMerger fromFiles(dir.path().toStdString());
            fromFiles.expectTasks(6);
            inMemory.expectTasks(6);
            for (const std::string& p : paths) QVERIFY(fromFiles.addFile(p).ok());
            QCOMPARE(scratchDirs().size(), qsizetype(1));
            for (const std::string& p : paths) QVERIFY(QFile::remove(QString::fromStdString(p)));
            const json r = fromFiles.result().value();
            QCOMPARE(r, inMemory.result().value());
            QCOMPARE(r["fleet"]["outliers"].size(), size_t(1));
            QCOMPARE(r["fleet"]["outliers"][0]["gpu"].get<std::string>(), std::string("n3/cuda:1"));
            QCOMPARE(r["fleet"]["outliers"][0]["ops"][0]["agreeing"].get<int>(), 14);
            QCOMPARE(r["fleet"]["missing_tasks"][0]["task"].get<int>(), 5);
            const json summary = fromFiles.summary().value();
            QCOMPARE(summary["outliers"].size(), size_t(1));
            QCOMPARE(summary["unhealthy"].size(), size_t(1));
            const std::string out = dir.filePath("fleet.h5").toStdString();
            QVERIFY(fromFiles.write(out).ok());
            QCOMPARE(readCampaignResults(out).value(), r);
        }
        QCOMPARE(scratchDirs(), QStringList{});
    }

    // One node, one vote: the same file twice, a copy of it and a second file of one host and
    // task each count once, are listed with the file they repeat, and warn naming both.
    void aRepeatedNodeCountsOnce()
    {
        QTemporaryDir dir;
        const std::string a = dir.filePath("a.h5").toStdString(),
                          copy = dir.filePath("copy.h5").toStdString(),
                          again = dir.filePath("again.h5").toStdString();
        QVERIFY(writeCampaignResultsJson(a, nodeCampaign("n1", "0", {"d1", "d1"})).ok());
        QVERIFY(QFile::copy(QString::fromStdString(a), QString::fromStdString(copy)));
        QVERIFY(writeCampaignResultsJson(again, nodeCampaign("n1", "0", {"d2", "d2"})).ok());
        FleetMerger m;
        for (const std::string& f : {a, a, copy, again}) QVERIFY(m.addFile(f).ok());
        QCOMPARE(m.nodeCount(), size_t(1));
        const json r = m.result().value();
        QCOMPARE(r["fleet"]["node_count"].get<int>(), 1);
        QCOMPARE(r["fleet"]["gpu_count"].get<int>(), 2);
        const json& repeated = r["fleet"]["repeated_nodes"];
        QCOMPARE(repeated.size(), size_t(3));
        QCOMPARE(repeated[0]["reason"].get<std::string>(), std::string("the same file"));
        QCOMPARE(repeated[1]["reason"].get<std::string>(), std::string("identical content"));
        QCOMPARE(repeated[1]["file"].get<std::string>(), copy);
        QCOMPARE(repeated[2]["reason"].get<std::string>(), std::string("the same host and task"));
        for (const json& rep : repeated) QCOMPARE(rep["same_as"].get<std::string>(), a);
        QVERIFY(anyContains(r["warnings"], copy + " repeats " + a, "counted once"));
        QVERIFY(r["fleet"]["peer_votes"][0]["gpus"] == 2);
        QVERIFY(m.summary().value()["repeated_nodes"].size() == 3);
    }

    // With one healthy node and one faulty one, copies of the faulty node once outvoted the
    // healthy GPUs and named them; a copy counts once, so the faulty node is the outlier.
    void copiesOfAFaultyNodeDoNotOutvoteTheHealthy()
    {
        FleetMerger m;
        QVERIFY(m.add("n1.h5", nodeCampaign("n1", "0", {"d1", "d1"})).ok());
        QVERIFY(m.add("n3.h5", nodeCampaign("n3", "2", {"d1"})).ok());
        const json faulty = nodeCampaign("n2", "1", {"bad", "bad"});
        QVERIFY(m.add("n2.h5", faulty).ok());
        QVERIFY(m.add("n2-copy.h5", faulty).ok());
        QVERIFY(m.add("n2.h5", faulty).ok());
        const json r = m.result().value();
        QCOMPARE(outlierLabels(r), (std::vector<std::string>{"n2/cuda:0", "n2/cuda:1"}));
        QCOMPARE(r["fleet"]["outliers"][0]["ops"][0]["agreeing"].get<int>(), 3);
        QCOMPARE(r["fleet"]["outliers"][0]["ops"][0]["peers"].get<int>(), 5);
        QCOMPARE(r["fleet"]["repeated_nodes"].size(), size_t(2));
    }

    // A GPU (UUID) that two nodes list votes once: the second node's copy of it is judged but
    // does not vote again.
    void aGpuListedTwiceVotesOnce()
    {
        json first = nodeCampaign("n1", "0", {"bad"});
        json second = nodeCampaign("n1-alias", "1", {"bad"});
        second["node"]["inventory"] = first["node"]["inventory"];  // the same physical GPU
        FleetMerger m;
        QVERIFY(m.add("a.h5", first).ok());
        QVERIFY(m.add("b.h5", second).ok());
        QVERIFY(m.add("c.h5", nodeCampaign("n2", "2", {"d1"})).ok());
        QVERIFY(m.add("d.h5", nodeCampaign("n3", "3", {"d1"})).ok());
        const json r = m.result().value();
        QCOMPARE(r["fleet"]["peer_votes"][0]["gpus"].get<int>(), 3);
        QCOMPARE(outlierLabels(r), (std::vector<std::string>{"n1-alias/cuda:0", "n1/cuda:0"}));
        QVERIFY(anyContains(r["warnings"], "b.h5: 1 GPU(s) whose UUID"));
    }

    // Op indices mean something within one trace only: nodes that replayed another trace are
    // listed, never merged, never voting; the campaign's trace is the one most nodes replayed.
    void nodesOfAnotherTraceDoNotVote()
    {
        FleetMerger m;
        m.expectTasks(3);
        QVERIFY(m.add("n1.h5", withTrace(nodeCampaign("n1", "0", {"d1", "d1"}), "T1")).ok());
        QVERIFY(m.add("n2.h5", withTrace(nodeCampaign("n2", "1", {"d1", "x"}), "T1")).ok());
        QVERIFY(m.add("n3.h5", withTrace(nodeCampaign("n3", "2", {"x", "x", "x"}), "T2")).ok());
        const json r = m.result().value();
        QCOMPARE(outlierLabels(r), std::vector<std::string>{"n2/cuda:1"});
        QCOMPARE(r["trace_digest"].get<std::string>(), std::string("T1"));
        QCOMPARE(r["fleet"]["node_count"].get<int>(), 2);
        QCOMPARE(r["fleet"]["gpu_count"].get<int>(), 4);
        QCOMPARE(r["targets"].size(), size_t(4));
        QCOMPARE(r["fleet"]["peer_votes"][0]["gpus"].get<int>(), 4);
        const json& other = r["fleet"]["other_trace_nodes"];
        QCOMPARE(other.size(), size_t(1));
        QCOMPARE(other[0]["file"].get<std::string>(), std::string("n3.h5"));
        QCOMPARE(other[0]["trace_digest"].get<std::string>(), std::string("T2"));
        QVERIFY(anyContains(r["warnings"], "replayed another trace", "not merged"));
        QCOMPARE(r["fleet"]["missing_tasks"].size(), size_t(1));
        QVERIFY(r["fleet"]["missing_tasks"][0]["reason"].get<std::string>().find("another trace") !=
                std::string::npos);
        QVERIFY(!r["ops"][0]["targets"].contains("n3/cuda:0"));

        // Named, the other trace is the campaign's.
        FleetMerger named;
        for (const auto& [f, c] :
             {std::pair{"n1.h5", withTrace(nodeCampaign("n1", "0", {"d1", "d1"}), "T1")},
              std::pair{"n3.h5", withTrace(nodeCampaign("n3", "2", {"x", "x", "y"}), "T2")},
              std::pair{"n4.h5", withTrace(nodeCampaign("n4", "3", {"d1"}), "T1")}})
            QVERIFY(named.add(f, c).ok());
        named.nameTrace({"/shared/trace-2.h5", "T2"});
        const json r2 = named.result().value();
        QCOMPARE(r2["fleet"]["node_count"].get<int>(), 1);
        QCOMPARE(outlierLabels(r2), std::vector<std::string>{"n3/cuda:2"});
        QCOMPARE(r2["fleet"]["other_trace_nodes"].size(), size_t(2));
        // A named trace no node replayed is an error naming it.
        named.nameTrace({"/shared/nope.h5", "T9"});
        const auto none = named.result();
        QVERIFY(!none.ok());
        QVERIFY(none.message().find("/shared/nope.h5") != std::string::npos);
    }

    // Files without a digest (an older Faultline) join the campaign by the trace's path.
    void filesWithoutATraceDigestJoinByPath()
    {
        FleetMerger m;
        QVERIFY(m.add("n1.h5", withTrace(nodeCampaign("n1", "0", {"d1", "d1"}), "T1")).ok());
        QVERIFY(m.add("n2.h5", withTrace(nodeCampaign("n2", "1", {"d1", "d1"}), "T1")).ok());
        QVERIFY(m.add("old.h5", nodeCampaign("old", "2", {"d1", "x"})).ok());
        const json r = m.result().value();
        QCOMPARE(r["fleet"]["node_count"].get<int>(), 3);
        QCOMPARE(outlierLabels(r), std::vector<std::string>{"old/cuda:1"});
        QVERIFY(anyContains(r["warnings"], "by the trace's path alone"));
    }

    // Text read from node files is untrusted: control characters and bytes that are not UTF-8
    // are escaped where the merge reads them, with a warning; nothing in the report holds any.
    void controlCharactersInNodeTextAreEscaped()
    {
        json c = nodeCampaign("evil\n\x1b]0;owned\x07host", "0\r", {"d1", "d1"});
        c["targets"][0]["target"] = "cuda:0\x1b[2J";
        c["ops"][0]["targets"]["cuda:0\x1b[2J"] = c["ops"][0]["targets"]["cuda:0"];
        c["ops"][0]["targets"].erase("cuda:0");
        c["node"]["inventory"]["gpus"][1]["uuid"] = "GPU-\xff\xfe";
        c["ops"][0]["name"] = "mlp\tfc1";
        FleetMerger m;
        QVERIFY(m.add("evil.h5", c).ok());
        QVERIFY(m.add("n2.h5", nodeCampaign("n2", "1", {"d1"})).ok());
        const json r = m.result().value();
        QVERIFY2(allPrintable(r), r.dump().c_str());
        QVERIFY(gpuRow(r, "evil\\x0a\\x1b]0;owned\\x07host/cuda:0\\x1b[2J"));
        QVERIFY(anyContains(r["warnings"], "evil.h5: control characters", "host"));
        QVERIFY(anyContains(r["warnings"], "target label"));
        QVERIFY(anyContains(r["warnings"], "UUID"));
        QVERIFY(allPrintable(m.summary().value()));
    }

    // A verdict is one of replay's words, parsed where the node file is read: another word (or
    // one with control characters) refuses the node, naming the file and the field; none given
    // reads as `none`.
    void aVerdictThatIsNotOneIsRefused()
    {
        for (const char* word : {"sick", "healthy\nid", "HEALTHY"}) {
            json c = nodeCampaign("n1", "0", {"d1"});
            c["targets"][0]["verdict"] = word;
            FleetMerger m;
            const Status st = m.add("odd.h5", c);
            QVERIFY2(!st.ok(), word);
            QVERIFY2(st.message().rfind("odd.h5: targets[0].verdict is not a verdict", 0) == 0,
                     st.message().c_str());
            QVERIFY2(isPrintableText(st.message()), st.message().c_str());
        }
        json c = nodeCampaign("n1", "0", {"d1"});
        c["targets"][0].erase("verdict");
        FleetMerger m;
        QVERIFY(m.add("old.h5", c).ok());
        QCOMPARE((*gpuRow(m.result().value(), "n1/cuda:0"))["node_verdict"].get<std::string>(),
                 std::string("none"));
    }

    // A repeated problem is reported once with a count, not once per node.
    void repeatedWarningsAreCounted()
    {
        FleetMerger m;
        for (int n = 0; n < 100; ++n) {
            json c = nodeCampaign("n", "0", {"d1"});
            c.erase("node");
            c["seed"] = n;  // 100 different nodes (identical files would count once)
            QVERIFY(m.add("node-" + std::to_string(n) + ".h5", c).ok());
        }
        const json warnings = m.result().value()["warnings"];
        QVERIFY(warnings.size() < 70);
        QVERIFY2(warnings.back().get<std::string>().find("and 36 more warnings") != std::string::npos,
                 warnings.back().dump().c_str());
        QCOMPARE(m.result().value()["fleet"]["gpus"].size(), size_t(100));
    }
};

QTEST_GUILESS_MAIN(TestFleetMerge)
#include "test_fleet_merge.moc"
