// bench_ledger DIR [EVENTS] [GPUS] [--postgresql URL]: EVENTS Xid events (default 1,000,000) of
// GPUS GPUs (default 1,000; 8 per host) inserted through the ledger (Ledger::addEvents, batches of
// 100,000 in one transaction each: the dedup key's SHA-256, ON CONFLICT, RETURNING), against the
// anchor: a raw insert of the same rows (same schema and indexes, keys computed beforehand) into
// another database. Then one serial's timeline (ledger show) queried 21 times: the median and the
// slowest. Half the events name their GPU's serial and UUID, half only host and bus id (as
// kernel-log lines before the driver's identity lines do), found through the identity.
//
// SQLite (default): the ledger in DIR/ledger.sqlite, the anchor one prepared sqlite3 statement
// into DIR/raw.sqlite. PostgreSQL (--postgresql URL): the ledger in the schema bench_ledger of that
// database and the anchor, COPY ... FROM STDIN through libpq (the server's fastest way in), in the
// schema bench_anchor; both schemas are dropped first, nothing else is touched.
#include <libpq-fe.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/evidence/MessageDigest.h"
#include "core/ledger/Ledger.h"
#include "core/ledger/LedgerSchema.h"
#include "core/ledger/LedgerTimeline.h"
#include "core/ledger/PostgresEngine.h"
#include "core/ledger/SqliteEngine.h"

using namespace faultline;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string serialOf(size_t gpu)
{
    return "16501220" + std::to_string(10000 + gpu);
}

std::string hostOf(size_t gpu)
{
    return "node" + std::to_string(gpu / 8);
}

std::string busOf(size_t gpu)
{
    char b[32];
    std::snprintf(b, sizeof b, "0000:%02zx:00.0", 0x10 + (gpu % 8) * 0x10);
    return b;
}

LedgerEventRow eventOf(size_t i, size_t gpus)
{
    const size_t gpu = i % gpus;
    LedgerEventRow e;
    if (i % 2 == 0) {
        e.serial = serialOf(gpu);
        e.uuid = "gpu-" + std::to_string(gpu);
    }
    e.host = hostOf(gpu);
    e.busId = busOf(gpu);
    e.code = (i / gpus) % 3 == 0 ? 79 : 48;
    char t[32];
    const size_t minute = i / gpus;
    std::snprintf(t, sizeof t, "2026-%02zu-%02zuT%02zu:%02zu:00Z", 1 + (minute / 1440) % 12,
                  1 + (minute / 60) % 24, minute % 24, minute % 60);
    e.timeText = t;
    e.at = e.timeText;
    e.uptimeSeconds = double(i);
    e.bootId = "boot-" + std::to_string(gpu);
    e.name = e.code == 79 ? "GPU_HAS_FALLEN_OFF_THE_BUS" : "ROBUST_CHANNEL_GPU_ECC_DBE";
    e.message = "planted event " + std::to_string(i);
    e.action = e.code == 79 ? "drain" : "reset";
    e.source = "dmesg:" + std::to_string(i);
    return e;
}

int fail(const std::string& what)
{
    std::fprintf(stderr, "bench_ledger: %s\n", what.c_str());
    return 2;
}

constexpr size_t kBatch = 100'000;

// The anchor on SQLite: one prepared statement, batches in BEGIN IMMEDIATE ... COMMIT. Seconds, or
// a negative number after printing the error.
double rawSqlite(const std::string& rawPath, size_t events, size_t gpus)
{
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(rawPath + suffix);
    {
        auto engine = openSqliteEngine(rawPath);
        if (!engine) return fail(engine.message()), -1;
        if (Status s = migrateLedger(**engine); !s) return fail(s.message()), -1;
    }
    sqlite3* db = nullptr;
    if (sqlite3_open(rawPath.c_str(), &db) != SQLITE_OK) return fail("cannot open " + rawPath), -1;
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL", nullptr, nullptr, nullptr);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(
        db,
        "INSERT INTO xid_events (serial, uuid, host, bus_id, kind, code, at, time_text, uptime_s, "
        "boot_id, name, message, action, source, recorded_at, dedup_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?)",
        -1, &stmt, nullptr);
    double rawSeconds = 0;
    std::vector<LedgerEventRow> rows;
    std::vector<std::string> keys;
    for (size_t start = 0; start < events; start += kBatch) {
        rows.clear();
        keys.clear();
        for (size_t i = start; i < std::min(events, start + kBatch); ++i) {
            rows.push_back(eventOf(i, gpus));
            keys.push_back(toHex(Sha256::of(rows.back().source)));
        }
        const auto t0 = Clock::now();
        sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
        for (size_t k = 0; k < rows.size(); ++k) {
            const LedgerEventRow& e = rows[k];
            auto text = [&](int at, const std::string& s) {
                sqlite3_bind_text(stmt, at, s.data(), int(s.size()), SQLITE_STATIC);
            };
            text(1, e.serial);
            text(2, e.uuid);
            text(3, e.host);
            text(4, e.busId);
            text(5, e.kind);
            sqlite3_bind_int64(stmt, 6, e.code);
            text(7, *e.at);
            text(8, e.timeText);
            sqlite3_bind_double(stmt, 9, *e.uptimeSeconds);
            text(10, e.bootId);
            text(11, e.name);
            text(12, e.message);
            text(13, e.action);
            text(14, e.source);
            text(15, "2026-12-03T00:00:00Z");
            text(16, keys[k]);
            if (sqlite3_step(stmt) != SQLITE_DONE)
                return fail(std::string("raw insert: ") + sqlite3_errmsg(db)), -1;
            sqlite3_reset(stmt);
        }
        sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
        rawSeconds += secondsSince(t0);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return rawSeconds;
}

// An engine on `url` whose tables live in `schema`, emptied first.
Result<std::unique_ptr<LedgerEngine>> postgresSchema(const std::string& url, const std::string& schema)
{
    auto engine = openPostgresEngine(url);
    if (!engine) return engine.error();
    if (Status s = (*engine)->exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE; CREATE SCHEMA " + schema +
                                   "; SET search_path = " + schema);
        !s)
        return s.error();
    return engine;
}

// A COPY text field: backslash, tab and line breaks escaped.
void copyField(std::string& line, const std::string& s)
{
    for (char c : s) {
        if (c == '\\' || c == '\t' || c == '\n' || c == '\r') line += '\\';
        line += c == '\t' ? 't' : c == '\n' ? 'n' : c == '\r' ? 'r' : c;
    }
}

// The anchor on PostgreSQL: COPY xid_events FROM STDIN in batches, each in its own transaction,
// synchronous commit as the ledger's.
double rawPostgres(const std::string& url, size_t events, size_t gpus)
{
    {
        auto engine = postgresSchema(url, "bench_anchor");
        if (!engine) return fail(engine.message()), -1;
        if (Status s = migrateLedger(**engine); !s) return fail(s.message()), -1;
    }
    PGconn* conn = PQconnectdb(url.c_str());
    if (PQstatus(conn) != CONNECTION_OK) return fail(PQerrorMessage(conn)), PQfinish(conn), -1;
    auto exec = [&](const std::string& sql, ExecStatusType want) {
        PGresult* r = PQexec(conn, sql.c_str());
        const bool ok = PQresultStatus(r) == want;
        if (!ok) fail(sql + ": " + PQerrorMessage(conn));
        PQclear(r);
        return ok;
    };
    if (!exec("SET search_path = bench_anchor", PGRES_COMMAND_OK)) return PQfinish(conn), -1;
    double rawSeconds = 0;
    std::vector<std::string> lines;
    for (size_t start = 0; start < events; start += kBatch) {
        lines.clear();
        for (size_t i = start; i < std::min(events, start + kBatch); ++i) {
            const LedgerEventRow e = eventOf(i, gpus);
            std::string line;
            int fields = 0;
            char uptime[40];
            std::snprintf(uptime, sizeof uptime, "%.17g", *e.uptimeSeconds);
            for (const std::string& f :
                 {e.serial, e.uuid, e.host, e.busId, e.kind, std::to_string(e.code), *e.at, e.timeText,
                  std::string(uptime), e.bootId, e.name, e.message, e.action, e.source,
                  std::string("2026-12-03T00:00:00Z"), toHex(Sha256::of(e.source))}) {
                if (fields++) line += '\t';
                copyField(line, f);
            }
            lines.push_back(line + '\n');
        }
        const auto t0 = Clock::now();
        if (!exec("BEGIN", PGRES_COMMAND_OK) ||
            !exec(
                "COPY xid_events (serial, uuid, host, bus_id, kind, code, at, time_text, uptime_s, boot_id, "
                "name, message, action, source, recorded_at, dedup_key) FROM STDIN",
                PGRES_COPY_IN))
            return PQfinish(conn), -1;
        for (const std::string& line : lines)
            if (PQputCopyData(conn, line.data(), static_cast<int>(line.size())) != 1)
                return fail(PQerrorMessage(conn)), PQfinish(conn), -1;
        if (PQputCopyEnd(conn, nullptr) != 1) return fail(PQerrorMessage(conn)), PQfinish(conn), -1;
        PGresult* r = PQgetResult(conn);
        const bool copied = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        while ((r = PQgetResult(conn))) PQclear(r);
        if (!copied) return fail(std::string("COPY: ") + PQerrorMessage(conn)), PQfinish(conn), -1;
        if (!exec("COMMIT", PGRES_COMMAND_OK)) return PQfinish(conn), -1;
        rawSeconds += secondsSince(t0);
    }
    PQfinish(conn);
    return rawSeconds;
}

}  // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string postgresUrl;
    for (size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--postgresql") {
            postgresUrl = args[i + 1];
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                       args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
            break;
        }
    if (args.empty()) return fail("usage: bench_ledger DIR [EVENTS] [GPUS] [--postgresql URL]");
    const std::string dir = args[0];
    const size_t events = args.size() > 1 ? std::strtoull(args[1].c_str(), nullptr, 10) : 1'000'000;
    const size_t gpus = args.size() > 2 ? std::strtoull(args[2].c_str(), nullptr, 10) : 1'000;
    const bool postgres = !postgresUrl.empty();
    std::filesystem::create_directories(dir);
    const std::string ledgerPath = dir + "/ledger.sqlite";

    // The ledger.
    Result<std::unique_ptr<LedgerEngine>> engine = Error{"no engine"};
    if (postgres) {
        engine = postgresSchema(postgresUrl, "bench_ledger");
    } else {
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(ledgerPath + suffix);
        engine = openSqliteEngine(ledgerPath);
    }
    if (!engine) return fail(engine.message());
    auto ledger = Ledger::over(std::move(*engine));
    if (!ledger) return fail(ledger.message());
    for (size_t g = 0; g < gpus; ++g) {
        nlohmann::json identity = {
            {"bus_id", busOf(g)}, {"uuid", "gpu-" + std::to_string(g)}, {"serial", serialOf(g)}};
        nlohmann::json doc = {{"format", "faultline-health"},
                              {"version", 1},
                              {"gpus", {{{"identity", identity}, {"events", nlohmann::json::array()}}}}};
        if (auto a = ledger->addHealth(doc, {hostOf(g), "bench"}); !a) return fail(a.message());
    }
    double ledgerSeconds = 0;
    std::vector<LedgerEventRow> rows;
    for (size_t start = 0; start < events; start += kBatch) {
        rows.clear();
        for (size_t i = start; i < std::min(events, start + kBatch); ++i) rows.push_back(eventOf(i, gpus));
        const auto t0 = Clock::now();
        auto added = ledger->addEvents(rows);
        ledgerSeconds += secondsSince(t0);
        if (!added) return fail(added.message());
        if (added->events != rows.size()) return fail("the ledger added fewer events than given");
    }

    // The anchor: the same rows, raw.
    const double rawSeconds =
        postgres ? rawPostgres(postgresUrl, events, gpus) : rawSqlite(dir + "/raw.sqlite", events, gpus);
    if (rawSeconds < 0) return 2;

    // One serial's timeline.
    std::vector<double> ms;
    size_t entries = 0;
    for (int r = 0; r < 21; ++r) {
        const auto t0 = Clock::now();
        auto t = ledgerTimeline(ledger->engine(), serialOf(gpus / 2));
        ms.push_back(secondsSince(t0) * 1000);
        if (!t) return fail(t.message());
        entries = t->entries.size();
    }
    std::sort(ms.begin(), ms.end());
    const char* raw = postgres ? "raw COPY" : "raw sqlite3 insert";
    std::printf("engine %s, events %zu, gpus %zu\n", postgres ? "postgresql" : "sqlite", events, gpus);
    std::printf("ledger insert: %.2f s (%.0f events/s)\n", ledgerSeconds, events / ledgerSeconds);
    std::printf("%s (anchor): %.2f s (%.0f events/s)\n", raw, rawSeconds, events / rawSeconds);
    std::printf("ratio ledger/raw: %.2f\n", ledgerSeconds / rawSeconds);
    std::printf("timeline of serial %s: %zu entries, median %.1f ms, slowest %.1f ms (21 queries)\n",
                serialOf(gpus / 2).c_str(), entries, ms[ms.size() / 2], ms.back());
    if (!postgres)
        std::printf("ledger file: %.0f MB\n", double(std::filesystem::file_size(ledgerPath)) / 1e6);
    return 0;
}
