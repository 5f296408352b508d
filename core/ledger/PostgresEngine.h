#pragma once
// The ledger's shared engine: a PostgreSQL server (a fleet's, through Debian's libpq), for
// `--ledger postgresql://...` or `postgres://...` (docs/ledger.md). Statements are prepared on the
// server once and run with their parameters as text (the server infers their types from the SQL).
// A write transaction takes one advisory lock of the ledger's first (pg_advisory_xact_lock), so
// writers take their turn as SQLite's do and never deadlock on each other's unique keys; readers
// never wait. A writer that dies leaves only its open transaction, which the server rolls back when
// the connection drops.
#include <memory>
#include <string>

#include "LedgerEngine.h"

namespace faultline {

// Connects to the PostgreSQL ledger at `url` (a libpq connection URI). Errors name the URL without
// its password.
Result<std::unique_ptr<LedgerEngine>> openPostgresEngine(const std::string& url);

// `url` with any password replaced by "***" (the user-info part and a `password=` parameter), for
// messages.
std::string redactedLedgerUrl(const std::string& url);

}  // namespace faultline
