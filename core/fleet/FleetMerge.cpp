#include "FleetMerge.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

#include "../replay/CampaignResultsFile.h"

namespace faultline {
namespace {

std::string stringField(const nlohmann::json& j, const char* key)
{
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    return it->dump();
}

int64_t cudaIndex(const std::string& target)
{
    if (target.rfind("cuda:", 0) != 0) return -1;
    try {
        return std::stoll(target.substr(5));
    } catch (...) {
        return -1;
    }
}

std::string joinOps(const std::vector<uint32_t>& ops)
{
    std::string s;
    for (size_t i = 0; i < ops.size() && i < 12; ++i) s += (i ? ", " : "") + std::to_string(ops[i]);
    if (ops.size() > 12) s += ", …";
    return s;
}

}  // namespace

Status FleetMerger::addFile(const std::string& path)
{
    auto doc = readCampaignResults(path);
    if (!doc) return doc.error();
    return add(path, *doc);
}

Status FleetMerger::add(const std::string& path, const nlohmann::json& c)
{
    if (!c.is_object() || !c.contains("targets") || !c["targets"].is_array() || !c.contains("ops") ||
        !c["ops"].is_array())
        return fileError(path, "not a campaign report (no \"targets\" and \"ops\" arrays)");
    if (c.contains("fleet"))
        return fileError(path, "is a merged fleet campaign already; merge the nodes' files");
    const size_t gpusBefore = m_gpus.size();
    try {
        Node node;
        node.file = path;
        const nlohmann::json id = c.value("node", nlohmann::json::object());
        node.host = stringField(id, "host");
        node.task = stringField(id, "task");
        node.jobId = stringField(id, "job_id");
        node.scheduler = stringField(id, "scheduler");
        if (node.host.empty()) {
            node.host = path;
            m_warnings.push_back(path + ": no node identity (not written by a fleet job): named by its file");
        }
        node.cancelled = c.value("cancelled", false);
        node.targets = c["targets"].size();
        if (node.cancelled) m_warnings.push_back(path + ": the campaign on " + node.host + " was cancelled");
        const std::string trace = c.value("trace", std::string());
        if (m_nodes.empty()) {
            m_trace = trace;
            m_reps = c.value("reps", uint64_t(0));
            m_seed = c.value("seed", uint64_t(0));
        } else if (trace != m_trace) {
            m_warnings.push_back(path + ": replayed " + trace + ", not " + m_trace);
        }
        std::map<int64_t, const nlohmann::json*> inventory;
        const nlohmann::json gpusJson = id.contains("inventory")
                                            ? id["inventory"].value("gpus", nlohmann::json::array())
                                            : nlohmann::json::array();
        for (const nlohmann::json& g : gpusJson)
            if (g.is_object()) inventory[g.value("index", int64_t(-1))] = &g;

        const uint32_t nodeIndex = uint32_t(m_nodes.size());
        std::map<std::string, size_t> byLabel;
        for (const nlohmann::json& t : c["targets"]) {
            Gpu g;
            g.node = nodeIndex;
            g.target = t.at("target").get<std::string>();
            g.description = stringField(t, "description");
            g.verdict = stringField(t, "verdict");
            g.explanation = stringField(t, "explanation");
            g.peerKey = stringField(t, "peer_key");
            g.runs = t.value("runs", uint64_t(0));
            g.failures = t.value("failures", uint64_t(0));
            g.rate = t.value("rate", 0.0);
            const nlohmann::json ci = t.value("ci", nlohmann::json::array());
            if (ci.size() == 2) {
                g.low = ci[0].get<double>();
                g.high = ci[1].get<double>();
            }
            g.deterministic = t.value("determinism", nlohmann::json::object()).value("certified", false);
            g.failingOps = t.value("failing_ops", std::vector<uint64_t>{});
            g.index = cudaIndex(g.target);
            if (auto inv = inventory.find(g.index); inv != inventory.end() && g.index >= 0) {
                const nlohmann::json& d = *inv->second;
                g.uuid = stringField(d, "uuid");
                g.serial = stringField(d, "serial");
                g.name = stringField(d, "name");
                g.pciBusId = stringField(d, "pci_bus_id");
                if (g.peerKey.empty()) g.peerKey = stringField(d, "peer_key");
            }
            byLabel[g.target] = m_gpus.size();
            m_gpus.push_back(std::move(g));
        }
        uint64_t unvoted = 0;  // completed op runs of GPUs with peers but without a digest
        for (const nlohmann::json& o : c["ops"]) {
            const uint32_t opIndex = o.at("index").get<uint32_t>();
            OpInfo& info = m_ops[opIndex];
            if (info.op.empty()) {
                info.op = stringField(o, "op");
                info.name = stringField(o, "name");
            }
            const auto opTargets = o.find("targets");
            if (opTargets == o.end() || !opTargets->is_object()) continue;
            for (const auto& [label, s] : opTargets->items()) {
                const auto g = byLabel.find(label);
                if (g == byLabel.end()) continue;
                Gpu& gpu = m_gpus[g->second];
                OpCell cell;
                cell.opIndex = opIndex;
                cell.runs = s.value("runs", uint64_t(0));
                cell.failures = s.value("failures", uint64_t(0));
                cell.mismatches = s.value("mismatches", uint64_t(0));
                cell.hangs = s.value("hangs", uint64_t(0));
                cell.crashes = s.value("crashes", uint64_t(0));
                cell.errors = s.value("errors", uint64_t(0));
                cell.distinct = s.value("distinct_outputs", uint64_t(0));
                cell.maxUlp = s.value("max_ulp", uint64_t(0));
                cell.peerMismatches = s.value("peer_mismatches", uint64_t(0));
                cell.signature = stringField(s, "signature");
                cell.rate = s.value("rate", 0.0);
                const nlohmann::json ci = s.value("ci", nlohmann::json::array());
                if (ci.size() == 2) {
                    cell.low = ci[0].get<double>();
                    cell.high = ci[1].get<double>();
                }
                const std::string digest = stringField(s, "first_digest");
                if (!gpu.peerKey.empty() && digest.empty() &&
                    cell.runs > cell.hangs + cell.crashes + cell.errors)
                    ++unvoted;
                if (!gpu.peerKey.empty() && !digest.empty()) {
                    auto [v, inserted] =
                        m_voteIndex.emplace(std::make_pair(opIndex, gpu.peerKey), uint32_t(m_votes.size()));
                    if (inserted) m_votes.push_back(Vote{opIndex, gpu.peerKey, {}, {}});
                    Vote& vote = m_votes[v->second];
                    const auto d = std::find(vote.digests.begin(), vote.digests.end(), digest);
                    cell.vote = int32_t(v->second);
                    cell.digest = uint32_t(d - vote.digests.begin());
                    if (d == vote.digests.end()) {
                        vote.digests.push_back(digest);
                        vote.counts.push_back(0);
                    }
                    ++vote.counts[cell.digest];
                }
                gpu.ops.push_back(std::move(cell));
            }
        }
        if (unvoted)
            m_warnings.push_back(
                path + ": " + std::to_string(unvoted) +
                " op result(s) of GPUs with peers carry no first_digest (written by an older "
                "Faultline): they do not vote");
        m_nodes.push_back(std::move(node));
    } catch (const nlohmann::json::exception& e) {
        // Undo this file's rows: a half-read node would skew the votes.
        for (size_t i = gpusBefore; i < m_gpus.size(); ++i)
            for (const OpCell& cell : m_gpus[i].ops)
                if (cell.vote >= 0) --m_votes[size_t(cell.vote)].counts[cell.digest];
        m_gpus.resize(gpusBefore);
        return fileError(path, std::string("not a campaign report: ") + e.what());
    }
    return {};
}

std::vector<std::string> FleetMerger::labels() const
{
    // host/target; a host that ran more than one task (one machine in several array tasks) is
    // host#task/target.
    std::map<std::string, size_t> hostUses;
    for (const Node& n : m_nodes) ++hostUses[n.host];
    std::vector<std::string> out;
    out.reserve(m_gpus.size());
    for (const Gpu& g : m_gpus) {
        const Node& n = m_nodes[g.node];
        const bool qualify = hostUses[n.host] > 1;
        out.push_back(n.host + (qualify ? "#" + (n.task.empty() ? std::to_string(g.node) : n.task) : "") +
                      "/" + g.target);
    }
    return out;
}

FleetMerger::Verdicts FleetMerger::decide() const
{
    Verdicts v;
    v.labels = labels();
    v.votes.resize(m_votes.size());
    for (size_t i = 0; i < m_votes.size(); ++i) {
        const Vote& vote = m_votes[i];
        Decision& d = v.votes[i];
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
    return v;
}

std::vector<uint32_t> FleetMerger::outlierOps(const Verdicts& v, size_t gpu) const
{
    std::vector<uint32_t> ops;
    for (const OpCell& cell : m_gpus[gpu].ops)
        if (cell.vote >= 0) {
            const Decision& d = v.votes[size_t(cell.vote)];
            if (d.majority >= 0 && int64_t(cell.digest) != d.majority) ops.push_back(cell.opIndex);
        }
    return ops;
}

nlohmann::json FleetMerger::outlierJson(const Verdicts& v, size_t gpu) const
{
    const Gpu& g = m_gpus[gpu];
    const Node& n = m_nodes[g.node];
    nlohmann::json ops = nlohmann::json::array();
    for (const OpCell& cell : g.ops) {
        if (cell.vote < 0) continue;
        const Vote& vote = m_votes[size_t(cell.vote)];
        const Decision& d = v.votes[size_t(cell.vote)];
        if (d.majority < 0 || int64_t(cell.digest) == d.majority) continue;
        ops.push_back({{"op", cell.opIndex},
                       {"peers", d.total},
                       {"agreeing", d.agreeing},
                       {"digest", vote.digests[cell.digest]},
                       {"majority_digest", vote.digests[size_t(d.majority)]}});
    }
    return {{"gpu", v.labels[gpu]}, {"host", n.host},     {"task", n.task},        {"target", g.target},
            {"uuid", g.uuid},       {"serial", g.serial}, {"peer_key", g.peerKey}, {"ops", ops}};
}

std::pair<std::string, std::string> FleetMerger::verdictOf(const Verdicts& v, size_t gpu) const
{
    const Gpu& g = m_gpus[gpu];
    std::string verdict = g.verdict, explanation = g.explanation;
    const std::vector<uint32_t> ops = outlierOps(v, gpu);
    if (ops.empty()) return {verdict, explanation};
    const nlohmann::json first = outlierJson(v, gpu)["ops"][0];
    if (verdict == "healthy" || verdict == "none" || verdict.empty()) verdict = "device-specific";
    explanation += std::string(explanation.empty() ? "" : "; ") + "fleet outlier: bitwise different from " +
                   std::to_string(first["agreeing"].get<uint32_t>()) + " of " +
                   std::to_string(first["peers"].get<uint32_t>()) + " fleet peers on op(s) " + joinOps(ops);
    return {verdict, explanation};
}

nlohmann::json FleetMerger::targetJson(const Verdicts& v, size_t gpu) const
{
    const Gpu& g = m_gpus[gpu];
    const Node& n = m_nodes[g.node];
    const auto [verdict, explanation] = verdictOf(v, gpu);
    nlohmann::json t = {{"target", v.labels[gpu]},
                        {"description", g.description},
                        {"verdict", verdict},
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
                      {"outlier_ops", outlierOps(v, gpu)},
                      {"file", n.file}};
    return t;
}

nlohmann::json FleetMerger::gpuRow(const Verdicts& v, size_t gpu) const
{
    const Gpu& g = m_gpus[gpu];
    const Node& n = m_nodes[g.node];
    return {{"gpu", v.labels[gpu]},
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
            {"verdict", verdictOf(v, gpu).first},
            {"runs", g.runs},
            {"failures", g.failures},
            {"rate", g.rate},
            {"ci", {g.low, g.high}},
            {"failing_ops", g.failingOps},
            {"outlier_ops", outlierOps(v, gpu)}};
}

nlohmann::json FleetMerger::cellJson(const Verdicts& v, const OpCell& cell) const
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
    if (cell.vote >= 0) {
        const Decision& d = v.votes[size_t(cell.vote)];
        s["first_digest"] = m_votes[size_t(cell.vote)].digests[cell.digest];
        if (d.majority >= 0 && int64_t(cell.digest) != d.majority) s["fleet_outlier"] = true;
    }
    return s;
}

std::pair<nlohmann::json, std::vector<std::string>> FleetMerger::missingTasks() const
{
    std::set<std::string> seen;
    std::map<std::string, uint32_t> uses;
    for (const Node& n : m_nodes)
        if (!n.task.empty()) {
            seen.insert(n.task);
            ++uses[n.task];
        }
    std::vector<std::string> warnings = m_warnings;
    for (const auto& [task, count] : uses)
        if (count > 1)
            warnings.push_back("task " + task + " has " + std::to_string(count) + " results files");
    nlohmann::json missing = nlohmann::json::array();
    if (m_expectedTasks)
        for (uint32_t t = 0; t < *m_expectedTasks; ++t) {
            const std::string task = std::to_string(t);
            if (seen.count(task)) continue;
            const auto f = m_failedTasks.find(task);
            const std::string reason = f != m_failedTasks.end() ? f->second : std::string("no results file");
            missing.push_back({{"task", t}, {"reason", reason}});
            warnings.push_back("task " + task + ": no results (" + reason + ")");
        }
    for (const auto& [task, reason] : m_failedTasks)
        if (seen.count(task)) warnings.push_back("task " + task + ": " + reason);
    return {missing, warnings};
}

nlohmann::json FleetMerger::header() const
{
    bool cancelled = false;
    for (const Node& n : m_nodes) cancelled = cancelled || n.cancelled;
    std::vector<uint64_t> opsSelected;
    for (const auto& [index, info] : m_ops) opsSelected.push_back(index);
    return {{"trace", m_trace},       {"reps", m_reps}, {"seed", m_seed}, {"ops_selected", opsSelected},
            {"cancelled", cancelled}, {"fleet", true}};
}

nlohmann::json FleetMerger::summary() const
{
    const Verdicts v = decide();
    auto [missing, warnings] = missingTasks();
    nlohmann::json unhealthy = nlohmann::json::array(), outliers = nlohmann::json::array();
    for (size_t i = 0; i < m_gpus.size(); ++i) {
        if (verdictOf(v, i).first != "healthy") unhealthy.push_back(gpuRow(v, i));
        if (!outlierOps(v, i).empty()) outliers.push_back(outlierJson(v, i));
    }
    return {{"node_count", m_nodes.size()}, {"gpu_count", m_gpus.size()}, {"missing_tasks", missing},
            {"unhealthy", unhealthy},       {"outliers", outliers},       {"warnings", warnings}};
}

void FleetMerger::writeJson(std::ostream& out) const
{
    // Written piece by piece: the document may be far larger than what the merger holds.
    const Verdicts v = decide();
    const nlohmann::json h = header();
    auto [missing, warnings] = missingTasks();
    out << "{\"trace\":" << h["trace"].dump() << ",\"reps\":" << m_reps << ",\"seed\":" << m_seed
        << ",\"ops_selected\":" << h["ops_selected"].dump() << ",\"targets\":[";
    for (size_t i = 0; i < m_gpus.size(); ++i) out << (i ? "," : "") << targetJson(v, i).dump();
    out << "],\"ops\":[";
    bool firstOp = true;
    for (const auto& [index, info] : m_ops) {
        out << (firstOp ? "" : ",") << "{\"index\":" << index << ",\"op\":" << nlohmann::json(info.op).dump()
            << ",\"name\":" << nlohmann::json(info.name).dump() << ",\"targets\":{";
        firstOp = false;
        bool firstTarget = true;
        for (size_t i = 0; i < m_gpus.size(); ++i)
            for (const OpCell& cell : m_gpus[i].ops)
                if (cell.opIndex == index) {
                    out << (firstTarget ? "" : ",") << nlohmann::json(v.labels[i]).dump() << ":"
                        << cellJson(v, cell).dump();
                    firstTarget = false;
                }
        out << "}}";
    }
    out << "],\"runs\":[],\"warnings\":" << nlohmann::json(warnings).dump()
        << ",\"cancelled\":" << h["cancelled"].dump() << ",\"reference\":null,\"fleet\":{\"nodes\":[";
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        const Node& n = m_nodes[i];
        out << (i ? "," : "")
            << nlohmann::json{{"file", n.file},          {"host", n.host},           {"task", n.task},
                              {"job_id", n.jobId},       {"scheduler", n.scheduler}, {"targets", n.targets},
                              {"cancelled", n.cancelled}}
                   .dump();
    }
    out << "],\"node_count\":" << m_nodes.size() << ",\"gpu_count\":" << m_gpus.size()
        << ",\"expected_tasks\":"
        << (m_expectedTasks ? std::to_string(*m_expectedTasks) : std::string("null"))
        << ",\"missing_tasks\":" << missing.dump() << ",\"gpus\":[";
    for (size_t i = 0; i < m_gpus.size(); ++i) out << (i ? "," : "") << gpuRow(v, i).dump();
    out << "],\"peer_votes\":[";
    for (size_t i = 0; i < m_votes.size(); ++i) {
        const Vote& vote = m_votes[i];
        const Decision& d = v.votes[i];
        nlohmann::json j = {{"op", vote.opIndex},
                            {"peer_key", vote.peerKey},
                            {"gpus", d.total},
                            {"distinct_digests", vote.digests.size()},
                            {"basis", d.majority >= 0 ? "majority" : "none"},
                            {"agreeing", d.agreeing}};
        if (d.majority >= 0) j["digest"] = vote.digests[size_t(d.majority)];
        out << (i ? "," : "") << j.dump();
    }
    out << "],\"outliers\":[";
    bool firstOutlier = true;
    for (size_t i = 0; i < m_gpus.size(); ++i)
        if (!outlierOps(v, i).empty()) {
            out << (firstOutlier ? "" : ",") << outlierJson(v, i).dump();
            firstOutlier = false;
        }
    out << "]}}";
}

Status FleetMerger::write(const std::string& path) const
{
    // The JSON goes to a scratch file first, then into the results file in chunks: neither is
    // ever one tree (or one string) in memory.
    const std::string scratch = path + ".json.tmp";
    {
        std::ofstream out(scratch, std::ios::binary | std::ios::trunc);
        if (!out) return fileError(scratch, "cannot write", ErrorCode::Io);
        writeJson(out);
        out.flush();
        if (!out) return fileError(scratch, "cannot write (disk full?)", ErrorCode::Io);
    }
    const Verdicts v = decide();
    Status st = writeCampaignResultsStreamed(
        path, header(), m_gpus.size(), [&](size_t i) { return targetJson(v, i); }, scratch);
    std::error_code ec;
    std::filesystem::remove(scratch, ec);
    return st;
}

nlohmann::json FleetMerger::result() const
{
    std::ostringstream text;
    writeJson(text);
    return nlohmann::json::parse(text.str());
}

}  // namespace faultline
