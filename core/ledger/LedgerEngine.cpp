#include "LedgerEngine.h"

#include <charconv>

namespace faultline {

std::string sqlText(const SqlValue& v)
{
    if (const auto* s = std::get_if<std::string>(&v)) return *s;
    if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(&v)) return std::to_string(*d);
    return {};
}

int64_t sqlInt(const SqlValue& v)
{
    if (const auto* i = std::get_if<int64_t>(&v)) return *i;
    if (const auto* d = std::get_if<double>(&v)) return static_cast<int64_t>(*d);
    if (const auto* s = std::get_if<std::string>(&v)) {
        int64_t out = 0;
        std::from_chars(s->data(), s->data() + s->size(), out);
        return out;
    }
    return 0;
}

double sqlReal(const SqlValue& v)
{
    if (const auto* d = std::get_if<double>(&v)) return *d;
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* s = std::get_if<std::string>(&v)) {
        try {
            return std::stod(*s);
        } catch (...) {
            return 0;
        }
    }
    return 0;
}

std::optional<double> sqlOptionalReal(const SqlValue& v)
{
    if (sqlIsNull(v)) return std::nullopt;
    return sqlReal(v);
}

bool sqlIsNull(const SqlValue& v)
{
    return std::holds_alternative<std::monostate>(v);
}

Result<std::vector<std::vector<SqlRow>>> LedgerStatement::runBatch(
    const std::vector<std::vector<SqlValue>>& batch)
{
    std::vector<std::vector<SqlRow>> out;
    out.reserve(batch.size());
    for (const std::vector<SqlValue>& params : batch) {
        auto rows = run(params);
        if (!rows) return rows.error();
        out.push_back(std::move(*rows));
    }
    return out;
}

Result<std::vector<SqlRow>> runSql(LedgerEngine& engine, const std::string& sql,
                                   const std::vector<SqlValue>& params)
{
    auto stmt = engine.prepare(sql);
    if (!stmt) return stmt.error();
    return (*stmt)->run(params);
}

LedgerTransaction::~LedgerTransaction()
{
    if (m_open) m_engine.rollback();
}

Status LedgerTransaction::begin()
{
    if (Status s = m_engine.begin(); !s) return s;
    m_open = true;
    return {};
}

Status LedgerTransaction::commit()
{
    Status s = m_engine.commit();
    if (s) m_open = false;
    return s;
}

}  // namespace faultline
