#include "FleetMerge.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <set>
#include <sstream>

#include "../replay/CampaignResultsFile.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxWarnings = 64;  // past that, one line says how many more there were
constexpr size_t kMaxOpenOpFiles = 64;

uint64_t hashOf(const std::string& s)
{
    return std::hash<std::string>{}(s);
}

std::string joinOps(const std::vector<uint32_t>& ops)
{
    std::string s;
    for (size_t i = 0; i < ops.size() && i < 12; ++i) s += (i ? ", " : "") + std::to_string(ops[i]);
    if (ops.size() > 12) s += ", …";
    return s;
}

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
    if (!m_spool) {
        auto dir = ScratchDir::create(m_scratchParent.empty() ? fs::temp_directory_path()
                                                              : fs::path(m_scratchParent));
        if (!dir) return dir.error();
        m_spool = std::make_unique<Spool>(std::move(*dir));
    }
    const std::vector<std::uint8_t> record = nlohmann::json::to_cbor(nlohmann::json(*node));
    const uint64_t size = record.size();
    m_spool->out.write(reinterpret_cast<const char*>(&size), sizeof size);
    m_spool->out.write(reinterpret_cast<const char*>(record.data()), std::streamsize(size));
    m_spool->out.flush();
    if (!m_spool->out) return fileError(m_spool->path, "cannot write (disk full?)", ErrorCode::Io);
    tally(*node);
    return {};
}

void FleetMerger::warn(std::string warning)
{
    if (m_warnings.size() < kMaxWarnings)
        m_warnings.push_back(std::move(warning));
    else
        ++m_warningsLeftOut;
}

void FleetMerger::tally(const FleetNode& node)
{
    const std::string& path = node.file;
    if (!node.named) warn(path + ": no node identity (not written by a fleet job): named by its file");
    if (node.cancelled) warn(path + ": the campaign on " + node.host + " was cancelled");
    if (m_nodeCount == 0) {
        m_trace = node.trace;
        m_reps = node.reps;
        m_seed = node.seed;
    } else if (node.trace != m_trace) {
        warn(path + ": replayed " + node.trace + ", not " + m_trace);
    }
    if (node.unvoted)
        warn(path + ": " + std::to_string(node.unvoted) +
             " op result(s) of GPUs with peers carry no first_digest (written by an older Faultline): they "
             "do not vote");
    m_cancelled = m_cancelled || node.cancelled;
    for (const FleetOpInfo& op : node.ops) m_ops.try_emplace(op.index, OpInfo{op.op, op.name});
    for (const FleetGpu& gpu : node.gpus)
        for (const FleetOpCell& cell : gpu.ops) {
            if (!cell.votes(gpu.peerKey)) continue;
            auto [v, inserted] =
                m_voteIndex.emplace(std::make_pair(cell.opIndex, gpu.peerKey), uint32_t(m_votes.size()));
            if (inserted) m_votes.push_back(Vote{cell.opIndex, gpu.peerKey, {}, {}});
            Vote& vote = m_votes[v->second];
            const auto d = std::find(vote.digests.begin(), vote.digests.end(), cell.digest);
            if (d == vote.digests.end()) {
                vote.digests.push_back(cell.digest);
                vote.counts.push_back(1);
            } else {
                ++vote.counts[size_t(d - vote.digests.begin())];
            }
        }
    ++m_hostUses[hashOf(node.host)];
    if (!node.task.empty()) {
        const uint32_t uses = ++m_taskUses[hashOf(node.task)];
        if (uses > 1) m_repeatedTasks[node.task] = uses;
    }
    m_gpuCount += node.gpus.size();
    ++m_nodeCount;
}

std::vector<FleetMerger::Decision> FleetMerger::decide() const
{
    std::vector<Decision> decisions(m_votes.size());
    for (size_t i = 0; i < m_votes.size(); ++i) {
        const Vote& vote = m_votes[i];
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

std::pair<nlohmann::json, std::vector<std::string>> FleetMerger::missingTasks() const
{
    std::vector<std::string> warnings = m_warnings;
    if (m_warningsLeftOut)
        warnings.push_back("… and " + std::to_string(m_warningsLeftOut) +
                           " more warnings of the kinds above");
    for (const auto& [task, count] : m_repeatedTasks)
        warnings.push_back("task " + task + " has " + std::to_string(count) + " results files");
    const auto seen = [&](const std::string& task) { return m_taskUses.count(hashOf(task)) > 0; };
    nlohmann::json missing = nlohmann::json::array();
    if (m_expectedTasks)
        for (uint32_t t = 0; t < *m_expectedTasks; ++t) {
            const std::string task = std::to_string(t);
            if (seen(task)) continue;
            const auto f = m_failedTasks.find(task);
            const std::string reason = f != m_failedTasks.end() ? f->second : std::string("no results file");
            missing.push_back({{"task", t}, {"reason", reason}});
            warnings.push_back("task " + task + ": no results (" + reason + ")");
        }
    for (const auto& [task, reason] : m_failedTasks)
        if (seen(task)) warnings.push_back("task " + task + ": " + reason);
    return {missing, warnings};
}

nlohmann::json FleetMerger::header() const
{
    std::vector<uint64_t> opsSelected;
    for (const auto& [index, info] : m_ops) opsSelected.push_back(index);
    return {{"trace", m_trace},         {"reps", m_reps}, {"seed", m_seed}, {"ops_selected", opsSelected},
            {"cancelled", m_cancelled}, {"fleet", true}};
}

// The second pass: every node read again, its GPUs judged against the decided votes and written
// to the sections; then the sections joined into the report.
class FleetMerger::Pass {
public:
    Pass(const FleetMerger& m, const ScratchDir& dir)
        : m_m(m),
          m_dir(dir),
          m_decisions(m.decide()),
          m_targets(dir.file("targets")),
          m_nodes(dir.file("nodes")),
          m_gpus(dir.file("gpus")),
          m_outliers(dir.file("outliers"))
    {
    }

    Status node(size_t index, const FleetNode& node, CampaignResultsStream* results)
    {
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
                    if (d.majority >= 0 && int64_t(vote.second) != d.majority)
                        j.outlierOps.push_back(cell.opIndex);
                }
            }
            const nlohmann::json target = targetJson(node, gpu, j);
            m_targets.add(target.dump());
            if (results)
                if (Status st = results->addTarget(target); !st) return st;
            nlohmann::json row = gpuRow(node, gpu, j);
            if (row["verdict"] != "healthy") m_unhealthy.push_back(row);
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
        for (Section* s : {&m_targets, &m_nodes, &m_gpus, &m_outliers})
            if (Status st = s->close(); !st) return st;
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        const nlohmann::json h = m_m.header();
        auto [missing, warnings] = m_m.missingTasks();
        Status st;
        const auto copy = [&](const std::string& file) {
            if (st) st = copyFile(file, out);
        };
        out << "{\"trace\":" << h["trace"].dump() << ",\"reps\":" << m_m.m_reps << ",\"seed\":" << m_m.m_seed
            << ",\"ops_selected\":" << h["ops_selected"].dump() << ",\"targets\":[";
        copy(m_targets.path());
        out << "],\"ops\":[";
        bool firstOp = true;
        for (const auto& [index, info] : m_m.m_ops) {
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
        out << "],\"node_count\":" << m_m.m_nodeCount << ",\"gpu_count\":" << m_m.m_gpuCount
            << ",\"expected_tasks\":"
            << (m_m.m_expectedTasks ? std::to_string(*m_m.m_expectedTasks) : std::string("null"))
            << ",\"missing_tasks\":" << missing.dump() << ",\"gpus\":[";
        copy(m_gpus.path());
        out << "],\"peer_votes\":[";
        for (size_t i = 0; i < m_m.m_votes.size(); ++i) out << (i ? "," : "") << voteJson(i).dump();
        out << "],\"outliers\":[";
        copy(m_outliers.path());
        out << "]}}";
        out.close();
        if (st && !out) st = fileError(path, "cannot write (disk full?)", ErrorCode::Io);
        m_summary = {{"node_count", m_m.m_nodeCount}, {"gpu_count", m_m.m_gpuCount},
                     {"missing_tasks", missing},      {"unhealthy", m_unhealthy},
                     {"outliers", m_outlierRows},     {"warnings", warnings}};
        return st;
    }

    nlohmann::json summary() const { return m_summary; }

private:
    struct Judged {
        std::string label;
        std::vector<std::pair<int64_t, uint32_t>> votes;  // per cell: vote index (-1 none), digest index
        std::vector<uint32_t> outlierOps;
    };

    // host/target; a host that ran more than one task (one machine in several array tasks) is
    // host#task/target.
    std::string label(const FleetNode& node, size_t index, const FleetGpu& gpu) const
    {
        const auto uses = m_m.m_hostUses.find(hashOf(node.host));
        const bool qualify = uses != m_m.m_hostUses.end() && uses->second > 1;
        return node.host + (qualify ? "#" + (node.task.empty() ? std::to_string(index) : node.task) : "") +
               "/" + gpu.target;
    }

    // The cell's vote and digest in the tally of pass one (-1: it does not vote). The spool
    // holds exactly what was tallied, so both are found.
    std::pair<int64_t, uint32_t> resolve(const FleetGpu& gpu, const FleetOpCell& cell) const
    {
        if (!cell.votes(gpu.peerKey)) return {-1, 0};
        const uint32_t v = m_m.m_voteIndex.at({cell.opIndex, gpu.peerKey});
        const Vote& vote = m_m.m_votes[v];
        const auto d = std::find(vote.digests.begin(), vote.digests.end(), cell.digest);
        return {int64_t(v), uint32_t(d - vote.digests.begin())};
    }

    std::pair<std::string, std::string> verdictOf(const FleetGpu& g, const Judged& j,
                                                  const nlohmann::json& first) const
    {
        std::string verdict = g.verdict, explanation = g.explanation;
        if (j.outlierOps.empty()) return {verdict, explanation};
        if (verdict == "healthy" || verdict == "none" || verdict.empty()) verdict = "device-specific";
        explanation +=
            std::string(explanation.empty() ? "" : "; ") + "fleet outlier: bitwise different from " +
            std::to_string(first["agreeing"].get<uint32_t>()) + " of " +
            std::to_string(first["peers"].get<uint32_t>()) + " fleet peers on op(s) " + joinOps(j.outlierOps);
        return {verdict, explanation};
    }

    nlohmann::json outlierOpsJson(const FleetGpu& g, const Judged& j) const
    {
        nlohmann::json ops = nlohmann::json::array();
        for (size_t c = 0; c < g.ops.size(); ++c) {
            const auto [vote, digest] = j.votes[c];
            if (vote < 0) continue;
            const Decision& d = m_decisions[size_t(vote)];
            if (d.majority < 0 || int64_t(digest) == d.majority) continue;
            const Vote& v = m_m.m_votes[size_t(vote)];
            ops.push_back({{"op", g.ops[c].opIndex},
                           {"peers", d.total},
                           {"agreeing", d.agreeing},
                           {"digest", v.digests[digest]},
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

    std::pair<std::string, std::string> verdict(const FleetGpu& g, const Judged& j) const
    {
        if (j.outlierOps.empty()) return {g.verdict, g.explanation};
        return verdictOf(g, j, outlierOpsJson(g, j)[0]);
    }

    nlohmann::json targetJson(const FleetNode& n, const FleetGpu& g, const Judged& j) const
    {
        const auto [verdictText, explanation] = verdict(g, j);
        nlohmann::json t = {{"target", j.label},
                            {"description", g.description},
                            {"verdict", verdictText},
                            {"explanation", explanation},
                            {"runs", g.runs},
                            {"executed_runs", g.runs},
                            {"not_replayable_runs", 0},
                            {"failures", g.failures},
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
                          {"node_verdict", g.verdict},
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
                {"node_verdict", g.verdict},
                {"verdict", verdict(g, j).first},
                {"runs", g.runs},
                {"failures", g.failures},
                {"rate", g.rate},
                {"ci", {g.low, g.high}},
                {"failing_ops", g.failingOps},
                {"outlier_ops", j.outlierOps}};
    }

    nlohmann::json cellJson(const FleetOpCell& cell, std::pair<int64_t, uint32_t> vote) const
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
            s["first_digest"] = m_m.m_votes[size_t(vote.first)].digests[vote.second];
            if (d.majority >= 0 && int64_t(vote.second) != d.majority) s["fleet_outlier"] = true;
        }
        return s;
    }

    nlohmann::json voteJson(size_t i) const
    {
        const Vote& vote = m_m.m_votes[i];
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
    Status addCell(const std::string& label, const FleetOpCell& cell, std::pair<int64_t, uint32_t> vote)
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
    std::vector<Decision> m_decisions;
    Section m_targets, m_nodes, m_gpus, m_outliers;
    std::map<uint32_t, std::ofstream> m_opFiles;
    std::map<uint32_t, uint64_t> m_opCells;  // cells written per op
    nlohmann::json m_unhealthy = nlohmann::json::array(), m_outlierRows = nlohmann::json::array();
    nlohmann::json m_summary;
};

Result<nlohmann::json> FleetMerger::finish(const std::string& path, std::ostream* json) const
{
    // The sections go to a scratch directory of their own, beside the spool (or, with nothing
    // added, under the same parent).
    const fs::path parent = m_spool                   ? fs::path(m_spool->dir.file(""))
                            : m_scratchParent.empty() ? fs::temp_directory_path()
                                                      : fs::path(m_scratchParent);
    auto dir = ScratchDir::create(parent);
    if (!dir) return dir.error();
    std::optional<CampaignResultsStream> results;
    if (!path.empty()) {
        auto stream = CampaignResultsStream::create(path, header());
        if (!stream) return stream.error();
        results.emplace(std::move(*stream));
    }
    Pass pass(*this, *dir);
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
            if (Status st = pass.node(i, node, results ? &*results : nullptr); !st) return st.error();
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
