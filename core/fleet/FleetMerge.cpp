#include "FleetMerge.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <set>
#include <sstream>

#include "../Text.h"
#include "../replay/CampaignResultsFile.h"
#include "../replay/RulesOut.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxWarnings = 64;  // past that, one line says how many more there were
constexpr size_t kMaxOpenOpFiles = 64;

// A private directory for the second pass's sections, removed with everything in it.
class ScratchDir {
public:
    static Result<ScratchDir> create(const fs::path& parent)
    {
        std::string pattern = (parent / ".faultline-merge-XXXXXX").string();
        if (!mkdtemp(pattern.data()))
            return fileError(parent.string(), "cannot create a scratch directory for the merge",
                             ErrorCode::Io);
        return ScratchDir(pattern);
    }
    ScratchDir(ScratchDir&& o) noexcept : m_path(std::exchange(o.m_path, {})) {}
    ScratchDir& operator=(ScratchDir&&) = delete;
    ~ScratchDir()
    {
        std::error_code ec;
        if (!m_path.empty()) fs::remove_all(m_path, ec);
    }
    std::string file(const std::string& name) const { return (fs::path(m_path) / name).string(); }

private:
    explicit ScratchDir(std::string path) : m_path(std::move(path)) {}
    std::string m_path;
};

// A JSON array (or object body) written element by element to a file.
class Section {
public:
    explicit Section(std::string path)
        : m_path(std::move(path)), m_out(m_path, std::ios::binary | std::ios::trunc)
    {
    }
    void add(const std::string& text)
    {
        m_out << (m_empty ? "" : ",") << text;
        m_empty = false;
    }
    Status close()
    {
        m_out.close();
        if (!m_out) return fileError(m_path, "cannot write (disk full?)", ErrorCode::Io);
        return {};
    }
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    std::ofstream m_out;
    bool m_empty = true;
};

Status copyFile(const std::string& path, std::ostream& out)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return fileError(path, "cannot read", ErrorCode::Io);
    std::vector<char> buffer(size_t(1) << 20);
    while (in) {
        in.read(buffer.data(), std::streamsize(buffer.size()));
        out.write(buffer.data(), in.gcount());
    }
    if (in.bad()) return fileError(path, "cannot read", ErrorCode::Io);
    return {};
}

}  // namespace

// The scratch directory and the spool: each node's rows as a length-prefixed CBOR record.
struct FleetMerger::Spool {
    ScratchDir dir;
    std::string path;
    std::ofstream out;
    explicit Spool(ScratchDir d)
        : dir(std::move(d)), path(dir.file("nodes.cbor")), out(path, std::ios::binary)
    {
    }
};

FleetMerger::FleetMerger(std::string scratchParent) : m_scratchParent(std::move(scratchParent)) {}
FleetMerger::~FleetMerger() = default;

Status FleetMerger::addFile(const std::string& path)
{
    auto doc = readCampaignResults(path);
    if (!doc) return doc.error();
    return add(path, *doc);
}

Status FleetMerger::add(const std::string& path, const nlohmann::json& campaign)
{
    auto node = parseFleetNode(path, campaign);
    if (!node) return node.error();
    if (auto repeat = m_repeated.check(*node, campaignContentDigest(campaign))) {
        warn(printableText(repeat->file) + " repeats " + printableText(repeat->sameAs) + " (" +
             repeat->reason + "): counted once");
        return {};
    }
    node->file = printableText(node->file);  // from here on only reported
    if (!m_spool) {
        auto dir = ScratchDir::create(m_scratchParent.empty() ? fs::temp_directory_path()
                                                              : fs::path(m_scratchParent));
        if (!dir) return dir.error();
        m_spool = std::make_unique<Spool>(std::move(*dir));
    }
    if (const size_t again = m_repeated.markGpusVotedBefore(*node))
        warn(printableText(path) + ": " + std::to_string(again) +
             " GPU(s) whose UUID an earlier node listed already: judged, but they do not vote again");
    const std::vector<std::uint8_t> record = nlohmann::json::to_cbor(nlohmann::json(*node));
    const uint64_t size = record.size();
    m_spool->out.write(reinterpret_cast<const char*>(&size), sizeof size);
    m_spool->out.write(reinterpret_cast<const char*>(record.data()), std::streamsize(size));
    m_spool->out.flush();
    if (!m_spool->out) return fileError(m_spool->path, "cannot write (disk full?)", ErrorCode::Io);
    const uint32_t group = m_groups.add(*node);
    m_nodeGroups.push_back(group);
    tally(*node, group);
    return {};
}

void FleetMerger::warn(std::string warning)
{
    if (m_warnings.size() < kMaxWarnings)
        m_warnings.push_back(std::move(warning));
    else
        ++m_warningsLeftOut;
}

void FleetMerger::tally(const FleetNode& node, uint32_t group)
{
    const std::string& path = node.file;  // printable already (add)
    if (!node.named) warn(path + ": no node identity (not written by a fleet job): named by its file");
    if (!node.escaped.empty()) {
        std::string kinds;
        for (const std::string& k : node.escaped) kinds += (kinds.empty() ? "" : ", ") + k;
        warn(path + ": control characters or bytes that are not UTF-8 in " + kinds +
             ": shown escaped (\\xHH)");
    }
    if (node.cancelled) warn(path + ": the campaign on " + node.host + " was cancelled");
    if (node.unvoted)
        warn(path + ": " + std::to_string(node.unvoted) +
             " op result(s) of GPUs with peers carry no first_digest (written by an older Faultline): they "
             "do not vote");
    for (const FleetGpu& gpu : node.gpus) {
        if (gpu.votedBefore) continue;
        for (const FleetOpCell& cell : gpu.ops) {
            if (!cell.votes(gpu.peerKey)) continue;
            auto [v, inserted] = m_voteIndex.emplace(std::make_tuple(group, cell.opIndex, gpu.peerKey),
                                                     uint32_t(m_votes.size()));
            if (inserted) m_votes.push_back(Vote{group, cell.opIndex, gpu.peerKey, {}, {}});
            Vote& vote = m_votes[v->second];
            const auto d = std::find(vote.digests.begin(), vote.digests.end(), cell.digest);
            if (d == vote.digests.end()) {
                vote.digests.push_back(cell.digest);
                vote.counts.push_back(1);
            } else {
                ++vote.counts[size_t(d - vote.digests.begin())];
            }
        }
    }
    ++m_hostUses[node.host];
    if (!node.task.empty()) {
        std::vector<uint32_t>& groups = m_taskGroups[node.task];
        groups.push_back(group);
        if (groups.size() > 1) m_repeatedTasks[node.task] = uint32_t(groups.size());
    }
    ++m_nodeCount;
}

std::pair<nlohmann::json, std::vector<std::string>> FleetMerger::missingTasks(
    const TraceGroups::Choice& choice) const
{
    std::vector<std::string> warnings = choice.warnings;
    warnings.insert(warnings.end(), m_warnings.begin(), m_warnings.end());
    if (m_warningsLeftOut)
        warnings.push_back("… and " + std::to_string(m_warningsLeftOut) +
                           " more warnings of the kinds above");
    for (const auto& [task, count] : m_repeatedTasks)
        warnings.push_back("task " + task + " has " + std::to_string(count) + " results files");
    // A task is merged when a node of the campaign's trace came from it.
    const auto merged = [&](const std::string& task) {
        const auto t = m_taskGroups.find(task);
        if (t == m_taskGroups.end()) return false;
        for (uint32_t g : t->second)
            if (choice.merged[g]) return true;
        return false;
    };
    nlohmann::json missing = nlohmann::json::array();
    if (m_expectedTasks)
        for (uint32_t t = 0; t < *m_expectedTasks; ++t) {
            const std::string task = std::to_string(t);
            if (merged(task)) continue;
            std::string reason = "no results file";
            if (const auto f = m_failedTasks.find(task); f != m_failedTasks.end())
                reason = f->second;
            else if (const auto other = m_taskGroups.find(task); other != m_taskGroups.end())
                reason = "replayed another trace: " + traceText(m_groups.groups()[other->second.front()]);
            missing.push_back({{"task", t}, {"reason", reason}});
            warnings.push_back("task " + task + ": no results (" + reason + ")");
        }
    for (const auto& [task, reason] : m_failedTasks)
        if (merged(task)) warnings.push_back("task " + task + ": " + reason);
    return {missing, warnings};
}

nlohmann::json FleetMerger::header(const TraceGroups::Choice& choice) const
{
    std::set<uint64_t> opsSelected;
    bool cancelled = false;
    for (size_t g = 0; g < m_groups.groups().size(); ++g)
        if (choice.merged[g]) {
            for (const auto& [index, info] : m_groups.groups()[g].ops) opsSelected.insert(index);
            cancelled = cancelled || m_groups.groups()[g].cancelled;
        }
    const TraceGroup empty;
    const TraceGroup& c = m_groups.groups().empty() ? empty : m_groups.groups()[choice.campaign];
    nlohmann::json h = {{"trace", c.trace},
                        {"reps", c.reps},
                        {"seed", c.seed},
                        {"ops_selected", std::vector<uint64_t>(opsSelected.begin(), opsSelected.end())},
                        {"cancelled", cancelled},
                        {"fleet", true}};
    if (!c.digest.empty()) h["trace_digest"] = c.digest;
    return h;
}

// The second pass: every node read again, its GPUs judged against the decided votes and written
// to the sections; then the sections joined into the report. Only the nodes of the campaign's
// trace (TraceGroups::Choice::merged) are merged; their groups' votes are combined per op and
// peer key, and the others' nodes listed in fleet.other_trace_nodes.
class FleetMerger::Pass {
public:
    Pass(const FleetMerger& m, const ScratchDir& dir, const TraceGroups::Choice& choice)
        : m_m(m),
          m_dir(dir),
          m_choice(choice),
          m_targets(dir.file("targets")),
          m_nodes(dir.file("nodes")),
          m_gpus(dir.file("gpus")),
          m_outliers(dir.file("outliers")),
          m_otherTrace(dir.file("other-trace"))
    {
        for (const Vote& v : m.m_votes) {
            if (!choice.merged[v.group]) continue;
            auto [it, inserted] =
                m_voteIndex.emplace(std::make_pair(v.opIndex, v.peerKey), uint32_t(m_votes.size()));
            if (inserted) m_votes.push_back(Vote{choice.campaign, v.opIndex, v.peerKey, {}, {}});
            Vote& combined = m_votes[it->second];
            for (size_t k = 0; k < v.digests.size(); ++k) {
                const auto d = std::find(combined.digests.begin(), combined.digests.end(), v.digests[k]);
                if (d == combined.digests.end()) {
                    combined.digests.push_back(v.digests[k]);
                    combined.counts.push_back(v.counts[k]);
                } else {
                    combined.counts[size_t(d - combined.digests.begin())] += v.counts[k];
                }
            }
        }
        m_decisions = decide(m_votes);
    }

    Status node(size_t index, const FleetNode& node, uint32_t group, CampaignResultsStream* results)
    {
        if (!m_choice.merged[group]) {
            m_otherTrace.add(nlohmann::json{{"file", node.file},
                                            {"host", node.host},
                                            {"task", node.task},
                                            {"trace", node.trace},
                                            {"trace_digest", node.traceDigest},
                                            {"targets", node.gpus.size()}}
                                 .dump());
            m_otherTraceRows.push_back({{"file", node.file}, {"host", node.host}, {"task", node.task}});
            return {};
        }
        ++m_nodeCount;
        m_gpuCount += node.gpus.size();
        m_nodes.add(nlohmann::json{{"file", node.file},
                                   {"host", node.host},
                                   {"task", node.task},
                                   {"job_id", node.jobId},
                                   {"scheduler", node.scheduler},
                                   {"targets", node.gpus.size()},
                                   {"cancelled", node.cancelled}}
                        .dump());
        for (const FleetGpu& gpu : node.gpus) {
            Judged j;
            j.label = label(node, index, gpu);
            for (const FleetOpCell& cell : gpu.ops) {
                const auto vote = resolve(gpu, cell);
                j.votes.push_back(vote);
                if (vote.first >= 0) {
                    const Decision& d = m_decisions[size_t(vote.first)];
                    if (d.majority >= 0 && vote.second != d.majority) j.outlierOps.push_back(cell.opIndex);
                }
            }
            const nlohmann::json target = targetJson(node, gpu, j);
            m_targets.add(target.dump());
            if (results)
                if (Status st = results->addTarget(target); !st) return st;
            nlohmann::json row = gpuRow(node, gpu, j);
            if (verdict(gpu, j).first != Verdict::Healthy) m_unhealthy.push_back(row);
            m_gpus.add(row.dump());
            if (!j.outlierOps.empty()) {
                nlohmann::json o = outlierJson(node, gpu, j);
                m_outliers.add(o.dump());
                m_outlierRows.push_back(std::move(o));
            }
            for (size_t c = 0; c < gpu.ops.size(); ++c)
                if (Status st = addCell(j.label, gpu.ops[c], j.votes[c]); !st) return st;
        }
        return {};
    }

    // Joins the sections into the report's JSON text at `path`.
    Status join(const std::string& path)
    {
        if (Status st = closeOpFiles(); !st) return st;
        for (Section* s : {&m_targets, &m_nodes, &m_gpus, &m_outliers, &m_otherTrace})
            if (Status st = s->close(); !st) return st;
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        const nlohmann::json h = m_m.header(m_choice);
        auto [missing, warnings] = m_m.missingTasks(m_choice);
        Status st;
        const auto copy = [&](const std::string& file) {
            if (st) st = copyFile(file, out);
        };
        // The ops of the merged groups, by index (the first group's name of each).
        std::map<uint32_t, FleetOpInfo> ops;
        for (size_t g = 0; g < m_m.m_groups.groups().size(); ++g)
            if (m_choice.merged[g])
                for (const auto& [index, info] : m_m.m_groups.groups()[g].ops) ops.try_emplace(index, info);
        nlohmann::json repeated = nlohmann::json::array();
        for (const RepeatedNode& r : m_m.m_repeated.repeats()) repeated.push_back(r.toJson());
        out << "{\"trace\":" << h["trace"].dump();
        if (h.contains("trace_digest")) out << ",\"trace_digest\":" << h["trace_digest"].dump();
        out << ",\"reps\":" << h["reps"].dump() << ",\"seed\":" << h["seed"].dump()
            << ",\"ops_selected\":" << h["ops_selected"].dump() << ",\"targets\":[";
        copy(m_targets.path());
        out << "],\"ops\":[";
        bool firstOp = true;
        for (const auto& [index, info] : ops) {
            out << (firstOp ? "" : ",") << "{\"index\":" << index
                << ",\"op\":" << nlohmann::json(info.op).dump()
                << ",\"name\":" << nlohmann::json(info.name).dump() << ",\"targets\":{";
            firstOp = false;
            if (m_opCells.count(index)) copy(opFile(index));
            out << "}}";
        }
        out << "],\"runs\":[],\"warnings\":" << nlohmann::json(warnings).dump()
            << ",\"cancelled\":" << h["cancelled"].dump() << ",\"reference\":null,\"fleet\":{\"nodes\":[";
        copy(m_nodes.path());
        out << "],\"node_count\":" << m_nodeCount << ",\"gpu_count\":" << m_gpuCount << ",\"expected_tasks\":"
            << (m_m.m_expectedTasks ? std::to_string(*m_m.m_expectedTasks) : std::string("null"))
            << ",\"missing_tasks\":" << missing.dump() << ",\"repeated_nodes\":" << repeated.dump()
            << ",\"other_trace_nodes\":[";
        copy(m_otherTrace.path());
        out << "],\"gpus\":[";
        copy(m_gpus.path());
        out << "],\"peer_votes\":[";
        for (size_t i = 0; i < m_votes.size(); ++i) out << (i ? "," : "") << voteJson(i).dump();
        out << "],\"outliers\":[";
        copy(m_outliers.path());
        out << "]}}";
        out.close();
        if (st && !out) st = fileError(path, "cannot write (disk full?)", ErrorCode::Io);
        m_summary = {{"node_count", m_nodeCount},
                     {"gpu_count", m_gpuCount},
                     {"missing_tasks", missing},
                     {"unhealthy", m_unhealthy},
                     {"outliers", m_outlierRows},
                     {"repeated_nodes", repeated},
                     {"other_trace_nodes", m_otherTraceRows},
                     {"warnings", warnings}};
        return st;
    }

    nlohmann::json summary() const { return m_summary; }

private:
    struct Decision {
        int64_t majority = -1;  // the digest index a strict majority produced, or -1
        uint32_t total = 0, agreeing = 0;
    };
    struct Judged {
        std::string label;
        // per cell: vote index (-1 none), digest index in it (-1: not among the votes, a GPU
        // that voted before)
        std::vector<std::pair<int64_t, int64_t>> votes;
        std::vector<uint32_t> outlierOps;
    };

    static std::vector<Decision> decide(const std::vector<Vote>& votes)
    {
        std::vector<Decision> decisions(votes.size());
        for (size_t i = 0; i < votes.size(); ++i) {
            const Vote& vote = votes[i];
            Decision& d = decisions[i];
            uint32_t best = 0;
            for (size_t k = 0; k < vote.counts.size(); ++k) {
                d.total += vote.counts[k];
                if (vote.counts[k] > best) {
                    best = vote.counts[k];
                    d.majority = int64_t(k);
                }
            }
            // A strict majority of at least two GPUs decides; anything else names nobody.
            if (d.total < 2 || 2 * best <= d.total) d.majority = -1;
            d.agreeing = d.majority >= 0 ? best : 0;
        }
        return decisions;
    }

    // host/target; a host that ran more than one task (one machine in several array tasks) is
    // host#task/target.
    std::string label(const FleetNode& node, size_t index, const FleetGpu& gpu) const
    {
        const auto uses = m_m.m_hostUses.find(node.host);
        const bool qualify = uses != m_m.m_hostUses.end() && uses->second > 1;
        return node.host + (qualify ? "#" + (node.task.empty() ? std::to_string(index) : node.task) : "") +
               "/" + gpu.target;
    }

    // The cell's vote and its digest's index there (-1: it does not vote). A GPU that voted
    // before is judged against the vote its digest is not counted in.
    std::pair<int64_t, int64_t> resolve(const FleetGpu& gpu, const FleetOpCell& cell) const
    {
        if (!cell.votes(gpu.peerKey)) return {-1, -1};
        const auto v = m_voteIndex.find({cell.opIndex, gpu.peerKey});
        if (v == m_voteIndex.end()) return {-1, -1};
        const Vote& vote = m_votes[v->second];
        const auto d = std::find(vote.digests.begin(), vote.digests.end(), cell.digest);
        return {int64_t(v->second), d == vote.digests.end() ? -1 : int64_t(d - vote.digests.begin())};
    }

    std::pair<Verdict, std::string> verdictOf(const FleetGpu& g, const Judged& j,
                                              const nlohmann::json& first) const
    {
        Verdict verdict = g.verdict;
        std::string explanation = g.explanation;
        if (j.outlierOps.empty()) return {verdict, explanation};
        if (verdict == Verdict::Healthy || verdict == Verdict::NoVerdict) verdict = Verdict::DeviceSpecific;
        explanation += std::string(explanation.empty() ? "" : "; ") +
                       "fleet outlier: bitwise different from " +
                       std::to_string(first["agreeing"].get<uint32_t>()) + " of " +
                       std::to_string(first["peers"].get<uint32_t>()) + " fleet peers on op(s) " +
                       opListText(j.outlierOps);
        return {verdict, explanation};
    }

    nlohmann::json outlierOpsJson(const FleetGpu& g, const Judged& j) const
    {
        nlohmann::json ops = nlohmann::json::array();
        for (size_t c = 0; c < g.ops.size(); ++c) {
            const auto [vote, digest] = j.votes[c];
            if (vote < 0) continue;
            const Decision& d = m_decisions[size_t(vote)];
            if (d.majority < 0 || digest == d.majority) continue;
            const Vote& v = m_votes[size_t(vote)];
            ops.push_back({{"op", g.ops[c].opIndex},
                           {"peers", d.total},
                           {"agreeing", d.agreeing},
                           {"digest", g.ops[c].digest},
                           {"majority_digest", v.digests[size_t(d.majority)]}});
        }
        return ops;
    }

    nlohmann::json outlierJson(const FleetNode& n, const FleetGpu& g, const Judged& j) const
    {
        return {
            {"gpu", j.label}, {"host", n.host},     {"task", n.task},        {"target", g.target},
            {"uuid", g.uuid}, {"serial", g.serial}, {"peer_key", g.peerKey}, {"ops", outlierOpsJson(g, j)}};
    }

    std::pair<Verdict, std::string> verdict(const FleetGpu& g, const Judged& j) const
    {
        if (j.outlierOps.empty()) return {g.verdict, g.explanation};
        return verdictOf(g, j, outlierOpsJson(g, j)[0]);
    }

    // What a GPU the fleet judged healthy rules out (null for any other verdict: a fleet outlier
    // whose own runs passed rules nothing out).
    static nlohmann::json rulesOut(Verdict judged, const FleetGpu& g)
    {
        return judged == Verdict::Healthy ? rulesOutJson(g.failures, g.runs) : nlohmann::json();
    }

    nlohmann::json targetJson(const FleetNode& n, const FleetGpu& g, const Judged& j) const
    {
        const auto [judged, explanation] = verdict(g, j);
        nlohmann::json t = {{"target", j.label},
                            {"description", g.description},
                            {"verdict", nameOf(judged)},
                            {"explanation", explanation},
                            {"runs", g.runs},
                            {"executed_runs", g.runs},
                            {"not_replayable_runs", 0},
                            {"failures", g.failures},
                            {"rules_out", rulesOut(judged, g)},
                            {"failing_ops", g.failingOps},
                            {"reproducing_ops", nlohmann::json::array()},
                            {"determinism", {{"expected", true}, {"certified", g.deterministic}}},
                            {"rate", g.rate},
                            {"ci", {g.low, g.high}}};
        if (!g.peerKey.empty()) t["peer_key"] = g.peerKey;
        // Who it is, for the fleet table (also in fleet.gpus).
        t["fleet_gpu"] = {{"host", n.host},
                          {"task", n.task},
                          {"target", g.target},
                          {"index", g.index},
                          {"uuid", g.uuid},
                          {"serial", g.serial},
                          {"name", g.name},
                          {"pci_bus_id", g.pciBusId},
                          {"node_verdict", nameOf(g.verdict)},
                          {"outlier_ops", j.outlierOps},
                          {"file", n.file}};
        return t;
    }

    nlohmann::json gpuRow(const FleetNode& n, const FleetGpu& g, const Judged& j) const
    {
        return {{"gpu", j.label},
                {"host", n.host},
                {"task", n.task},
                {"job_id", n.jobId},
                {"file", n.file},
                {"target", g.target},
                {"index", g.index},
                {"uuid", g.uuid},
                {"serial", g.serial},
                {"name", g.name},
                {"pci_bus_id", g.pciBusId},
                {"peer_key", g.peerKey},
                {"node_verdict", nameOf(g.verdict)},
                {"verdict", nameOf(verdict(g, j).first)},
                {"runs", g.runs},
                {"failures", g.failures},
                {"rules_out", rulesOut(verdict(g, j).first, g)},
                {"rate", g.rate},
                {"ci", {g.low, g.high}},
                {"failing_ops", g.failingOps},
                {"outlier_ops", j.outlierOps}};
    }

    nlohmann::json cellJson(const FleetOpCell& cell, std::pair<int64_t, int64_t> vote) const
    {
        nlohmann::json s = {{"runs", cell.runs},
                            {"failures", cell.failures},
                            {"mismatches", cell.mismatches},
                            {"hangs", cell.hangs},
                            {"crashes", cell.crashes},
                            {"errors", cell.errors},
                            {"distinct_outputs", cell.distinct},
                            {"max_ulp", cell.maxUlp},
                            {"signature", cell.signature},
                            {"peer_mismatches", cell.peerMismatches},
                            {"rate", cell.rate},
                            {"ci", {cell.low, cell.high}}};
        if (vote.first >= 0) {
            const Decision& d = m_decisions[size_t(vote.first)];
            s["first_digest"] = cell.digest;
            if (d.majority >= 0 && vote.second != d.majority) s["fleet_outlier"] = true;
        }
        return s;
    }

    nlohmann::json voteJson(size_t i) const
    {
        const Vote& vote = m_votes[i];
        const Decision& d = m_decisions[i];
        nlohmann::json j = {{"op", vote.opIndex},
                            {"peer_key", vote.peerKey},
                            {"gpus", d.total},
                            {"distinct_digests", vote.digests.size()},
                            {"basis", d.majority >= 0 ? "majority" : "none"},
                            {"agreeing", d.agreeing}};
        if (d.majority >= 0) j["digest"] = vote.digests[size_t(d.majority)];
        return j;
    }

    std::string opFile(uint32_t op) const { return m_dir.file("op-" + std::to_string(op)); }

    // One "label": cell entry of op `cell.opIndex`'s targets object. Each op has its own section
    // file; at most kMaxOpenOpFiles stay open (the others are reopened to append).
    Status addCell(const std::string& label, const FleetOpCell& cell, std::pair<int64_t, int64_t> vote)
    {
        auto f = m_opFiles.find(cell.opIndex);
        if (f == m_opFiles.end()) {
            if (m_opFiles.size() >= kMaxOpenOpFiles)
                if (Status st = closeOpFiles(); !st) return st;
            const bool started = m_opCells.count(cell.opIndex) > 0;
            f = m_opFiles
                    .emplace(cell.opIndex,
                             std::ofstream(opFile(cell.opIndex),
                                           std::ios::binary | (started ? std::ios::app : std::ios::trunc)))
                    .first;
        }
        std::ofstream& out = f->second;
        out << (m_opCells[cell.opIndex]++ ? "," : "") << nlohmann::json(label).dump() << ":"
            << cellJson(cell, vote).dump();
        if (!out) return fileError(opFile(cell.opIndex), "cannot write (disk full?)", ErrorCode::Io);
        return {};
    }

    Status closeOpFiles()
    {
        Status st;
        for (auto& [op, out] : m_opFiles) {
            out.close();
            if (!out && st) st = fileError(opFile(op), "cannot write (disk full?)", ErrorCode::Io);
        }
        m_opFiles.clear();
        return st;
    }

    const FleetMerger& m_m;
    const ScratchDir& m_dir;
    const TraceGroups::Choice& m_choice;
    std::vector<Vote> m_votes;  // of the merged groups, combined per op and peer key
    std::map<std::pair<uint32_t, std::string>, uint32_t> m_voteIndex;
    std::vector<Decision> m_decisions;
    Section m_targets, m_nodes, m_gpus, m_outliers, m_otherTrace;
    std::map<uint32_t, std::ofstream> m_opFiles;
    std::map<uint32_t, uint64_t> m_opCells;  // cells written per op
    size_t m_nodeCount = 0, m_gpuCount = 0;
    nlohmann::json m_unhealthy = nlohmann::json::array(), m_outlierRows = nlohmann::json::array();
    nlohmann::json m_otherTraceRows = nlohmann::json::array();
    nlohmann::json m_summary;
};

Result<nlohmann::json> FleetMerger::finish(const std::string& path, std::ostream* json) const
{
    // The sections go to a scratch directory of their own, beside the spool (or, with nothing
    // added, under the same parent).
    const fs::path parent = m_spool                   ? fs::path(m_spool->dir.file(""))
                            : m_scratchParent.empty() ? fs::temp_directory_path()
                                                      : fs::path(m_scratchParent);
    auto choice = m_groups.choose(m_namedTrace);
    if (!choice) return choice.error();
    auto dir = ScratchDir::create(parent);
    if (!dir) return dir.error();
    std::optional<CampaignResultsStream> results;
    if (!path.empty()) {
        auto stream = CampaignResultsStream::create(path, header(*choice));
        if (!stream) return stream.error();
        results.emplace(std::move(*stream));
    }
    Pass pass(*this, *dir, *choice);
    if (m_spool) {
        std::ifstream in(m_spool->path, std::ios::binary);
        std::vector<std::uint8_t> record;
        for (size_t i = 0; i < m_nodeCount; ++i) {
            uint64_t size = 0;
            in.read(reinterpret_cast<char*>(&size), sizeof size);
            if (in) {
                record.resize(size_t(size));
                in.read(reinterpret_cast<char*>(record.data()), std::streamsize(size));
            }
            if (!in) return fileError(m_spool->path, "cannot read the spooled rows back", ErrorCode::Io);
            FleetNode node;
            try {
                node = nlohmann::json::from_cbor(record).get<FleetNode>();
            } catch (const nlohmann::json::exception& e) {
                return fileError(m_spool->path, std::string("spooled rows are damaged: ") + e.what(),
                                 ErrorCode::Io);
            }
            if (Status st = pass.node(i, node, m_nodeGroups[i], results ? &*results : nullptr); !st)
                return st.error();
        }
    }
    const std::string report = dir->file("report.json");
    if (Status st = pass.join(report); !st) return st.error();
    if (results)
        if (Status st = results->finish(report); !st) return st.error();
    if (json)
        if (Status st = copyFile(report, *json); !st) return st.error();
    return pass.summary();
}

Result<nlohmann::json> FleetMerger::result() const
{
    std::ostringstream text;
    if (Status st = writeJson(text); !st) return st.error();
    return nlohmann::json::parse(text.str());
}

}  // namespace faultline
