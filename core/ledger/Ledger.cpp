#include "Ledger.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "../evidence/MessageDigest.h"
#include "../health/HealthRecommendation.h"
#include "LedgerJson.h"
#include "LedgerLocation.h"
#include "LedgerSchema.h"
#include "LedgerTime.h"

namespace faultline {
namespace {

SqlValue orNull(const std::optional<std::string>& s)
{
    return s ? SqlValue(*s) : SqlValue();
}

SqlValue orNull(const std::optional<double>& d)
{
    return d ? SqlValue(*d) : SqlValue();
}

SqlValue orNull(const std::optional<int64_t>& n)
{
    return n ? SqlValue(*n) : SqlValue();
}

std::string uptimeText(const std::optional<double>& u)
{
    if (!u) return {};
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", *u);
    return buf;
}

// What makes a row the same fact, as one key: the SHA-256 of the fields, each ended by a unit
// separator (so no two lists of fields give the same bytes).
std::string dedupKey(std::initializer_list<std::string_view> fields)
{
    Sha256 d;
    for (std::string_view f : fields) {
        d.update(f.data(), f.size());
        d.update("\x1f", 1);
    }
    return toHex(d.finish());
}

// The flags of a health snapshot's counters, as the ledger lists them: comma-separated names of
// the ones set.
std::string snapshotFlags(const nlohmann::json& counters)
{
    std::vector<std::string> set;
    const nlohmann::json& remap = jsonField(counters, "remapped_rows");
    if (jsonFlag(remap, "pending")) set.push_back("row_remap_pending");
    if (jsonFlag(remap, "failure")) set.push_back("row_remap_failure");
    if (jsonFlag(counters, "sram_threshold_exceeded")) set.push_back("sram_threshold_exceeded");
    if (jsonFlag(jsonField(counters, "retired_pages"), "pending")) set.push_back("retired_pages_pending");
    std::string s;
    for (size_t i = 0; i < set.size(); ++i) s += (i ? "," : "") + set[i];
    return s;
}

GpuIdentity identityOf(const nlohmann::json& gpu)
{
    const nlohmann::json& id = jsonField(gpu, "identity");
    GpuIdentity g;
    g.busId = jsonText(id, "bus_id");
    g.uuid = jsonText(id, "uuid");
    g.serial = jsonText(id, "serial");
    g.product = jsonText(id, "product");
    g.vbiosVersion = jsonText(id, "vbios_version");
    g.driverVersion = jsonText(id, "driver_version");
    if (g.busId.empty()) g.busId = jsonText(gpu, "bus_id");
    if (g.uuid.empty()) g.uuid = jsonText(gpu, "uuid");
    if (g.serial.empty()) g.serial = jsonText(gpu, "serial");
    if (g.product.empty()) g.product = jsonText(gpu, "product");
    return g;
}

LedgerEventRow eventRow(const nlohmann::json& e, const GpuIdentity& gpu, const std::string& host)
{
    LedgerEventRow r;
    r.serial = jsonText(e, "serial").empty() ? gpu.serial : jsonText(e, "serial");
    r.uuid = ledgerUuid(jsonText(e, "uuid").empty() ? gpu.uuid : jsonText(e, "uuid"));
    r.host = host;
    r.busId = jsonText(e, "bus_id").empty() ? gpu.busId : jsonText(e, "bus_id");
    r.kind = jsonText(e, "kind") == "sxid" ? "sxid" : "xid";
    r.code = jsonInteger(e, "xid").value_or(0);
    r.timeText = jsonText(e, "time");
    r.at = ledgerTime(r.timeText);
    r.uptimeSeconds = jsonNumber(e, "uptime_s");
    r.bootId = jsonText(e, "boot_id");
    r.name = jsonText(e, "name");
    r.message = jsonText(e, "message");
    r.source = jsonText(e, "source");
    r.action = healthActionName(actionForBucket(jsonText(e, "immediate_action")));
    return r;
}

// An event's insert parameters (kInsertEvent), its dedup key among them.
std::vector<SqlValue> eventParams(const LedgerEventRow& e, const std::string& recordedAt)
{
    const std::string uptime = uptimeText(e.uptimeSeconds);
    const std::string code = std::to_string(e.code);
    const std::string key =
        dedupKey({e.host, e.kind, code, e.busId, e.bootId, e.timeText, uptime, e.message});
    return {e.serial,
            ledgerUuid(e.uuid),
            e.host,
            e.busId,
            e.kind,
            e.code,
            orNull(e.at),
            e.timeText,
            orNull(e.uptimeSeconds),
            e.bootId,
            e.name,
            e.message,
            e.action,
            e.source,
            recordedAt,
            key};
}

const char* kInsertEvent =
    "INSERT INTO xid_events (serial, uuid, host, bus_id, kind, code, at, time_text, uptime_s, boot_id, name, "
    "message, action, source, recorded_at, dedup_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    "$12, "
    "$13, $14, $15, $16) ON CONFLICT (dedup_key) DO NOTHING RETURNING id";

const char* kInsertIdentity =
    "INSERT INTO gpu_identities (serial, uuid, host, bus_id, product, vbios, driver, first_seen, last_seen, "
    "source) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) "
    "ON CONFLICT (serial, uuid, host, bus_id, product, vbios, driver) DO NOTHING RETURNING id";

// A sighting of an identity the ledger has: widens its first and last seen.
const char* kTouchIdentity =
    "UPDATE gpu_identities SET "
    "first_seen = CASE WHEN $8 < first_seen THEN $8 ELSE first_seen END, "
    "last_seen = CASE WHEN $8 > last_seen THEN $8 ELSE last_seen END "
    "WHERE serial = $1 AND uuid = $2 AND host = $3 AND bus_id = $4 AND product = $5 AND vbios = $6 AND "
    "driver = $7";

const char* kInsertSnapshot =
    "INSERT INTO health_snapshots (serial, uuid, host, bus_id, at, boot_id, flags, ecc_corrected, "
    "ecc_uncorrected, "
    "remapped_correctable, remapped_uncorrectable, retired_single_bit, retired_double_bit, recovery_action, "
    "recommendation, source, recorded_at, dedup_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    "$12, "
    "$13, $14, $15, $16, $17, $18) ON CONFLICT (dedup_key) DO NOTHING RETURNING id";

const char* kInsertBoot =
    "INSERT INTO boots (host, boot_id, at, time_text, uptime_s, source, recorded_at, dedup_key) VALUES ($1, "
    "$2, $3, "
    "$4, $5, $6, $7, $8) ON CONFLICT (dedup_key) DO NOTHING RETURNING id";

}  // namespace

std::string ledgerUuid(std::string uuid)
{
    std::transform(uuid.begin(), uuid.end(), uuid.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return uuid;
}

void LedgerAdded::add(const LedgerAdded& o)
{
    identities += o.identities;
    snapshots += o.snapshots;
    events += o.events;
    boots += o.boots;
    campaigns += o.campaigns;
    targets += o.targets;
    fleetMerges += o.fleetMerges;
    bundles += o.bundles;
    repeated += o.repeated;
}

uint64_t LedgerAdded::total() const
{
    return identities + snapshots + events + boots + campaigns + targets + fleetMerges + bundles;
}

nlohmann::json LedgerAdded::toJson() const
{
    return {{"identities", identities},
            {"snapshots", snapshots},
            {"events", events},
            {"boots", boots},
            {"campaigns", campaigns},
            {"targets", targets},
            {"fleet_merges", fleetMerges},
            {"bundles", bundles},
            {"repeated", repeated}};
}

struct Ledger::Statements {
    std::unique_ptr<LedgerStatement> event, identity, touchIdentity, snapshot, boot;
};

Ledger::Ledger(std::unique_ptr<LedgerEngine> engine)
    : m_engine(std::move(engine)), m_statements(std::make_unique<Statements>())
{
}
Ledger::Ledger(Ledger&&) noexcept = default;
Ledger& Ledger::operator=(Ledger&&) noexcept = default;
Ledger::~Ledger()
{
    m_statements.reset();  // before the engine that prepared them
}

Result<Ledger> Ledger::open(const std::string& spec)
{
    auto location = parseLedgerLocation(spec);
    if (!location) return location.error();
    auto engine = openLedgerEngine(*location);
    if (!engine) return engine.error();
    return over(std::move(*engine));
}

Result<Ledger> Ledger::openExisting(const std::string& spec)
{
    auto location = parseLedgerLocation(spec);
    if (!location) return location.error();
    std::error_code ec;
    if (location->kind == LedgerLocation::Kind::Sqlite && !std::filesystem::exists(location->path, ec))
        return Error{location->path +
                         ": no ledger here yet: nothing has been recorded (faultline ledger add FILE..., or "
                         "--ledger on health, replay, merge and evidence)",
                     ErrorCode::Usage};
    auto engine = openLedgerEngine(*location);
    if (!engine) return engine.error();
    if (location->kind == LedgerLocation::Kind::Postgresql) {
        // A database without the ledger's tables: nothing has been recorded there, and reading
        // creates nothing.
        auto found = runSql(**engine, "SELECT to_regclass('schema_version') IS NOT NULL");
        if (!found) return found.error();
        if (found->empty() || sqlInt(found->front().front()) == 0)
            return Error{(*engine)->location() +
                             ": no ledger here yet: nothing has been recorded (faultline ledger add FILE..., "
                             "or --ledger on health, replay, merge and evidence)",
                         ErrorCode::Usage};
    }
    return over(std::move(*engine));
}

Result<Ledger> Ledger::over(std::unique_ptr<LedgerEngine> engine)
{
    if (Status s = migrateLedger(*engine); !s) return s.error();
    Ledger ledger(std::move(engine));
    auto prepare = [&](std::unique_ptr<LedgerStatement>& into, const char* sql) -> Status {
        auto stmt = ledger.m_engine->prepare(sql);
        if (!stmt) return stmt.error();
        into = std::move(*stmt);
        return {};
    };
    Statements& st = *ledger.m_statements;
    for (Status s : {prepare(st.event, kInsertEvent), prepare(st.identity, kInsertIdentity),
                     prepare(st.touchIdentity, kTouchIdentity), prepare(st.snapshot, kInsertSnapshot),
                     prepare(st.boot, kInsertBoot)})
        if (!s) return s.error();
    return ledger;
}

Status Ledger::commitAdd(LedgerTransaction& tx)
{
    if (const char* ms = std::getenv(kLedgerTestSleepEnv); ms && *ms)
        std::this_thread::sleep_for(std::chrono::milliseconds(std::strtol(ms, nullptr, 10)));
    return tx.commit();
}

Result<bool> Ledger::insertEvent(const LedgerEventRow& e, const std::string& recordedAt)
{
    auto rows = m_statements->event->run(eventParams(e, recordedAt));
    if (!rows) return rows.error();
    return !rows->empty();
}

Result<bool> Ledger::noteIdentity(const GpuIdentity& id, const std::string& host, const std::string& seen,
                                  const std::string& source)
{
    if (id.serial.empty() && id.uuid.empty()) return false;  // nothing to key it by
    const std::vector<SqlValue> params = {id.serial,       ledgerUuid(id.uuid), host, id.busId, id.product,
                                          id.vbiosVersion, id.driverVersion,    seen, source};
    auto rows = m_statements->identity->run(params);
    if (!rows) return rows.error();
    if (!rows->empty()) return true;
    auto touched = m_statements->touchIdentity->run({params.begin(), params.begin() + 8});
    if (!touched) return touched.error();
    return false;
}

Result<LedgerAdded> Ledger::addEvents(const std::vector<LedgerEventRow>& events)
{
    LedgerTransaction tx(*m_engine);
    if (Status s = tx.begin(); !s) return s.error();
    LedgerAdded added;
    const std::string now = isoUtcNow();
    // In one batch (one round trip on PostgreSQL): each row's insert says whether it was new.
    std::vector<std::vector<SqlValue>> batch;
    batch.reserve(events.size());
    for (const LedgerEventRow& e : events) batch.push_back(eventParams(e, now));
    auto results = m_statements->event->runBatch(batch);
    if (!results) return results.error();
    for (const std::vector<SqlRow>& rows : *results) (rows.empty() ? added.repeated : added.events) += 1;
    if (Status s = commitAdd(tx); !s) return s.error();
    return added;
}

Result<LedgerAdded> Ledger::addHealth(const nlohmann::json& doc, const LedgerSource& source,
                                      const std::vector<KernelLogBoot>& boots,
                                      const std::vector<LedgerEventRow>& resets)
{
    if (jsonText(doc, "format") != "faultline-health" || jsonInteger(doc, "version").value_or(0) != 1 ||
        !jsonField(doc, "gpus").is_array())
        return fileError(source.file, "not a faultline health document (format faultline-health, version 1)");
    LedgerTransaction tx(*m_engine);
    if (Status s = tx.begin(); !s) return s.error();
    const std::string now = isoUtcNow();
    const std::string& host = source.host;
    LedgerAdded added;
    auto count = [&](const Result<bool>& r, uint64_t& into) -> Status {
        if (!r) return r.error();
        (*r ? into : added.repeated) += 1;
        return {};
    };
    // An identity without serial or UUID is not kept (nothing to key it by), nor counted.
    auto countIdentity = [&](const GpuIdentity& id, const std::string& seen) -> Status {
        if (id.serial.empty() && id.uuid.empty()) return {};
        return count(noteIdentity(id, host, seen, source.file), added.identities);
    };
    auto addEventsOf = [&](const nlohmann::json& list, const GpuIdentity& gpu) -> Status {
        if (!list.is_array()) return {};
        for (const nlohmann::json& e : list) {
            if (!e.is_object()) continue;
            if (Status s = count(insertEvent(eventRow(e, gpu, host), now), added.events); !s) return s;
        }
        return {};
    };
    for (const nlohmann::json& gpu : jsonField(doc, "gpus")) {
        if (!gpu.is_object()) continue;
        const GpuIdentity id = identityOf(gpu);
        // When it was seen: its first snapshot's time, else its first event's, else now.
        std::string seen;
        for (const nlohmann::json& snap : jsonField(gpu, "snapshots"))
            if (auto t = ledgerTime(jsonText(snap, "timestamp")); t && (seen.empty() || *t < seen)) seen = *t;
        for (const nlohmann::json& e : jsonField(gpu, "events"))
            if (auto t = ledgerTime(jsonText(e, "time")); t && (seen.empty() || *t < seen)) seen = *t;
        if (seen.empty()) seen = now;
        if (Status s = countIdentity(id, seen); !s) return s.error();
        const std::string recommendation = jsonText(gpu, "recommendation");
        for (const nlohmann::json& snap : jsonField(gpu, "snapshots")) {
            if (!snap.is_object()) continue;
            GpuIdentity sid = identityOf(snap);
            if (sid.busId.empty()) sid.busId = id.busId;
            if (sid.serial.empty()) sid.serial = id.serial;
            if (sid.uuid.empty()) sid.uuid = id.uuid;
            const std::optional<std::string> at = ledgerTime(jsonText(snap, "timestamp"));
            if (Status s = countIdentity(sid, at ? *at : seen); !s) return s.error();
            const nlohmann::json& c = jsonField(snap, "counters");
            const nlohmann::json& remap = jsonField(c, "remapped_rows");
            const nlohmann::json& retired = jsonField(c, "retired_pages");
            const std::string snapSource = jsonText(snap, "source");
            const std::string key = dedupKey({host, sid.busId, sid.serial, ledgerUuid(sid.uuid), snapSource,
                                              jsonText(snap, "timestamp"), c.dump()});
            auto rows = m_statements->snapshot->run(
                {sid.serial, ledgerUuid(sid.uuid), host, sid.busId, orNull(at), jsonText(snap, "boot_id"),
                 snapshotFlags(c), orNull(jsonInteger(c, "ecc_corrected_aggregate")),
                 orNull(jsonInteger(c, "ecc_uncorrected_aggregate")),
                 orNull(jsonInteger(remap, "correctable")), orNull(jsonInteger(remap, "uncorrectable")),
                 orNull(jsonInteger(retired, "single_bit")), orNull(jsonInteger(retired, "double_bit")),
                 jsonText(snap, "recovery_action"), recommendation,
                 snapSource.empty() ? source.file : snapSource, now, key});
            if (!rows) return rows.error();
            (rows->empty() ? added.repeated : added.snapshots) += 1;
        }
        if (Status s = addEventsOf(jsonField(gpu, "events"), id); !s) return s.error();
    }
    if (Status s = addEventsOf(jsonField(doc, "unattributed_events"), GpuIdentity{}); !s) return s.error();
    for (const LedgerEventRow& r : resets)
        if (Status s = count(insertEvent(r, now), added.events); !s) return s.error();
    for (const KernelLogBoot& b : boots) {
        // A boot that cannot be placed (no boot id, no date) could not be told from another.
        if (b.bootId.empty() && b.time.empty()) continue;
        const std::string uptime = uptimeText(b.uptime);
        auto rows =
            m_statements->boot->run({host, b.bootId, orNull(ledgerTime(b.time)), b.time, orNull(b.uptime),
                                     b.source, now, dedupKey({host, b.bootId, b.time, uptime})});
        if (!rows) return rows.error();
        (rows->empty() ? added.repeated : added.boots) += 1;
    }
    if (Status s = commitAdd(tx); !s) return s.error();
    return added;
}

}  // namespace faultline
