// Ledger::addCampaign and Ledger::addBundle: campaigns (per target verdict and rate, per op rate
// with its interval), merged fleets and evidence bundles as rows.
#include <map>

#include "../evidence/MessageDigest.h"
#include "../replay/ReplayVocabulary.h"
#include "Ledger.h"
#include "LedgerJson.h"
#include "LedgerTime.h"

namespace faultline {
namespace {

// The GPU a campaign target ran on, where the report says: a merged fleet's `fleet_gpu`, else
// `cuda:N` in the node's inventory.
struct TargetGpu {
    std::string serial, uuid, host, busId, product;
};

TargetGpu targetGpu(const nlohmann::json& target, const std::map<int64_t, const nlohmann::json*>& inventory,
                    const std::string& host)
{
    TargetGpu g;
    g.host = host;
    if (const nlohmann::json& f = jsonField(target, "fleet_gpu"); f.is_object()) {
        g.serial = jsonText(f, "serial");
        g.uuid = jsonText(f, "uuid");
        g.busId = jsonText(f, "pci_bus_id");
        g.product = jsonText(f, "name");
        if (!jsonText(f, "host").empty()) g.host = jsonText(f, "host");
        return g;
    }
    const std::string label = jsonText(target, "target");
    if (label.rfind("cuda:", 0) != 0) return g;
    int64_t index = 0;
    size_t i = 5;
    for (; i < label.size() && i < 12 && label[i] >= '0' && label[i] <= '9'; ++i)
        index = index * 10 + (label[i] - '0');
    if (i == 5) return g;
    auto it = inventory.find(index);
    if (it == inventory.end()) return g;
    g.serial = jsonText(*it->second, "serial");
    g.uuid = jsonText(*it->second, "uuid");
    g.busId = jsonText(*it->second, "pci_bus_id");
    g.product = jsonText(*it->second, "name");
    return g;
}

double ciBound(const nlohmann::json& j, size_t i)
{
    const nlohmann::json& ci = jsonField(j, "ci");
    return ci.is_array() && ci.size() == 2 && ci[i].is_number() ? ci[i].get<double>() : 0.0;
}

}  // namespace

Result<LedgerAdded> Ledger::addCampaign(const LedgerCampaignInput& campaign, const LedgerSource& source)
{
    const nlohmann::json& report = campaign.report;
    const nlohmann::json& targets = jsonField(report, "targets");
    if (!targets.is_array() || targets.empty())
        return fileError(source.file, "not a campaign report: no \"targets\"");
    // Verdicts are parsed here, at the edge, before anything is written.
    std::vector<Verdict> verdicts;
    for (size_t i = 0; i < targets.size(); ++i) {
        const std::string word = jsonText(targets[i], "verdict");
        auto v = parseVerdict(word);
        if (!v || jsonText(targets[i], "target").empty())
            return fileError(source.file, "targets[" + std::to_string(i) + "]: " +
                                              (v ? std::string("no target label")
                                                 : "verdict '" + word + "' is not one this Faultline knows"));
        verdicts.push_back(*v);
    }
    const nlohmann::json& node = jsonField(report, "node");
    const std::string host = jsonText(node, "host").empty() ? source.host : jsonText(node, "host");
    std::map<int64_t, const nlohmann::json*> inventory;
    for (const nlohmann::json& g : jsonField(jsonField(node, "inventory"), "gpus"))
        if (auto index = jsonInteger(g, "index")) inventory.emplace(*index, &g);
    const nlohmann::json& fleet = jsonField(report, "fleet");
    const std::string now = isoUtcNow();
    const std::string digest = toHex(Sha256::of(report.dump()));

    LedgerTransaction tx(*m_engine);
    if (Status s = tx.begin(); !s) return s.error();
    LedgerAdded added;
    const nlohmann::json& seed = jsonField(report, "seed");
    auto campaignRow =
        runSql(*m_engine,
               "INSERT INTO campaigns (content_digest, trace, trace_digest, host, reps, seed, fleet, "
               "cancelled, at, file, "
               "recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT "
               "(content_digest) DO NOTHING "
               "RETURNING id",
               {digest, jsonText(report, "trace"), jsonText(report, "trace_digest"),
                fleet.is_object() ? std::string() : host, jsonInteger(report, "reps").value_or(0),
                seed.is_null() ? std::string() : seed.dump(), int64_t(fleet.is_object() ? 1 : 0),
                int64_t(jsonFlag(report, "cancelled") ? 1 : 0),
                campaign.at ? SqlValue(*campaign.at) : SqlValue(), source.file, now});
    if (!campaignRow) return campaignRow.error();
    if (campaignRow->empty()) {  // the ledger has this campaign already
        added.repeated = 1;
        if (Status s = commitAdd(tx); !s) return s.error();
        return added;
    }
    added.campaigns = 1;
    const int64_t campaignId = sqlInt(campaignRow->front().front());
    auto targetStmt = m_engine->prepare(
        "INSERT INTO campaign_targets (campaign_id, serial, uuid, host, bus_id, target, verdict, runs, "
        "failures, rate, "
        "ci_low, ci_high, explanation) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) "
        "RETURNING id");
    auto opStmt = m_engine->prepare(
        "INSERT INTO campaign_op_rates (campaign_target_id, op_index, op, name, runs, failures, rate, "
        "ci_low, "
        "ci_high) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)");
    if (!targetStmt) return targetStmt.error();
    if (!opStmt) return opStmt.error();
    const nlohmann::json& ops = jsonField(report, "ops");
    const std::string seen = campaign.at ? *campaign.at : now;
    for (size_t i = 0; i < targets.size(); ++i) {
        const nlohmann::json& t = targets[i];
        const std::string label = jsonText(t, "target");
        const TargetGpu gpu = targetGpu(t, inventory, host);
        auto row = (*targetStmt)
                       ->run({campaignId, gpu.serial, ledgerUuid(gpu.uuid), gpu.host, gpu.busId, label,
                              nameOf(verdicts[i]), jsonInteger(t, "runs").value_or(0),
                              jsonInteger(t, "failures").value_or(0), jsonNumber(t, "rate").value_or(0.0),
                              ciBound(t, 0), ciBound(t, 1), jsonText(t, "explanation")});
        if (!row) return row.error();
        added.targets += 1;
        const int64_t targetId = sqlInt(row->front().front());
        if (ops.is_array()) {
            for (const nlohmann::json& op : ops) {
                const nlohmann::json& s = jsonField(jsonField(op, "targets"), label.c_str());
                if (!s.is_object()) continue;
                auto r = (*opStmt)->run({targetId, jsonInteger(op, "index").value_or(0), jsonText(op, "op"),
                                         jsonText(op, "name"), jsonInteger(s, "runs").value_or(0),
                                         jsonInteger(s, "failures").value_or(0),
                                         jsonNumber(s, "rate").value_or(0.0), ciBound(s, 0), ciBound(s, 1)});
                if (!r) return r.error();
            }
        }
        GpuIdentity id;
        id.serial = gpu.serial;
        id.uuid = gpu.uuid;
        id.busId = gpu.busId;
        id.product = gpu.product;
        auto noted = noteIdentity(id, gpu.host, seen, source.file);
        if (!noted) return noted.error();
        if (*noted) added.identities += 1;
    }
    if (fleet.is_object()) {
        const nlohmann::json& outliers = jsonField(fleet, "outliers");
        auto r = runSql(
            *m_engine,
            "INSERT INTO fleet_merges (campaign_id, node_count, gpu_count, outliers) VALUES ($1, $2, $3, $4)",
            {campaignId, jsonInteger(fleet, "node_count").value_or(0),
             jsonInteger(fleet, "gpu_count").value_or(0),
             int64_t(outliers.is_array() ? outliers.size() : 0)});
        if (!r) return r.error();
        added.fleetMerges = 1;
    }
    if (Status s = commitAdd(tx); !s) return s.error();
    return added;
}

Result<LedgerAdded> Ledger::addBundle(const LedgerBundleInput& bundle, const LedgerSource& source)
{
    const nlohmann::json& c = bundle.caseJson;
    if (jsonText(c, "schema") != "faultline-evidence-case")
        return fileError(source.file,
                         "case.json is not a faultline evidence case (schema faultline-evidence-case)");
    const nlohmann::json& suspect = jsonField(c, "suspect");
    const nlohmann::json& theCase = jsonField(c, "case");
    std::string host = jsonText(jsonField(c, "host"), "hostname");
    if (host.empty()) host = source.host;
    LedgerTransaction tx(*m_engine);
    if (Status s = tx.begin(); !s) return s.error();
    LedgerAdded added;
    auto row = runSql(
        *m_engine,
        "INSERT INTO evidence_bundles (serial, uuid, host, bus_id, case_id, manifest_digest, at, intact, "
        "path, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT "
        "(manifest_digest) DO NOTHING RETURNING id",
        {jsonText(suspect, "serial"), ledgerUuid(jsonText(suspect, "uuid")), host,
         jsonText(suspect, "bus_id"), jsonText(theCase, "id"), bundle.manifestDigest,
         ledgerTime(jsonText(theCase, "created")) ? SqlValue(*ledgerTime(jsonText(theCase, "created")))
                                                  : SqlValue(),
         int64_t(bundle.intact ? 1 : 0), bundle.path, isoUtcNow()});
    if (!row) return row.error();
    (row->empty() ? added.repeated : added.bundles) += 1;
    if (Status s = commitAdd(tx); !s) return s.error();
    return added;
}

}  // namespace faultline
