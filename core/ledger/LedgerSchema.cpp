#include "LedgerSchema.h"

namespace faultline {
namespace {

// Every table says which GPU a row is about with the same four columns: serial and uuid (''
// where the source did not name them), host and bus_id (where it was seen). Times are UTC ISO
// 8601 text ('2026-12-01T10:00:00Z'), which sorts as time does; `at` is when it happened (NULL
// where the source has no full date), `recorded_at` when the ledger learned it. dedup_key is the
// SHA-256 of what makes a row the same fact (docs/formats.md), so adding a file twice adds
// nothing.
const std::vector<LedgerMigration> kMigrations = {
    {1,
     "GPU identities, health snapshots, Xid/SXid events, boots, campaigns, fleet merges, evidence bundles",
     {
         R"(CREATE TABLE gpu_identities (
    id {{ID}},
    serial TEXT NOT NULL, uuid TEXT NOT NULL, host TEXT NOT NULL, bus_id TEXT NOT NULL,
    product TEXT NOT NULL, vbios TEXT NOT NULL, driver TEXT NOT NULL,
    first_seen TEXT NOT NULL, last_seen TEXT NOT NULL, source TEXT NOT NULL,
    UNIQUE (serial, uuid, host, bus_id, product, vbios, driver)))",
         R"(CREATE TABLE health_snapshots (
    id {{ID}},
    serial TEXT NOT NULL, uuid TEXT NOT NULL, host TEXT NOT NULL, bus_id TEXT NOT NULL,
    at TEXT, boot_id TEXT NOT NULL, flags TEXT NOT NULL,
    ecc_corrected BIGINT, ecc_uncorrected BIGINT,
    remapped_correctable BIGINT, remapped_uncorrectable BIGINT,
    retired_single_bit BIGINT, retired_double_bit BIGINT,
    recovery_action TEXT NOT NULL, recommendation TEXT NOT NULL,
    source TEXT NOT NULL, recorded_at TEXT NOT NULL, dedup_key TEXT NOT NULL UNIQUE))",
         R"(CREATE TABLE xid_events (
    id {{ID}},
    serial TEXT NOT NULL, uuid TEXT NOT NULL, host TEXT NOT NULL, bus_id TEXT NOT NULL,
    kind TEXT NOT NULL, code BIGINT NOT NULL, at TEXT, time_text TEXT NOT NULL,
    uptime_s DOUBLE PRECISION, boot_id TEXT NOT NULL, name TEXT NOT NULL, message TEXT NOT NULL,
    action TEXT NOT NULL, source TEXT NOT NULL, recorded_at TEXT NOT NULL, dedup_key TEXT NOT NULL UNIQUE))",
         R"(CREATE TABLE boots (
    id {{ID}},
    host TEXT NOT NULL, boot_id TEXT NOT NULL, at TEXT, time_text TEXT NOT NULL,
    uptime_s DOUBLE PRECISION, source TEXT NOT NULL, recorded_at TEXT NOT NULL,
    dedup_key TEXT NOT NULL UNIQUE))",
         R"(CREATE TABLE campaigns (
    id {{ID}},
    content_digest TEXT NOT NULL UNIQUE, trace TEXT NOT NULL, trace_digest TEXT NOT NULL,
    host TEXT NOT NULL, reps BIGINT NOT NULL, seed TEXT NOT NULL, fleet BIGINT NOT NULL,
    cancelled BIGINT NOT NULL, at TEXT, file TEXT NOT NULL, recorded_at TEXT NOT NULL))",
         R"(CREATE TABLE campaign_targets (
    id {{ID}},
    campaign_id BIGINT NOT NULL REFERENCES campaigns (id),
    serial TEXT NOT NULL, uuid TEXT NOT NULL, host TEXT NOT NULL, bus_id TEXT NOT NULL,
    target TEXT NOT NULL, verdict TEXT NOT NULL, runs BIGINT NOT NULL, failures BIGINT NOT NULL,
    rate DOUBLE PRECISION NOT NULL, ci_low DOUBLE PRECISION NOT NULL, ci_high DOUBLE PRECISION NOT NULL,
    explanation TEXT NOT NULL))",
         R"(CREATE TABLE campaign_op_rates (
    id {{ID}},
    campaign_target_id BIGINT NOT NULL REFERENCES campaign_targets (id),
    op_index BIGINT NOT NULL, op TEXT NOT NULL, name TEXT NOT NULL,
    runs BIGINT NOT NULL, failures BIGINT NOT NULL,
    rate DOUBLE PRECISION NOT NULL, ci_low DOUBLE PRECISION NOT NULL, ci_high DOUBLE PRECISION NOT NULL))",
         R"(CREATE TABLE fleet_merges (
    id {{ID}},
    campaign_id BIGINT NOT NULL REFERENCES campaigns (id),
    node_count BIGINT NOT NULL, gpu_count BIGINT NOT NULL, outliers BIGINT NOT NULL))",
         R"(CREATE TABLE evidence_bundles (
    id {{ID}},
    serial TEXT NOT NULL, uuid TEXT NOT NULL, host TEXT NOT NULL, bus_id TEXT NOT NULL,
    case_id TEXT NOT NULL, manifest_digest TEXT NOT NULL UNIQUE, at TEXT, intact BIGINT NOT NULL,
    path TEXT NOT NULL, recorded_at TEXT NOT NULL))",
     }},
    {2,
     "indexes for a GPU's timeline (show) and for query",
     {
         "CREATE INDEX gpu_identities_serial ON gpu_identities (serial)",
         "CREATE INDEX gpu_identities_uuid ON gpu_identities (uuid)",
         "CREATE INDEX xid_events_serial ON xid_events (serial)",
         "CREATE INDEX xid_events_uuid ON xid_events (uuid)",
         "CREATE INDEX xid_events_bus ON xid_events (host, bus_id)",
         "CREATE INDEX xid_events_code ON xid_events (code)",
         "CREATE INDEX health_snapshots_serial ON health_snapshots (serial)",
         "CREATE INDEX health_snapshots_uuid ON health_snapshots (uuid)",
         "CREATE INDEX health_snapshots_bus ON health_snapshots (host, bus_id)",
         "CREATE INDEX boots_host ON boots (host)",
         "CREATE INDEX campaign_targets_serial ON campaign_targets (serial)",
         "CREATE INDEX campaign_targets_uuid ON campaign_targets (uuid)",
         "CREATE INDEX campaign_targets_campaign ON campaign_targets (campaign_id)",
         "CREATE INDEX campaign_op_rates_target ON campaign_op_rates (campaign_target_id)",
         "CREATE INDEX evidence_bundles_serial ON evidence_bundles (serial)",
     }},
};

}  // namespace

const std::vector<LedgerMigration>& ledgerMigrations()
{
    return kMigrations;
}

int ledgerSchemaVersion()
{
    return kMigrations.back().version;
}

std::string dialectSql(const std::string& statement, const std::string& dialect)
{
    static const std::string token = "{{ID}}";
    const std::string id = dialect == "postgresql" ? "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
                                                   : "INTEGER PRIMARY KEY";
    std::string out = statement;
    for (size_t at = out.find(token); at != std::string::npos; at = out.find(token, at + id.size()))
        out.replace(at, token.size(), id);
    return out;
}

Result<int> ledgerVersionOf(LedgerEngine& engine)
{
    if (Status s = engine.exec("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)"); !s)
        return s.error();
    auto rows = runSql(engine, "SELECT max(version) FROM schema_version");
    if (!rows) return rows.error();
    return rows->empty() ? 0 : static_cast<int>(sqlInt(rows->front().front()));
}

namespace {

// A ledger whose schema is newer than this build's: refused, never written.
Error newerThanThisBuild(const LedgerEngine& engine, int version)
{
    return Error{engine.location() + ": ledger schema version " + std::to_string(version) +
                     " is newer than this Faultline's (" + std::to_string(ledgerSchemaVersion()) +
                     "): update Faultline",
                 ErrorCode::Format};
}

}  // namespace

Status migrateLedger(LedgerEngine& engine, int target)
{
    if (target <= 0) target = ledgerSchemaVersion();
    for (const LedgerMigration& m : kMigrations) {
        if (m.version > target) break;
        LedgerTransaction tx(engine);
        if (Status s = tx.begin(); !s) return s;
        auto version = ledgerVersionOf(engine);
        if (!version) return version.error();
        if (*version > ledgerSchemaVersion()) return newerThanThisBuild(engine, *version);
        if (*version >= m.version) continue;  // applied already (maybe by a concurrent opener)
        for (const std::string& sql : m.statements)
            if (Status s = engine.exec(dialectSql(sql, engine.dialect())); !s)
                return Error{s.message() + " (ledger migration " + std::to_string(m.version) + ")", s.code()};
        if (*version == 0) {
            if (auto r =
                    runSql(engine, "INSERT INTO schema_version (version) VALUES ($1)", {int64_t(m.version)});
                !r)
                return r.error();
        } else if (auto r = runSql(engine, "UPDATE schema_version SET version = $1", {int64_t(m.version)});
                   !r) {
            return r.error();
        }
        if (Status s = tx.commit(); !s) return s;
    }
    // A database newer than this build: refused even when nothing was left to apply.
    auto version = ledgerVersionOf(engine);
    if (!version) return version.error();
    if (*version > ledgerSchemaVersion()) return newerThanThisBuild(engine, *version);
    return {};
}

}  // namespace faultline
