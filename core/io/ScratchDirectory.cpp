#include "ScratchDirectory.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

extern char** environ;

namespace faultline {
namespace {

// Starts a guardian `sh` reading the pipe's read end until it closes, then removing `dir`. It runs
// in a session of its own (Ctrl-C at the terminal does not reach it) with the usual termination
// signals blocked, so it outlives its owner however the owner ends. Returns the write end, or
// -1 when it could not start (the directory is then removed by the owner alone).
int startGuardian(const std::string& dir)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_adddup2(&actions, fds[0], 3);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    sigset_t blocked;
    sigemptyset(&blocked);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaddset(&blocked, s);
    posix_spawnattr_setsigmask(&attr, &blocked);
    sigset_t defaults;
    sigfillset(&defaults);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    // The guardian is a background job of this `sh`, which exits at once (waited for below), so
    // no zombie is left beside a long-running owner such as the GUI. `cat` returns when every
    // write end is closed; workers never hold one (O_CLOEXEC). The pause lets workers killed with
    // the owner finish dying before their files are removed.
    const char* script = "{ cat <&3 >/dev/null; sleep 1; rm -rf -- \"$0\"; } 3<&3 & exit 0";
    std::string dirArg = dir;
    std::vector<char*> argv = {const_cast<char*>("sh"), const_cast<char*>("-c"), const_cast<char*>(script),
                               dirArg.data(), nullptr};
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, "/bin/sh", &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(fds[0]);
    if (rc != 0) {
        ::close(fds[1]);
        return -1;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return fds[1];
}

}  // namespace

std::string ScratchDirectory::systemTemp()
{
    std::error_code ec;
    const auto tmp = std::filesystem::temp_directory_path(ec);
    return ec ? std::string("/tmp") : tmp.string();
}

Result<ScratchDirectory> ScratchDirectory::create(const std::string& parent, const std::string& prefix,
                                                  bool guarded)
{
    std::string pattern = (std::filesystem::path(parent) / (prefix + "XXXXXX")).string();
    if (!::mkdtemp(pattern.data()))
        return fileError(parent, "cannot create a scratch directory: " + std::string(std::strerror(errno)),
                         ErrorCode::Io);
    ScratchDirectory d;
    d.m_path = pattern;
    if (guarded) d.m_guardianPipe = startGuardian(d.m_path);
    return d;
}

ScratchDirectory::ScratchDirectory(ScratchDirectory&& o) noexcept
    : m_path(std::exchange(o.m_path, {})), m_guardianPipe(std::exchange(o.m_guardianPipe, -1))
{
}

ScratchDirectory& ScratchDirectory::operator=(ScratchDirectory&& o) noexcept
{
    if (this != &o) {
        release();
        m_path = std::exchange(o.m_path, {});
        m_guardianPipe = std::exchange(o.m_guardianPipe, -1);
    }
    return *this;
}

ScratchDirectory::~ScratchDirectory()
{
    release();
}

void ScratchDirectory::release()
{
    if (!m_path.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
        m_path.clear();
    }
    if (m_guardianPipe >= 0) {
        ::close(m_guardianPipe);
        m_guardianPipe = -1;
    }
}

std::string ScratchDirectory::file(const std::string& name) const
{
    return (std::filesystem::path(m_path) / name).string();
}

}  // namespace faultline
