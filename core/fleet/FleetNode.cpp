#include "FleetNode.h"

#include <map>
#include <optional>
#include <set>

#include "../Text.h"

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

void readInterval(const nlohmann::json& j, double& low, double& high)
{
    const nlohmann::json ci = j.value("ci", nlohmann::json::array());
    if (ci.size() == 2) {
        low = ci[0].get<double>();
        high = ci[1].get<double>();
    }
}

FleetGpu parseGpu(const nlohmann::json& t, const std::map<int64_t, const nlohmann::json*>& inventory)
{
    FleetGpu g;
    g.target = t.at("target").get<std::string>();
    g.description = stringField(t, "description");
    g.explanation = stringField(t, "explanation");
    g.peerKey = stringField(t, "peer_key");
    g.runs = t.value("runs", uint64_t(0));
    g.failures = t.value("failures", uint64_t(0));
    g.rate = t.value("rate", 0.0);
    readInterval(t, g.low, g.high);
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
    return g;
}

FleetOpCell parseCell(uint32_t opIndex, const nlohmann::json& s)
{
    FleetOpCell cell;
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
    readInterval(s, cell.low, cell.high);
    cell.digest = stringField(s, "first_digest");
    return cell;
}

// Replaces text that is not printable by its escaped form; true when it did.
bool escape(std::string& s)
{
    if (isPrintableText(s)) return false;
    s = printableText(s);
    return true;
}

// Escapes every text field of `node`, naming the kinds of field that needed it.
void escapeNode(FleetNode& node)
{
    std::set<std::string> kinds;
    const auto check = [&kinds](std::string& s, const char* kind) {
        if (escape(s)) kinds.insert(kind);
    };
    check(node.host, "host");
    check(node.task, "task");
    check(node.jobId, "job id");
    check(node.scheduler, "scheduler");
    check(node.trace, "trace");
    check(node.traceDigest, "trace digest");
    for (FleetGpu& g : node.gpus) {
        check(g.target, "target label");
        check(g.description, "description");
        check(g.explanation, "explanation");
        check(g.peerKey, "peer key");
        check(g.uuid, "UUID");
        check(g.serial, "serial");
        check(g.name, "GPU name");
        check(g.pciBusId, "PCI bus id");
        for (FleetOpCell& c : g.ops) {
            check(c.signature, "signature");
            check(c.digest, "digest");
        }
    }
    for (FleetOpInfo& op : node.ops) {
        check(op.op, "op");
        check(op.name, "op name");
    }
    node.escaped.assign(kinds.begin(), kinds.end());
}

}  // namespace

Result<FleetNode> parseFleetNode(const std::string& path, const nlohmann::json& c)
{
    if (!c.is_object() || !c.contains("targets") || !c["targets"].is_array() || !c.contains("ops") ||
        !c["ops"].is_array())
        return fileError(path, "not a campaign report (no \"targets\" and \"ops\" arrays)");
    if (c.contains("fleet"))
        return fileError(path, "is a merged fleet campaign already; merge the nodes' files");
    try {
        FleetNode node;
        node.file = path;
        const nlohmann::json id = c.value("node", nlohmann::json::object());
        node.host = stringField(id, "host");
        node.task = stringField(id, "task");
        node.jobId = stringField(id, "job_id");
        node.scheduler = stringField(id, "scheduler");
        if (node.host.empty()) {
            node.host = path;
            node.named = false;
        }
        node.cancelled = c.value("cancelled", false);
        node.trace = c.value("trace", std::string());
        node.traceDigest = stringField(c, "trace_digest");
        node.reps = c.value("reps", uint64_t(0));
        node.seed = c.value("seed", uint64_t(0));
        std::map<int64_t, const nlohmann::json*> inventory;
        const nlohmann::json gpusJson = id.contains("inventory")
                                            ? id["inventory"].value("gpus", nlohmann::json::array())
                                            : nlohmann::json::array();
        for (const nlohmann::json& g : gpusJson)
            if (g.is_object()) inventory[g.value("index", int64_t(-1))] = &g;

        std::map<std::string, size_t> byLabel;
        for (const nlohmann::json& t : c["targets"]) {
            node.gpus.push_back(parseGpu(t, inventory));
            // The node's verdict, parsed here once: one of replay's words, or none given.
            const std::string word = stringField(t, "verdict");
            const std::optional<Verdict> verdict = word.empty() ? Verdict::NoVerdict : parseVerdict(word);
            if (!verdict)
                return fileError(path, "targets[" + std::to_string(node.gpus.size() - 1) +
                                           "].verdict is not a verdict (healthy, transient, persistent, "
                                           "device-specific, none): \"" +
                                           printableText(word) + "\"");
            node.gpus.back().verdict = *verdict;
            byLabel[node.gpus.back().target] = node.gpus.size() - 1;
        }
        for (const nlohmann::json& o : c["ops"]) {
            const uint32_t opIndex = o.at("index").get<uint32_t>();
            node.ops.push_back({opIndex, stringField(o, "op"), stringField(o, "name")});
            const auto opTargets = o.find("targets");
            if (opTargets == o.end() || !opTargets->is_object()) continue;
            for (const auto& [label, s] : opTargets->items()) {
                const auto g = byLabel.find(label);
                if (g == byLabel.end()) continue;
                FleetGpu& gpu = node.gpus[g->second];
                FleetOpCell cell = parseCell(opIndex, s);
                if (!gpu.peerKey.empty() && cell.digest.empty() &&
                    cell.runs > cell.hangs + cell.crashes + cell.errors)
                    ++node.unvoted;
                gpu.ops.push_back(std::move(cell));
            }
        }
        escapeNode(node);
        return node;
    } catch (const nlohmann::json::exception& e) {
        return fileError(path, std::string("not a campaign report: ") + e.what());
    }
}

}  // namespace faultline
