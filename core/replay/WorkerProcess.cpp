#include "WorkerProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace faultline {
namespace {
constexpr size_t kStderrKeep = 64 * 1024;

void setCloexec(int fd)
{
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}
}  // namespace

WorkerProcess::~WorkerProcess()
{
    if (m_pid > 0 && m_state == State::Running) kill();
    closeFds();
}

void WorkerProcess::closeFds()
{
    for (int* fd : {&m_in, &m_out, &m_err})
        if (*fd >= 0) {
            ::close(*fd);
            *fd = -1;
        }
}

Status WorkerProcess::start(const std::string& program, const std::vector<std::string>& args)
{
    int in[2], out[2], err[2];
    if (::pipe(in) != 0)
        return Error{"cannot create pipe: " + std::string(std::strerror(errno)), ErrorCode::Io};
    if (::pipe(out) != 0) {
        ::close(in[0]);
        ::close(in[1]);
        return Error{"cannot create pipe: " + std::string(std::strerror(errno)), ErrorCode::Io};
    }
    if (::pipe(err) != 0) {
        for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
        return Error{"cannot create pipe: " + std::string(std::strerror(errno)), ErrorCode::Io};
    }
    std::vector<std::string> argvStore;
    argvStore.push_back(program);
    argvStore.insert(argvStore.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argvStore) argv.push_back(a.data());
    argv.push_back(nullptr);

    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
        return Error{"cannot start " + program + ": " + std::strerror(errno), ErrorCode::Io};
    }
    if (pid == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
        ::setpgid(0, 0);
        // The worker dies with the thread that started it, also when the orchestrator is killed
        // (kill -9 included): a hung worker must not keep its GPU. (The parent may be gone already.)
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(1);
        ::execv(program.c_str(), argv.data());
        const char msg[] = "faultline: cannot execute worker\n";
        ssize_t ignored = ::write(2, msg, sizeof msg - 1);
        (void)ignored;
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    m_in = in[1];
    m_out = out[0];
    m_err = err[0];
    for (int fd : {m_in, m_out, m_err}) setCloexec(fd);
    ::fcntl(m_err, F_SETFL, ::fcntl(m_err, F_GETFL) | O_NONBLOCK);
    ::signal(SIGPIPE, SIG_IGN);
    m_pid = pid;
    m_state = State::Running;
    m_outBuffer.clear();
    m_errBuffer.clear();
    m_killedByUs = false;
    return {};
}

Status WorkerProcess::send(const std::string& line)
{
    if (m_state != State::Running || m_in < 0) return Error{"worker is not running", ErrorCode::Failed};
    std::string data = line + "\n";
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(m_in, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error{"worker stopped reading its input: " + std::string(std::strerror(errno)),
                         ErrorCode::Failed};
        }
        done += size_t(n);
    }
    return {};
}

void WorkerProcess::drainStderr(int timeoutMs)
{
    if (m_err < 0) return;
    pollfd p{m_err, POLLIN, 0};
    while (::poll(&p, 1, timeoutMs) > 0) {
        char buf[4096];
        const ssize_t n = ::read(m_err, buf, sizeof buf);
        if (n <= 0) break;
        m_errBuffer.append(buf, size_t(n));
        if (m_errBuffer.size() > kStderrKeep) m_errBuffer.erase(0, m_errBuffer.size() - kStderrKeep);
        timeoutMs = 0;
    }
}

WorkerProcess::ReadOutcome WorkerProcess::readLine(std::string& line, std::chrono::milliseconds timeout,
                                                   const std::atomic<bool>* cancel)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const size_t nl = m_outBuffer.find('\n');
        if (nl != std::string::npos) {
            line = m_outBuffer.substr(0, nl);
            m_outBuffer.erase(0, nl + 1);
            return ReadOutcome::Line;
        }
        if (m_out < 0) return ReadOutcome::Closed;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return ReadOutcome::Timeout;
        if (cancel && cancel->load()) return ReadOutcome::Cancelled;
        pollfd fds[2] = {{m_out, POLLIN, 0}, {m_err, POLLIN, 0}};
        const int rc =
            ::poll(fds, m_err >= 0 ? 2 : 1, int(std::min<int64_t>(left.count(), cancel ? 100 : 1000)));
        if (rc < 0 && errno != EINTR) return ReadOutcome::Closed;
        if (m_err >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) drainStderr(0);
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buf[65536];
            const ssize_t n = ::read(m_out, buf, sizeof buf);
            if (n > 0) {
                m_outBuffer.append(buf, size_t(n));
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                ::close(m_out);
                m_out = -1;
                drainStderr(200);
                reap(true);
                if (m_outBuffer.find('\n') == std::string::npos) return ReadOutcome::Closed;
            }
        }
    }
}

bool WorkerProcess::reap(bool block)
{
    if (m_pid <= 0 || m_state != State::Running) return true;
    int status = 0;
    const pid_t r = ::waitpid(m_pid, &status, block ? 0 : WNOHANG);
    if (r == 0) return false;
    if (r < 0) {
        m_state = State::Exited;
        return true;
    }
    if (WIFEXITED(status)) {
        m_state = State::Exited;
        m_exitStatus = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        m_state = m_killedByUs ? State::Killed : State::Crashed;
        m_exitStatus = WTERMSIG(status);
    }
    return true;
}

bool WorkerProcess::running()
{
    reap(false);
    return m_state == State::Running;
}

void WorkerProcess::kill()
{
    if (m_pid > 0 && m_state == State::Running) {
        m_killedByUs = true;
        ::kill(-m_pid, SIGKILL);  // the worker's whole process group
        ::kill(m_pid, SIGKILL);
        reap(true);
    }
    drainStderr(0);
    closeFds();
}

void WorkerProcess::finish(std::chrono::milliseconds timeout)
{
    if (m_in >= 0) {
        ::close(m_in);
        m_in = -1;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (m_state == State::Running && std::chrono::steady_clock::now() < deadline) {
        drainStderr(10);
        if (reap(false)) break;
        ::usleep(10000);
    }
    if (m_state == State::Running) kill();
    drainStderr(0);
    closeFds();
}

std::string WorkerProcess::stderrText()
{
    drainStderr(0);
    return m_errBuffer;
}

std::string WorkerProcess::describeExit() const
{
    switch (m_state) {
        case State::NotStarted:
            return "not started";
        case State::Running:
            return "running";
        case State::Exited:
            return "exited with code " + std::to_string(m_exitStatus);
        case State::Crashed:
            return "killed by signal " + std::to_string(m_exitStatus) + " (" + ::strsignal(m_exitStatus) +
                   ")";
        case State::Killed:
            return "killed by the watchdog";
    }
    return "unknown";
}

}  // namespace faultline
