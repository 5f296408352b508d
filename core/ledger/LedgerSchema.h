#pragma once
// The ledger's one schema, as an ordered list of migrations (docs/formats.md, "Ledger"). The
// table schema_version holds the version a database is at; opening a ledger applies the
// migrations after it, each in its own transaction with the version it reaches, so a database is
// always at one version of the list. A database at a newer version than this build knows is
// refused (an older Faultline never writes into a schema it does not understand). Old entries of
// the list never change: a change is a new migration.
#include <string>
#include <vector>

#include "LedgerEngine.h"

namespace faultline {

struct LedgerMigration {
    int version = 0;                      // the version the database is at after it
    std::string what;                     // one line: what it adds
    std::vector<std::string> statements;  // SQL; {{ID}} is the dialect's auto-numbered primary key
};

// Every migration, oldest first (versions 1, 2, ...).
const std::vector<LedgerMigration>& ledgerMigrations();
// The version this build writes: the last migration's.
int ledgerSchemaVersion();

// The version `engine`'s database is at (0: no ledger yet).
Result<int> ledgerVersionOf(LedgerEngine& engine);

// Brings the database to `target` (default: ledgerSchemaVersion()), applying the migrations it
// lacks in order. Safe with concurrent openers: each migration checks the version again inside
// its write transaction. A database newer than `target` is an error naming it.
Status migrateLedger(LedgerEngine& engine, int target = 0);

// A migration's statement for `dialect` ("sqlite", "postgresql"): {{ID}} filled in.
std::string dialectSql(const std::string& statement, const std::string& dialect);

}  // namespace faultline
