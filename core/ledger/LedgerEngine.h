#pragma once
// The database under the ledger, behind one small interface so that every engine runs the same
// SQL: SQLite (embedded, the default; SqliteEngine.h) and PostgreSQL (a fleet's shared server,
// through libpq; PostgresEngine.h). The SQL the ledger writes keeps to what both understand:
// positional parameters spelled $1, $2, ... (PostgreSQL's spelling; the SQLite engine maps them to
// ?1, ?2, ...), INSERT ... ON CONFLICT DO NOTHING / DO UPDATE, RETURNING, BIGINT, DOUBLE PRECISION
// and TEXT columns. Where the dialects differ (an auto-numbered key), the schema names a token the
// engine fills in (LedgerSchema.h).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "../Result.h"

namespace faultline {

// How long a writer waits for another's write lock before failing (every engine).
inline constexpr std::chrono::milliseconds kLedgerBusyTimeout{120'000};

// One value of a parameter or a column: NULL, an integer, a real number or text.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;
using SqlRow = std::vector<SqlValue>;

// The value's text ("" for NULL; numbers as decimal), integer (0 for NULL or text that is not
// one) and real number; whether it is NULL.
std::string sqlText(const SqlValue& v);
int64_t sqlInt(const SqlValue& v);
double sqlReal(const SqlValue& v);
std::optional<double> sqlOptionalReal(const SqlValue& v);
bool sqlIsNull(const SqlValue& v);

// A prepared statement. Owned by the engine that prepared it, which must outlive it.
class LedgerStatement {
public:
    virtual ~LedgerStatement() = default;
    // Binds `params` to $1, $2, ... in order, runs the statement to its end and returns every
    // row it yields (none for a statement without RETURNING or SELECT); the statement is then
    // ready to run again. Errors name the database.
    virtual Result<std::vector<SqlRow>> run(const std::vector<SqlValue>& params) = 0;
    // run() for each parameter list of `batch` in order: the rows of each. Stops at the first
    // error. An engine may send the batch in one round trip (PostgreSQL's pipeline mode).
    virtual Result<std::vector<std::vector<SqlRow>>> runBatch(
        const std::vector<std::vector<SqlValue>>& batch);
};

class LedgerEngine {
public:
    virtual ~LedgerEngine() = default;
    // "sqlite" or "postgresql": which dialect tokens of the schema take.
    virtual std::string dialect() const = 0;
    // Where the database is (a file path or a URL without its password), for messages.
    virtual std::string location() const = 0;
    // Runs one or more statements without parameters (schema changes, pragmas).
    virtual Status exec(const std::string& sql) = 0;
    virtual Result<std::unique_ptr<LedgerStatement>> prepare(const std::string& sql) = 0;
    // A write transaction. begin() takes the write lock at once (SQLite: BEGIN IMMEDIATE), so
    // concurrent writers wait their turn (up to the busy timeout) instead of failing when they
    // would upgrade a read lock; commit() makes it durable; rollback() undoes it.
    virtual Status begin() = 0;
    virtual Status commit() = 0;
    virtual Status rollback() = 0;
};

// prepare(sql) and run(params) once.
Result<std::vector<SqlRow>> runSql(LedgerEngine& engine, const std::string& sql,
                                   const std::vector<SqlValue>& params = {});

// A write transaction that rolls back unless commit() is called (errors and early returns leave
// the database as it was).
class LedgerTransaction {
public:
    explicit LedgerTransaction(LedgerEngine& engine) : m_engine(engine) {}
    ~LedgerTransaction();
    LedgerTransaction(const LedgerTransaction&) = delete;
    LedgerTransaction& operator=(const LedgerTransaction&) = delete;
    Status begin();
    Status commit();

private:
    LedgerEngine& m_engine;
    bool m_open = false;
};

}  // namespace faultline
