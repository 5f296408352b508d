#pragma once
// Where a ledger is (`--ledger PATH_OR_URL`, docs/ledger.md): a plain path or `sqlite:///abs/path`
// (an SQLite file), `postgresql://...` or `postgres://...` (a PostgreSQL server). Without one, the
// user's data directory: $XDG_DATA_HOME/faultline/ledger.sqlite, else
// ~/.local/share/faultline/ledger.sqlite.
#include <memory>
#include <string>

#include "../fleet/NodeIdentity.h"
#include "LedgerEngine.h"

namespace faultline {

struct LedgerLocation {
    enum class Kind { Sqlite, Postgresql };
    Kind kind = Kind::Sqlite;
    std::string path;  // Sqlite: the file
    std::string url;   // Postgresql: the connection URL
};

// The default ledger file for `env` (XDG_DATA_HOME, HOME); an error when neither is set.
Result<std::string> defaultLedgerPath(const EnvLookup& env = processEnvironment());

// `spec` ("" = the default) as a location. An empty path, a relative `sqlite://` URL or another
// scheme is a usage error naming it.
Result<LedgerLocation> parseLedgerLocation(const std::string& spec,
                                           const EnvLookup& env = processEnvironment());

// Connects to the location's engine (SqliteEngine.h, PostgresEngine.h). Errors name the file or
// the URL (without its password).
Result<std::unique_ptr<LedgerEngine>> openLedgerEngine(const LedgerLocation& location);

}  // namespace faultline
