#pragma once
// A throwaway PostgreSQL server for the ledger tests: initdb into a temporary directory, then
// `postgres` listening only on a Unix socket there (no TCP, trust authentication, no fsync),
// stopped by its pid (SIGINT, then SIGKILL) when the test process ends, and by a watchdog process
// if the test process dies first. As root (CI), the server runs as the `postgres` user (else
// `nobody`) through setpriv, since PostgreSQL refuses to run as root.
#include <sys/types.h>

#include <memory>
#include <string>

namespace faultline::test {

class PostgresServer {
public:
    // The server of this test process, started on first use. nullptr when it cannot run: `why`
    // says why, and `binariesMissing` whether it is because the server's binaries are not installed
    // (a skip) rather than a failure to start them (a failure).
    static PostgresServer* shared(std::string* why, bool* binariesMissing);

    ~PostgresServer();
    PostgresServer(const PostgresServer&) = delete;
    PostgresServer& operator=(const PostgresServer&) = delete;

    // A new empty database, as a ledger URL (postgresql:///NAME?host=SOCKET_DIR&port=...); "" with
    // `why` set when it cannot be created.
    std::string freshDatabase(std::string* why);
    // The URL of database `name` on this server.
    std::string url(const std::string& name) const;
    pid_t pid() const { return m_pid; }

private:
    PostgresServer() = default;
    bool start(const std::string& bin, std::string* why);
    void stop();

    std::string m_dir;  // the temporary directory: data/, the socket, server.log
    pid_t m_pid = -1;
    pid_t m_watchdog = -1;
    int m_databases = 0;
};

// The directory of the PostgreSQL server binaries (initdb, postgres): $FAULTLINE_PG_BIN when set,
// else the newest /usr/lib/postgresql/N/bin, else the directory of `initdb` on PATH; "" when none
// has both.
std::string postgresBinDir();

}  // namespace faultline::test
