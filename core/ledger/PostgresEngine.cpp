#include "PostgresEngine.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace faultline {
namespace {

// The key of the ledger's write lock (pg_advisory_xact_lock): "faultlne" as a 64-bit number.
constexpr const char* kWriteLockKey = "7377017279937932901";

// Type OIDs of the columns read back as numbers (the server's catalogue, pg_type).
constexpr Oid kBoolOid = 16, kInt8Oid = 20, kInt2Oid = 21, kInt4Oid = 23, kOidOid = 26, kFloat4Oid = 700,
              kFloat8Oid = 701, kNumericOid = 1700;

std::string trimmed(const char* message)
{
    std::string s = message ? message : "";
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// A parameter as the text the server parses: integers in decimal, reals exactly (17 digits;
// PostgreSQL's spelling of infinities and NaN).
std::string parameterText(const SqlValue& v)
{
    if (const auto* d = std::get_if<double>(&v)) {
        if (std::isnan(*d)) return "NaN";
        if (std::isinf(*d)) return *d > 0 ? "Infinity" : "-Infinity";
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", *d);
        return buf;
    }
    return sqlText(v);
}

SqlValue columnValue(const PGresult* res, int row, int column)
{
    if (PQgetisnull(res, row, column)) return {};
    const char* text = PQgetvalue(res, row, column);
    switch (PQftype(res, column)) {
        case kInt8Oid:
        case kInt2Oid:
        case kInt4Oid:
        case kOidOid:
            return static_cast<int64_t>(std::strtoll(text, nullptr, 10));
        case kBoolOid:
            return static_cast<int64_t>(text[0] == 't' ? 1 : 0);
        case kFloat4Oid:
        case kFloat8Oid:
        case kNumericOid:
            return std::strtod(text, nullptr);
        default:
            return std::string(text, static_cast<size_t>(PQgetlength(res, row, column)));
    }
}

struct ResultDeleter {
    void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

class PostgresStatement final : public LedgerStatement {
public:
    PostgresStatement(PGconn* conn, std::string name, std::string location)
        : m_conn(conn), m_name(std::move(name)), m_location(std::move(location))
    {
    }
    ~PostgresStatement() override
    {
        // Not transactional; in a transaction that failed it fails too and the statement stays
        // until the connection closes (harmless).
        PQclear(PQexec(m_conn, ("DEALLOCATE " + m_name).c_str()));
    }

    Result<std::vector<SqlRow>> run(const std::vector<SqlValue>& params) override
    {
        Parameters p;
        if (Status s = p.set(params, m_location); !s) return s.error();
        ResultPtr res(
            PQexecPrepared(m_conn, m_name.c_str(), p.count(), p.values.data(), nullptr, nullptr, 0));
        return rowsOf(res.get());
    }

    // The batch in pipeline mode: every statement sent, then one sync, then the results read, in
    // slices small enough that neither side's socket buffer fills while the other writes.
    Result<std::vector<std::vector<SqlRow>>> runBatch(
        const std::vector<std::vector<SqlValue>>& batch) override
    {
        constexpr size_t kSlice = 256;
        std::vector<std::vector<SqlRow>> out;
        out.reserve(batch.size());
        for (size_t start = 0; start < batch.size(); start += kSlice) {
            const size_t end = std::min(batch.size(), start + kSlice);
            if (end - start == 1) {
                auto rows = run(batch[start]);
                if (!rows) return rows.error();
                out.push_back(std::move(*rows));
                continue;
            }
            if (PQenterPipelineMode(m_conn) != 1)
                return Error{m_location + ": cannot enter pipeline mode: " + trimmed(PQerrorMessage(m_conn)),
                             ErrorCode::Io};
            std::optional<Error> failure;
            size_t sent = 0;
            for (size_t i = start; i < end && !failure; ++i) {
                Parameters p;
                if (Status s = p.set(batch[i], m_location); !s) {
                    failure = s.error();
                } else if (PQsendQueryPrepared(m_conn, m_name.c_str(), p.count(), p.values.data(), nullptr,
                                               nullptr, 0) != 1) {
                    failure = Error{m_location + ": sending a statement: " + trimmed(PQerrorMessage(m_conn)),
                                    ErrorCode::Io};
                } else {
                    ++sent;
                }
            }
            PQpipelineSync(m_conn);
            for (size_t i = 0; i < sent; ++i) {
                ResultPtr res(PQgetResult(m_conn));
                auto rows = rowsOf(res.get());
                while (PGresult* more = PQgetResult(m_conn)) PQclear(more);  // to the query's end
                if (!rows && !failure) failure = rows.error();
                if (rows && !failure) out.push_back(std::move(*rows));
            }
            // The sync's own result, then out of pipeline mode.
            for (;;) {
                ResultPtr res(PQgetResult(m_conn));
                if (PQstatus(m_conn) != CONNECTION_OK) break;  // lost: nothing more will come
                if (res && PQresultStatus(res.get()) == PGRES_PIPELINE_SYNC) break;
            }
            PQexitPipelineMode(m_conn);
            if (failure) return *failure;
        }
        return out;
    }

private:
    // A statement's parameters as the text the server parses (NULL for NULL).
    struct Parameters {
        std::vector<std::string> texts;
        std::vector<const char*> values;
        int count() const { return static_cast<int>(values.size()); }
        Status set(const std::vector<SqlValue>& params, const std::string& location)
        {
            texts.assign(params.size(), {});
            values.assign(params.size(), nullptr);
            for (size_t i = 0; i < params.size(); ++i) {
                if (sqlIsNull(params[i])) continue;
                texts[i] = parameterText(params[i]);
                if (texts[i].find('\0') != std::string::npos)
                    return Error{location + ": a text value holds a NUL byte, which PostgreSQL cannot store",
                                 ErrorCode::Format};
                values[i] = texts[i].c_str();
            }
            return {};
        }
    };

    Result<std::vector<SqlRow>> rowsOf(const PGresult* res) const
    {
        const ExecStatusType status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
        if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
            const std::string why = res && *PQresultErrorMessage(res) ? trimmed(PQresultErrorMessage(res))
                                                                      : trimmed(PQerrorMessage(m_conn));
            return Error{m_location + ": running a statement: " + why, ErrorCode::Io};
        }
        std::vector<SqlRow> rows;
        const int n = PQntuples(res), columns = PQnfields(res);
        rows.reserve(static_cast<size_t>(n));
        for (int r = 0; r < n; ++r) {
            SqlRow row(static_cast<size_t>(columns));
            for (int c = 0; c < columns; ++c) row[c] = columnValue(res, r, c);
            rows.push_back(std::move(row));
        }
        return rows;
    }

    PGconn* m_conn;
    std::string m_name;
    std::string m_location;
};

class PostgresEngine final : public LedgerEngine {
public:
    PostgresEngine(PGconn* conn, std::string location) : m_conn(conn), m_location(std::move(location)) {}
    ~PostgresEngine() override { PQfinish(m_conn); }

    std::string dialect() const override { return "postgresql"; }
    std::string location() const override { return m_location; }

    Status exec(const std::string& sql) override
    {
        ResultPtr res(PQexec(m_conn, sql.c_str()));
        const ExecStatusType status = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
            return Error{m_location + ": " + trimmed(PQerrorMessage(m_conn)), ErrorCode::Io};
        return {};
    }

    Result<std::unique_ptr<LedgerStatement>> prepare(const std::string& sql) override
    {
        std::string name = "faultline_" + std::to_string(++m_statements);
        ResultPtr res(PQprepare(m_conn, name.c_str(), sql.c_str(), 0, nullptr));
        if (!res || PQresultStatus(res.get()) != PGRES_COMMAND_OK)
            return Error{m_location + ": preparing a statement: " + trimmed(PQerrorMessage(m_conn)),
                         ErrorCode::Io};
        return std::unique_ptr<LedgerStatement>(
            std::make_unique<PostgresStatement>(m_conn, std::move(name), m_location));
    }

    Status begin() override
    {
        return exec(std::string("BEGIN; SELECT pg_advisory_xact_lock(") + kWriteLockKey + ")");
    }

    Status commit() override
    {
        // A transaction in which a statement failed answers COMMIT with ROLLBACK.
        ResultPtr res(PQexec(m_conn, "COMMIT"));
        if (!res || PQresultStatus(res.get()) != PGRES_COMMAND_OK)
            return Error{m_location + ": " + trimmed(PQerrorMessage(m_conn)), ErrorCode::Io};
        if (std::strcmp(PQcmdStatus(res.get()), "COMMIT") != 0)
            return Error{m_location + ": the transaction was rolled back, not committed", ErrorCode::Io};
        return {};
    }

    Status rollback() override { return exec("ROLLBACK"); }

private:
    PGconn* m_conn;
    std::string m_location;
    uint64_t m_statements = 0;
};

void ignoreNotice(void*, const char*) {}

}  // namespace

std::string redactedLedgerUrl(const std::string& url)
{
    std::string out = url;
    const size_t scheme = out.find("://");
    if (scheme != std::string::npos) {
        const size_t start = scheme + 3;
        const size_t end = out.find_first_of("/?", start);
        const size_t at = out.rfind('@', end == std::string::npos ? out.size() : end);
        if (at != std::string::npos && at >= start) {
            const size_t colon = out.find(':', start);
            if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
        }
    }
    for (size_t q = out.find('?'); q != std::string::npos && q < out.size();) {
        const size_t next = out.find('&', q + 1);
        const std::string_view param(out.data() + q + 1,
                                     (next == std::string::npos ? out.size() : next) - q - 1);
        if (param.substr(0, 9) == "password=") {
            const size_t valueAt = q + 10;
            out.replace(valueAt, (next == std::string::npos ? out.size() : next) - valueAt, "***");
            q = out.find('&', valueAt);
        } else {
            q = next;
        }
    }
    return out;
}

Result<std::unique_ptr<LedgerEngine>> openPostgresEngine(const std::string& url)
{
    const std::string location = redactedLedgerUrl(url);
    // A server that does not answer fails after 10 s (the URL's connect_timeout wins).
    const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
    const char* values[] = {"10", "faultline", url.c_str(), nullptr};
    PGconn* conn = PQconnectdbParams(keywords, values, 1);
    if (!conn)
        return Error{location + ": cannot connect to the ledger's server: out of memory", ErrorCode::Io};
    if (PQstatus(conn) != CONNECTION_OK) {
        const std::string why = trimmed(PQerrorMessage(conn));
        PQfinish(conn);
        return Error{location + ": cannot connect to the ledger's server: " + why, ErrorCode::Io};
    }
    PQsetNoticeProcessor(conn, ignoreNotice, nullptr);
    auto engine = std::make_unique<PostgresEngine>(conn, location);
    // Writers wait for the write lock as long as SQLite's do; times are UTC; no notices.
    const std::string settings = "SET lock_timeout = " + std::to_string(kLedgerBusyTimeout.count()) +
                                 "; SET client_min_messages = warning; SET TIME ZONE 'UTC'";
    if (Status s = engine->exec(settings); !s) return s.error();
    return std::unique_ptr<LedgerEngine>(std::move(engine));
}

}  // namespace faultline
