#pragma once
// The ledger tests run their whole suite once per engine: SQLite, then PostgreSQL on a server the
// test starts (PostgresServer.h). A test gets its ledger from ledgerSpec(), which names a file for
// SQLite and a new database for PostgreSQL; FL_LEDGER_ENGINE_INIT() in the test class's init()
// skips the PostgreSQL half with the reason where the server's binaries are not installed, and
// fails it where they are but the server cannot start.
#include <QObject>
#include <QString>
#include <QtTest>

#include <string>

namespace faultline::test {

enum class LedgerEngineKind { Sqlite, Postgresql };

// The engine of the current run.
LedgerEngineKind ledgerEngine();
const char* ledgerEngineName();

// Runs `test`'s functions once per engine (QTest::qExec with `argc`/`argv`); non-zero when a run
// failed.
int runOnEachLedgerEngine(QObject& test, int argc, char** argv);

// Why the current engine cannot run ("" when it can); `skip`: it is not installed.
std::string ledgerEngineUnavailable(bool* skip);

// A new, empty ledger for the current engine: `dir/name.sqlite`, or a new database on the test
// server as a postgresql:// URL. A failure to create one is a warning and a spec that fails to open.
std::string ledgerSpec(const QString& dir, const QString& name);

}  // namespace faultline::test

// In a ledger test class's init(): skips (binaries missing) or fails (server cannot start) each
// test of the PostgreSQL run.
#define FL_LEDGER_ENGINE_INIT()                                                        \
    do {                                                                               \
        bool flSkip_ = false;                                                          \
        const std::string flWhy_ = faultline::test::ledgerEngineUnavailable(&flSkip_); \
        if (!flWhy_.empty()) {                                                         \
            if (flSkip_) QSKIP(flWhy_.c_str());                                        \
            QFAIL(flWhy_.c_str());                                                     \
        }                                                                              \
    } while (0)

// main() of a ledger test: the suite on each engine.
#define FL_LEDGER_TEST_MAIN(TestObject)                                  \
    int main(int argc, char** argv)                                      \
    {                                                                    \
        QCoreApplication app(argc, argv);                                \
        TestObject test;                                                 \
        return faultline::test::runOnEachLedgerEngine(test, argc, argv); \
    }
