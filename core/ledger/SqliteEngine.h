#pragma once
// The ledger's embedded engine: one SQLite file (Debian's libsqlite3) in write-ahead-log mode,
// so readers never wait for the writer and many processes can add to one ledger at once: a
// writer waits up to the busy timeout for the write lock instead of failing. Commits are
// synchronous (synchronous=FULL): a committed transaction survives a crash of the machine, and a
// killed writer leaves only its uncommitted transaction, which the next open rolls back.
#include <memory>
#include <string>

#include "LedgerEngine.h"

namespace faultline {

// Opens (creating it and its parent directories when missing) the SQLite ledger at `path`.
// Errors name the file.
Result<std::unique_ptr<LedgerEngine>> openSqliteEngine(const std::string& path);

// `sql` with PostgreSQL's positional parameters $N written as SQLite's ?N (not inside quotes).
std::string sqliteParameters(const std::string& sql);

}  // namespace faultline
