#include "LedgerLocation.h"

#include "PostgresEngine.h"
#include "SqliteEngine.h"

namespace faultline {
namespace {

bool startsWith(const std::string& s, const std::string& prefix)
{
    return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

Result<std::string> defaultLedgerPath(const EnvLookup& env)
{
    if (auto xdg = env("XDG_DATA_HOME"); xdg && !xdg->empty() && xdg->front() == '/')
        return *xdg + "/faultline/ledger.sqlite";
    if (auto home = env("HOME"); home && !home->empty())
        return *home + "/.local/share/faultline/ledger.sqlite";
    return Error{"no ledger location: neither XDG_DATA_HOME nor HOME is set (give --ledger PATH)",
                 ErrorCode::Usage};
}

Result<LedgerLocation> parseLedgerLocation(const std::string& spec, const EnvLookup& env)
{
    LedgerLocation l;
    if (spec.empty()) {
        auto path = defaultLedgerPath(env);
        if (!path) return path.error();
        l.path = *path;
        return l;
    }
    if (startsWith(spec, "postgresql://") || startsWith(spec, "postgres://")) {
        l.kind = LedgerLocation::Kind::Postgresql;
        l.url = spec;
        return l;
    }
    if (startsWith(spec, "sqlite://")) {
        l.path = spec.substr(9);
        if (l.path.empty() || l.path.front() != '/')
            return Error{"--ledger " + spec + ": a sqlite:// URL needs an absolute path (sqlite:///abs/path)",
                         ErrorCode::Usage};
        return l;
    }
    if (const size_t colon = spec.find("://"); colon != std::string::npos)
        return Error{"--ledger " + spec + ": unknown scheme '" + spec.substr(0, colon) +
                         "' (a path, sqlite:///abs/path or postgresql://...)",
                     ErrorCode::Usage};
    l.path = spec;
    return l;
}

Result<std::unique_ptr<LedgerEngine>> openLedgerEngine(const LedgerLocation& location)
{
    if (location.kind == LedgerLocation::Kind::Postgresql) return openPostgresEngine(location.url);
    return openSqliteEngine(location.path);
}

}  // namespace faultline
