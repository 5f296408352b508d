#include "SqliteEngine.h"

#include <sqlite3.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <thread>

namespace faultline {
namespace {

class SqliteStatement final : public LedgerStatement {
public:
    SqliteStatement(sqlite3* db, sqlite3_stmt* stmt, std::string path)
        : m_db(db), m_stmt(stmt), m_path(std::move(path))
    {
    }
    ~SqliteStatement() override { sqlite3_finalize(m_stmt); }

    Result<std::vector<SqlRow>> run(const std::vector<SqlValue>& params) override
    {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
        if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(m_stmt))
            return Error{m_path + ": statement expects " +
                             std::to_string(sqlite3_bind_parameter_count(m_stmt)) + " parameter(s), got " +
                             std::to_string(params.size()),
                         ErrorCode::Failed};
        for (size_t i = 0; i < params.size(); ++i) {
            const int at = static_cast<int>(i) + 1;
            int rc = SQLITE_OK;
            if (const auto* n = std::get_if<int64_t>(&params[i]))
                rc = sqlite3_bind_int64(m_stmt, at, *n);
            else if (const auto* d = std::get_if<double>(&params[i]))
                rc = sqlite3_bind_double(m_stmt, at, *d);
            else if (const auto* s = std::get_if<std::string>(&params[i]))
                rc = sqlite3_bind_text64(m_stmt, at, s->data(), s->size(), SQLITE_TRANSIENT, SQLITE_UTF8);
            else
                rc = sqlite3_bind_null(m_stmt, at);
            if (rc != SQLITE_OK) return error("binding a parameter");
        }
        std::vector<SqlRow> rows;
        for (;;) {
            const int rc = sqlite3_step(m_stmt);
            if (rc == SQLITE_DONE) break;
            if (rc != SQLITE_ROW) {
                Error e = error("running a statement");
                sqlite3_reset(m_stmt);
                return e;
            }
            const int n = sqlite3_column_count(m_stmt);
            SqlRow row(static_cast<size_t>(n));
            for (int c = 0; c < n; ++c) {
                switch (sqlite3_column_type(m_stmt, c)) {
                    case SQLITE_INTEGER:
                        row[c] = static_cast<int64_t>(sqlite3_column_int64(m_stmt, c));
                        break;
                    case SQLITE_FLOAT:
                        row[c] = sqlite3_column_double(m_stmt, c);
                        break;
                    case SQLITE_NULL:
                        break;
                    default: {
                        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, c));
                        row[c] = std::string(text ? text : "",
                                             static_cast<size_t>(sqlite3_column_bytes(m_stmt, c)));
                    }
                }
            }
            rows.push_back(std::move(row));
        }
        sqlite3_reset(m_stmt);
        return rows;
    }

private:
    Error error(const std::string& what) const
    {
        return Error{m_path + ": " + what + ": " + sqlite3_errmsg(m_db), ErrorCode::Io};
    }
    sqlite3* m_db;
    sqlite3_stmt* m_stmt;
    std::string m_path;
};

class SqliteEngine final : public LedgerEngine {
public:
    SqliteEngine(sqlite3* db, std::string path) : m_db(db), m_path(std::move(path)) {}
    ~SqliteEngine() override { sqlite3_close_v2(m_db); }

    std::string dialect() const override { return "sqlite"; }
    std::string location() const override { return m_path; }

    Status exec(const std::string& sql) override
    {
        char* message = nullptr;
        if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
            std::string text = message ? message : sqlite3_errmsg(m_db);
            sqlite3_free(message);
            return Error{m_path + ": " + text, ErrorCode::Io};
        }
        return {};
    }

    Result<std::unique_ptr<LedgerStatement>> prepare(const std::string& sql) override
    {
        const std::string mapped = sqliteParameters(sql);
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(m_db, mapped.c_str(), static_cast<int>(mapped.size()), &stmt, nullptr) !=
            SQLITE_OK)
            return Error{m_path + ": preparing a statement: " + sqlite3_errmsg(m_db), ErrorCode::Io};
        return std::unique_ptr<LedgerStatement>(std::make_unique<SqliteStatement>(m_db, stmt, m_path));
    }

    Status begin() override { return exec("BEGIN IMMEDIATE"); }
    Status commit() override { return exec("COMMIT"); }
    Status rollback() override { return exec("ROLLBACK"); }

private:
    sqlite3* m_db;
    std::string m_path;
};

}  // namespace

std::string sqliteParameters(const std::string& sql)
{
    std::string out;
    out.reserve(sql.size());
    char quote = 0;
    for (size_t i = 0; i < sql.size(); ++i) {
        const char c = sql[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '$' && i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
            out += '?';
            continue;
        }
        out += c;
    }
    return out;
}

Result<std::unique_ptr<LedgerEngine>> openSqliteEngine(const std::string& path)
{
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
        std::filesystem::create_directories(parent, ec);
        if (ec)
            return fileError(parent.string(), "cannot create the ledger's directory: " + ec.message(),
                             ErrorCode::Io);
    }
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
        return fileError(path, "not a regular file: cannot be a ledger", ErrorCode::Io);
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close_v2(db);
        return fileError(path, "cannot open the ledger: " + why, ErrorCode::Io);
    }
    auto engine = std::make_unique<SqliteEngine>(db, path);
    sqlite3_busy_timeout(db, static_cast<int>(kLedgerBusyTimeout.count()));
    // A file that is not a database fails here, on its first read. Switching a new file to WAL
    // takes an exclusive lock, and SQLite answers SQLITE_BUSY at once (its busy handler is not
    // called there) while another process creates or migrates the same ledger: retried until the
    // busy timeout.
    const auto deadline = std::chrono::steady_clock::now() + kLedgerBusyTimeout;
    Result<std::vector<SqlRow>> mode = runSql(*engine, "PRAGMA journal_mode=WAL");
    while (!mode) {
        const int code = sqlite3_errcode(db) & 0xff;
        if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || std::chrono::steady_clock::now() >= deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        mode = runSql(*engine, "PRAGMA journal_mode=WAL");
    }
    if (!mode) {
        const std::string why = sqlite3_errmsg(db);
        if ((sqlite3_errcode(db) & 0xff) == SQLITE_NOTADB) return fileError(path, "not a ledger: " + why);
        return fileError(path, "cannot open the ledger: " + why, ErrorCode::Io);
    }
    if (mode->empty() || sqlText(mode->front().front()) != "wal")
        return fileError(path, "cannot use write-ahead logging (journal mode " +
                                   (mode->empty() ? std::string("unknown") : sqlText(mode->front().front())) +
                                   ")");
    if (Status s = engine->exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON"); !s) return s.error();
    return std::unique_ptr<LedgerEngine>(std::move(engine));
}

}  // namespace faultline
