// bench_ledger DIR [EVENTS] [GPUS]: EVENTS Xid events (default 1,000,000) of GPUS GPUs (default
// 1,000; 8 per host) inserted through the ledger (Ledger::addEvents, batches of 100,000 in one
// transaction each: the dedup key's SHA-256, ON CONFLICT, RETURNING), against the anchor: a raw
// sqlite3 insert of the same rows (same schema and indexes, keys computed beforehand, one prepared
// statement) into another file. Then one serial's timeline (ledger show) queried 21 times: the
// median and the slowest. Half the events name their GPU's serial and UUID, half only host and
// bus id (as kernel-log lines before the driver's identity lines do), found through the identity.
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

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) return fail("usage: bench_ledger DIR [EVENTS] [GPUS]");
    const std::string dir = argv[1];
    const size_t events = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1'000'000;
    const size_t gpus = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1'000;
    const size_t batch = 100'000;
    std::filesystem::create_directories(dir);
    const std::string ledgerPath = dir + "/ledger.sqlite", rawPath = dir + "/raw.sqlite";
    for (const std::string& p : {ledgerPath, rawPath})
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p + suffix);

    // The ledger.
    auto ledger = Ledger::open(ledgerPath);
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
    for (size_t start = 0; start < events; start += batch) {
        rows.clear();
        for (size_t i = start; i < std::min(events, start + batch); ++i) rows.push_back(eventOf(i, gpus));
        const auto t0 = Clock::now();
        auto added = ledger->addEvents(rows);
        ledgerSeconds += secondsSince(t0);
        if (!added) return fail(added.message());
        if (added->events != rows.size()) return fail("the ledger added fewer events than given");
    }

    // The anchor: the same rows, raw.
    {
        auto engine = openSqliteEngine(rawPath);
        if (!engine) return fail(engine.message());
        if (Status s = migrateLedger(**engine); !s) return fail(s.message());
    }
    sqlite3* db = nullptr;
    if (sqlite3_open(rawPath.c_str(), &db) != SQLITE_OK) return fail("cannot open " + rawPath);
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL", nullptr, nullptr, nullptr);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(
        db,
        "INSERT INTO xid_events (serial, uuid, host, bus_id, kind, code, at, time_text, uptime_s, "
        "boot_id, name, message, action, source, recorded_at, dedup_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?)",
        -1, &stmt, nullptr);
    double rawSeconds = 0;
    std::vector<std::string> keys;
    for (size_t start = 0; start < events; start += batch) {
        rows.clear();
        keys.clear();
        for (size_t i = start; i < std::min(events, start + batch); ++i) {
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
                return fail(std::string("raw insert: ") + sqlite3_errmsg(db));
            sqlite3_reset(stmt);
        }
        sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
        rawSeconds += secondsSince(t0);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);

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
    std::printf("events %zu, gpus %zu\n", events, gpus);
    std::printf("ledger insert: %.2f s (%.0f events/s)\n", ledgerSeconds, events / ledgerSeconds);
    std::printf("raw sqlite3 insert (anchor): %.2f s (%.0f events/s)\n", rawSeconds, events / rawSeconds);
    std::printf("ratio ledger/raw: %.2f\n", ledgerSeconds / rawSeconds);
    std::printf("timeline of serial %s: %zu entries, median %.1f ms, slowest %.1f ms (21 queries)\n",
                serialOf(gpus / 2).c_str(), entries, ms[ms.size() / 2], ms.back());
    std::printf("ledger file: %.0f MB\n", double(std::filesystem::file_size(ledgerPath)) / 1e6);
    return 0;
}
