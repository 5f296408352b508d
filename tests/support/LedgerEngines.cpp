#include "LedgerEngines.h"

#include <cstdio>

#include "PostgresServer.h"

namespace faultline::test {
namespace {

LedgerEngineKind g_engine = LedgerEngineKind::Sqlite;

}  // namespace

LedgerEngineKind ledgerEngine()
{
    return g_engine;
}

const char* ledgerEngineName()
{
    return g_engine == LedgerEngineKind::Sqlite ? "sqlite" : "postgresql";
}

int runOnEachLedgerEngine(QObject& test, int argc, char** argv)
{
    int failed = 0;
    for (LedgerEngineKind engine : {LedgerEngineKind::Sqlite, LedgerEngineKind::Postgresql}) {
        g_engine = engine;
        std::printf("=== ledger engine: %s ===\n", ledgerEngineName());
        std::fflush(stdout);
        failed += QTest::qExec(&test, argc, argv);
    }
    return failed;
}

std::string ledgerEngineUnavailable(bool* skip)
{
    *skip = false;
    if (g_engine == LedgerEngineKind::Sqlite) return {};
    std::string why;
    if (PostgresServer::shared(&why, skip)) return {};
    return "PostgreSQL: " + why;
}

std::string ledgerSpec(const QString& dir, const QString& name)
{
    if (g_engine == LedgerEngineKind::Sqlite) return (dir + "/" + name + ".sqlite").toStdString();
    std::string why;
    PostgresServer* server = PostgresServer::shared(&why, nullptr);
    const std::string url = server ? server->freshDatabase(&why) : std::string();
    if (url.empty()) {
        qWarning("cannot create a PostgreSQL ledger: %s", why.c_str());
        return "postgresql:///no-database?host=/nonexistent";
    }
    return url;
}

}  // namespace faultline::test
