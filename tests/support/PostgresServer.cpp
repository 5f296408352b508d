#include "PostgresServer.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "core/ledger/PostgresEngine.h"

extern char** environ;

namespace faultline::test {
namespace {

namespace fs = std::filesystem;
constexpr int kPort = 5432;  // names the socket file only: the server listens on no TCP port

bool executable(const fs::path& p)
{
    return ::access(p.c_str(), X_OK) == 0;
}

// Spawns `argv` with stdout and stderr appended to `log`; -1 when it cannot.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log)
{
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

std::string tail(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    std::string text = s.str();
    if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
    return text;
}

// Waits for `pid` up to `timeout`; its exit status, or -1 when it is still running.
int waitFor(pid_t pid, std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0) return 0;  // not our child any more
        if (std::chrono::steady_clock::now() >= deadline) return -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

std::unique_ptr<PostgresServer>& sharedSlot()
{
    static std::unique_ptr<PostgresServer> server;
    return server;
}

}  // namespace

std::string postgresBinDir()
{
    if (const char* env = std::getenv("FAULTLINE_PG_BIN"); env && *env)
        return executable(fs::path(env) / "initdb") && executable(fs::path(env) / "postgres") ? env : "";
    std::string best;
    int bestVersion = -1;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
        const fs::path bin = entry.path() / "bin";
        const int version = std::atoi(entry.path().filename().c_str());
        if (version > bestVersion && executable(bin / "initdb") && executable(bin / "postgres")) {
            bestVersion = version;
            best = bin.string();
        }
    }
    if (!best.empty()) return best;
    if (const char* path = std::getenv("PATH")) {
        std::stringstream dirs(path);
        for (std::string dir; std::getline(dirs, dir, ':');)
            if (!dir.empty() && executable(fs::path(dir) / "initdb") &&
                executable(fs::path(dir) / "postgres"))
                return dir;
    }
    return {};
}

PostgresServer* PostgresServer::shared(std::string* why, bool* binariesMissing)
{
    static std::string failure;
    static bool missing = false;
    static bool tried = false;
    if (!tried) {
        tried = true;
        const std::string bin = postgresBinDir();
        if (bin.empty()) {
            missing = true;
            failure =
                "no PostgreSQL server binaries (initdb and postgres in $FAULTLINE_PG_BIN when set, else "
                "/usr/lib/postgresql/N/bin or PATH): install Debian's postgresql (scripts/setup-deps)";
        } else {
            std::unique_ptr<PostgresServer> server(new PostgresServer());
            if (server->start(bin, &failure)) sharedSlot() = std::move(server);
        }
    }
    if (why) *why = failure;
    if (binariesMissing) *binariesMissing = missing;
    return sharedSlot().get();
}

bool PostgresServer::start(const std::string& bin, std::string* why)
{
    char pattern[] = "/tmp/faultline-pg-XXXXXX";
    if (!::mkdtemp(pattern)) {
        *why = "cannot create a temporary directory for the PostgreSQL server";
        return false;
    }
    m_dir = pattern;
    const std::string log = m_dir + "/server.log", data = m_dir + "/data";
    // PostgreSQL refuses to run as root: as root, the server and initdb run as another user, who
    // owns the directory.
    std::vector<std::string> as;
    if (::geteuid() == 0) {
        const passwd* user = ::getpwnam("postgres");
        if (!user) user = ::getpwnam("nobody");
        if (!user || !executable("/usr/bin/setpriv")) {
            *why =
                "running as root without a `postgres` or `nobody` user or /usr/bin/setpriv: cannot start "
                "PostgreSQL (it refuses to run as root)";
            return false;
        }
        if (::chown(m_dir.c_str(), user->pw_uid, user->pw_gid) != 0) {
            *why = "cannot hand " + m_dir + " to user " + user->pw_name;
            return false;
        }
        as = {"/usr/bin/setpriv", "--reuid=" + std::to_string(user->pw_uid),
              "--regid=" + std::to_string(user->pw_gid), "--clear-groups"};
    }
    ::chmod(m_dir.c_str(), 0700);
    auto command = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), as.begin(), as.end());
        return argv;
    };
    const pid_t initdb = spawn(command({bin + "/initdb", "-D", data, "-U", "faultline", "-A", "trust", "-E",
                                        "UTF8", "--locale=C", "--no-sync"}),
                               log);
    if (initdb < 0 || waitFor(initdb, std::chrono::minutes(2)) != 0) {
        *why = "initdb failed (" + log + "):\n" + tail(log);
        return false;
    }
    m_pid = spawn(command({bin + "/postgres", "-D", data, "-k", m_dir, "-p", std::to_string(kPort), "-c",
                           "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c",
                           "full_page_writes=off", "-c", "max_connections=200"}),
                  log);
    if (m_pid < 0) {
        *why = "cannot run " + bin + "/postgres";
        return false;
    }
    // Stops the server if this process dies without stopping it.
    const std::string me = std::to_string(::getpid()), server = std::to_string(m_pid);
    m_watchdog = spawn(
        {"/bin/sh", "-c",
         "while kill -0 " + me + " 2>/dev/null; do sleep 1; done; kill -INT " + server +
             " 2>/dev/null; while kill -0 " + server + " 2>/dev/null; do sleep 0.2; done; rm -rf " + m_dir},
        "/dev/null");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
        if (openPostgresEngine(url("postgres"))) return true;
        if (waitFor(m_pid, std::chrono::milliseconds(0)) >= 0) {
            m_pid = -1;
            *why = "the PostgreSQL server stopped while starting (" + log + "):\n" + tail(log);
            return false;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            *why = "the PostgreSQL server did not answer within 60 s (" + log + "):\n" + tail(log);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

void PostgresServer::stop()
{
    if (m_pid > 0) {
        ::kill(m_pid, SIGINT);  // fast shutdown
        if (waitFor(m_pid, std::chrono::seconds(20)) < 0) {
            ::kill(m_pid, SIGKILL);
            waitFor(m_pid, std::chrono::seconds(5));
        }
        m_pid = -1;
    }
    if (m_watchdog > 0) {
        ::kill(m_watchdog, SIGKILL);
        waitFor(m_watchdog, std::chrono::seconds(5));
        m_watchdog = -1;
    }
    if (!m_dir.empty()) {
        std::error_code ec;
        fs::remove_all(m_dir, ec);
        m_dir.clear();
    }
}

PostgresServer::~PostgresServer()
{
    stop();
}

std::string PostgresServer::url(const std::string& name) const
{
    return "postgresql:///" + name + "?host=" + m_dir + "&port=" + std::to_string(kPort) + "&user=faultline";
}

std::string PostgresServer::freshDatabase(std::string* why)
{
    auto admin = openPostgresEngine(url("postgres"));
    if (!admin) {
        *why = admin.message();
        return {};
    }
    const std::string name = "ledger_" + std::to_string(::getpid()) + "_" + std::to_string(++m_databases);
    if (Status s = (*admin)->exec("CREATE DATABASE " + name); !s) {
        *why = s.message();
        return {};
    }
    return url(name);
}

}  // namespace faultline::test
