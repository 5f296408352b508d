#pragma once
// A child process spoken to in JSON lines over its stdin/stdout, with a watchdog: the
// orchestrator side of `faultline-worker`. POSIX only (fork/exec, pipes, poll).
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

class WorkerProcess {
public:
    enum class State { NotStarted, Running, Exited, Crashed, Killed };

    WorkerProcess() = default;
    ~WorkerProcess();
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;

    // Starts `program` with `args`. stderr is captured (the last 64 KiB kept).
    Status start(const std::string& program, const std::vector<std::string>& args);

    // Sends one line (a newline is appended).
    Status send(const std::string& line);

    enum class ReadOutcome { Line, Timeout, Closed, Cancelled };
    // Waits up to `timeout` for one line from the child's stdout; `cancel` (checked at least
    // every 100 ms) ends the wait early with Cancelled.
    ReadOutcome readLine(std::string& line, std::chrono::milliseconds timeout,
                         const std::atomic<bool>* cancel = nullptr);

    // Kills the child (SIGKILL) and reaps it.
    void kill();
    // Waits for the child to exit by itself for at most `timeout`, then kills it.
    void finish(std::chrono::milliseconds timeout);

    bool running();
    State state() const { return m_state; }
    // Exit code, or the signal number for Crashed/Killed.
    int exitStatus() const { return m_exitStatus; }
    // What the child wrote to stderr so far (the last 64 KiB).
    std::string stderrText();
    // "exited with code 3", "killed by signal 6 (Aborted)"
    std::string describeExit() const;
    pid_t pid() const { return m_pid; }

private:
    void drainStderr(int timeoutMs);
    bool reap(bool block);
    void closeFds();

    pid_t m_pid = -1;
    int m_in = -1, m_out = -1, m_err = -1;
    std::string m_outBuffer, m_errBuffer;
    State m_state = State::NotStarted;
    int m_exitStatus = 0;
    bool m_killedByUs = false;
};

}  // namespace faultline
