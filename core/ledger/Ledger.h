#pragma once
// A ledger for every GPU: what Faultline learns about a board (identity over time, health
// snapshots, Xid/SXid events, reboots, campaigns and their verdicts, fleet merges, evidence
// bundles) kept in one database keyed by board serial and GPU UUID (docs/ledger.md; the schema in
// docs/formats.md, "Ledger"). Every add is one transaction: it is all there or not at all, and
// adding the same fact twice adds nothing (each row has a unique key of what makes it the same
// fact). Several processes may add to one ledger at once.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../health/HealthReport.h"
#include "LedgerEngine.h"

namespace faultline {

// How many rows an add wrote, by table; facts the ledger held already are `repeated`.
struct LedgerAdded {
    uint64_t identities = 0, snapshots = 0, events = 0, boots = 0, campaigns = 0, targets = 0,
             fleetMerges = 0, bundles = 0, repeated = 0;
    void add(const LedgerAdded& o);
    uint64_t total() const;
    nlohmann::json toJson() const;
};

// Where what is added comes from: the host it was seen on (health documents and kernel logs do
// not name it) and the file (for messages and the rows' source).
struct LedgerSource {
    std::string host;
    std::string file;
};

// One Xid/SXid event as a row (what health documents and kernel logs become).
struct LedgerEventRow {
    std::string serial, uuid, host, busId;
    std::string kind = "xid";  // "xid" | "sxid" | "reset" (a GPU reset; code 0)
    int64_t code = 0;
    std::optional<std::string> at;  // ledgerTime() of the event's time
    std::string timeText;           // the time as the log wrote it
    std::optional<double> uptimeSeconds;
    std::string bootId, name, message, source;
    // What NVIDIA's immediate action for it asks (healthActionName of actionForBucket): "none",
    // "monitor", "reset", "drain", "rma_candidate". reset and above count as a failure.
    std::string action = "none";
};

// The campaign behind an add: its report (the `replay --json` document, a merged fleet's too),
// the file it came from, when it ended (the results file's modification time) and its digest.
struct LedgerCampaignInput {
    nlohmann::json report;
    std::string file;
    std::optional<std::string> at;
};

// An evidence bundle: its case.json, the SHA-256 of its MANIFEST.sha256 and whether it verified.
struct LedgerBundleInput {
    nlohmann::json caseJson;
    std::string manifestDigest;
    bool intact = false;
    std::string path;
};

class Ledger {
public:
    // Opens the ledger at `spec` (--ledger: a path, sqlite:///abs/path, postgresql://...; "" the
    // default location) and brings its schema up to date.
    static Result<Ledger> open(const std::string& spec);
    // The same for reading (`ledger show`, `ledger query`): an SQLite ledger that does not exist yet,
    // or a PostgreSQL database without the ledger's tables, is a Usage error naming it, and nothing
    // is created.
    static Result<Ledger> openExisting(const std::string& spec);
    // Over an engine already open (tests, benchmarks); migrates it.
    static Result<Ledger> over(std::unique_ptr<LedgerEngine> engine);

    Ledger(Ledger&&) noexcept;
    Ledger& operator=(Ledger&&) noexcept;
    ~Ledger();

    LedgerEngine& engine() { return *m_engine; }
    std::string location() const { return m_engine->location(); }

    // A `faultline health --json` document (format "faultline-health", version 1): identities,
    // one snapshot row per snapshot, every event; `boots` (from kernel logs) as reboots seen and
    // `resets` (GPU resets the logs show, events of kind "reset": LedgerFiles.h) with them.
    // A document of another format or version is an error naming the file.
    Result<LedgerAdded> addHealth(const nlohmann::json& doc, const LedgerSource& source,
                                  const std::vector<KernelLogBoot>& boots = {},
                                  const std::vector<LedgerEventRow>& resets = {});
    // A campaign report (a merged fleet campaign also adds a fleet merge). A verdict this build
    // does not know, or a report without targets, is an error naming the file.
    Result<LedgerAdded> addCampaign(const LedgerCampaignInput& campaign, const LedgerSource& source);
    Result<LedgerAdded> addBundle(const LedgerBundleInput& bundle, const LedgerSource& source);
    // Events alone, in one transaction (what addHealth does with a document's events).
    Result<LedgerAdded> addEvents(const std::vector<LedgerEventRow>& events);

private:
    explicit Ledger(std::unique_ptr<LedgerEngine> engine);
    struct Statements;
    // Commits an add's transaction (after the test hook's sleep, kLedgerTestSleepEnv).
    Status commitAdd(LedgerTransaction& tx);
    Result<bool> insertEvent(const LedgerEventRow& e, const std::string& recordedAt);
    Result<bool> noteIdentity(const GpuIdentity& id, const std::string& host, const std::string& seen,
                              const std::string& source);

    std::unique_ptr<LedgerEngine> m_engine;
    std::unique_ptr<Statements> m_statements;
};

// The environment variable that makes every add sleep this many milliseconds inside its
// transaction, before it commits (tests kill a writer there). Unset in normal use.
inline constexpr const char* kLedgerTestSleepEnv = "FAULTLINE_LEDGER_TEST_SLEEP_MS";

// A GPU's UUID as the ledger stores and looks it up: lower case.
std::string ledgerUuid(std::string uuid);

}  // namespace faultline
