#include "LedgerQuery.h"

#include <algorithm>
#include <sstream>

#include "../Text.h"
#include "LedgerTime.h"

namespace faultline {
namespace {

struct Clause {
    std::vector<std::string> terms;
    std::vector<SqlValue> params;
    std::string add(SqlValue v)
    {
        params.push_back(std::move(v));
        return "$" + std::to_string(params.size());
    }
    std::string where() const { return terms.empty() ? "" : " WHERE " + joinText(terms, " AND "); }
};

// The filters every kind shares: host and time (`atExpr` is the row's time).
Clause commonClause(const LedgerQueryFilter& f, const std::string& atExpr, const std::string& hostExpr)
{
    Clause c;
    if (f.host) c.terms.push_back(hostExpr + " = " + c.add(*f.host));
    if (f.since) c.terms.push_back(atExpr + " >= " + c.add(*f.since));
    if (f.until) c.terms.push_back(atExpr + " < " + c.add(*f.until));
    return c;
}

Status collect(LedgerEngine& engine, const std::string& kind, const std::string& select, Clause clause,
               const std::string& orderBy, const LedgerQueryFilter& f, LedgerQueryResult& out,
               const std::vector<std::string>& names)
{
    const std::string sql =
        select + clause.where() + " ORDER BY " + orderBy + " LIMIT " + clause.add(int64_t(f.limit + 1));
    auto rows = runSql(engine, sql, clause.params);
    if (!rows) return rows.error();
    if (rows->size() > f.limit) {
        out.truncated = true;
        rows->resize(f.limit);
    }
    for (const SqlRow& r : *rows) {
        nlohmann::json j = {{"kind", kind}};
        for (size_t i = 0; i < names.size() && i < r.size(); ++i) {
            if (sqlIsNull(r[i]))
                j[names[i]] = nullptr;
            else if (const auto* n = std::get_if<int64_t>(&r[i]))
                j[names[i]] = *n;
            else if (const auto* d = std::get_if<double>(&r[i]))
                j[names[i]] = *d;
            else
                j[names[i]] = sqlText(r[i]);
        }
        out.rows.push_back(std::move(j));
    }
    return {};
}

}  // namespace

const std::vector<std::string>& ledgerFlagNames()
{
    static const std::vector<std::string> names = {"row_remap_pending", "row_remap_failure",
                                                   "sram_threshold_exceeded", "retired_pages_pending"};
    return names;
}

Result<LedgerQueryResult> queryLedger(LedgerEngine& engine, const LedgerQueryFilter& f)
{
    if (f.flag &&
        std::find(ledgerFlagNames().begin(), ledgerFlagNames().end(), *f.flag) == ledgerFlagNames().end())
        return Error{"--flag " + *f.flag + ": not a health flag (" + joinText(ledgerFlagNames()) + ")",
                     ErrorCode::Usage};
    for (const auto& [name, value] : {std::pair{"--since", f.since}, std::pair{"--until", f.until}})
        if (value && !isIsoDate(*value))
            return Error{std::string(name) + " " + *value +
                             ": not an ISO 8601 date or time (2026-12-01, 2026-12-01T10:00:00Z)",
                         ErrorCode::Usage};
    const bool any = f.flag || f.xid || f.verdict;
    LedgerQueryResult out;
    const std::vector<std::string> gpu = {"at", "host", "bus_id", "serial", "uuid"};
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> n = gpu;
        n.insert(n.end(), more.begin(), more.end());
        return n;
    };
    if (!any || f.xid) {
        Clause c = commonClause(f, "COALESCE(at, recorded_at)", "host");
        if (f.xid) c.terms.push_back("code = " + c.add(*f.xid));
        if (Status s = collect(
                engine, "event",
                "SELECT COALESCE(at, recorded_at), host, bus_id, serial, uuid, kind, code, name, message, "
                "action, source FROM xid_events",
                c, "COALESCE(at, recorded_at), id", f, out,
                with({"event_kind", "xid", "name", "message", "action", "source"}));
            !s)
            return s.error();
    }
    if (!any || f.flag) {
        Clause c = commonClause(f, "COALESCE(at, recorded_at)", "host");
        if (f.flag) c.terms.push_back("(',' || flags || ',') LIKE " + c.add("%," + *f.flag + ",%"));
        if (Status s = collect(
                engine, "health",
                "SELECT COALESCE(at, recorded_at), host, bus_id, serial, uuid, flags, ecc_corrected, "
                "ecc_uncorrected, remapped_correctable, remapped_uncorrectable, recommendation, source "
                "FROM health_snapshots",
                c, "COALESCE(at, recorded_at), id", f, out,
                with({"flags", "ecc_corrected_aggregate", "ecc_uncorrected_aggregate",
                      "remapped_rows_correctable", "remapped_rows_uncorrectable", "recommendation",
                      "source"}));
            !s)
            return s.error();
    }
    if (!any || f.verdict) {
        Clause c = commonClause(f, "COALESCE(c.at, c.recorded_at)", "t.host");
        if (f.verdict) c.terms.push_back("t.verdict = " + c.add(nameOf(*f.verdict)));
        if (Status s = collect(
                engine, "campaign",
                "SELECT COALESCE(c.at, c.recorded_at), t.host, t.bus_id, t.serial, t.uuid, c.id, "
                "c.trace, t.target, t.verdict, t.runs, t.failures, t.rate, c.file FROM campaign_targets "
                "t JOIN campaigns c ON c.id = t.campaign_id",
                c, "COALESCE(c.at, c.recorded_at), t.id", f, out,
                with({"campaign", "trace", "target", "verdict", "runs", "failures", "rate", "file"}));
            !s)
            return s.error();
    }
    if (!any) {
        Clause b = commonClause(f, "COALESCE(at, recorded_at)", "host");
        if (Status s =
                collect(engine, "boot", "SELECT COALESCE(at, recorded_at), host, boot_id, source FROM boots",
                        b, "COALESCE(at, recorded_at), id", f, out, {"at", "host", "boot_id", "source"});
            !s)
            return s.error();
        Clause e = commonClause(f, "COALESCE(at, recorded_at)", "host");
        if (Status s = collect(engine, "evidence",
                               "SELECT COALESCE(at, recorded_at), host, bus_id, serial, uuid, case_id, "
                               "manifest_digest, intact, path FROM evidence_bundles",
                               e, "COALESCE(at, recorded_at), id", f, out,
                               with({"case_id", "manifest_sha256", "intact", "path"}));
            !s)
            return s.error();
    }
    std::stable_sort(out.rows.begin(), out.rows.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
        return a.value("at", std::string()) < b.value("at", std::string());
    });
    return out;
}

nlohmann::json ledgerQueryJson(const LedgerQueryFilter& f, const LedgerQueryResult& r)
{
    nlohmann::json filter = nlohmann::json::object();
    if (f.flag) filter["flag"] = *f.flag;
    if (f.xid) filter["xid"] = *f.xid;
    if (f.verdict) filter["verdict"] = nameOf(*f.verdict);
    if (f.host) filter["host"] = *f.host;
    if (f.since) filter["since"] = *f.since;
    if (f.until) filter["until"] = *f.until;
    return {{"format", "faultline-ledger-query"},
            {"version", 1},
            {"filter", filter},
            {"rows", r.rows},
            {"count", r.rows.size()},
            {"truncated", r.truncated}};
}

std::string ledgerQueryText(const LedgerQueryResult& r)
{
    std::ostringstream out;
    for (const nlohmann::json& row : r.rows) {
        auto text = [&](const char* k) {
            auto it = row.find(k);
            if (it == row.end() || it->is_null()) return std::string();
            return printableText(it->is_string() ? it->get<std::string>() : it->dump());
        };
        const std::string kind = text("kind");
        out << text("at") << "  " << kind << "  " << text("host") << " " << text("bus_id") << "  serial "
            << text("serial") << " uuid " << text("uuid") << "  ";
        if (kind == "event")
            out << text("event_kind") << " " << text("xid") << " (" << text("name")
                << "): " << text("message");
        else if (kind == "health")
            out << "flags [" << text("flags") << "], recommendation " << text("recommendation");
        else if (kind == "campaign")
            out << text("target") << ": " << text("verdict") << ", " << text("failures") << "/"
                << text("runs") << " failed (campaign " << text("campaign") << ")";
        else if (kind == "boot")
            out << "boot " << text("boot_id");
        else
            out << "evidence case " << text("case_id") << " " << text("path");
        out << "\n";
    }
    out << r.rows.size() << " row(s)" << (r.truncated ? " (truncated: narrow the query)" : "") << "\n";
    return out.str();
}

}  // namespace faultline
