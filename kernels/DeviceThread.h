#pragma once
// The one thread that owns a CUDA device's context (docs/architecture.md, "Processes and threads"). Every
// CUDA call for the device runs on it: callers hand it work with runOnDeviceThread and wait.
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

namespace faultline::cuda {

class DeviceThread {
public:
    DeviceThread();
    ~DeviceThread();  // finishes queued work, then joins
    DeviceThread(const DeviceThread&) = delete;
    DeviceThread& operator=(const DeviceThread&) = delete;

    // Runs `fn` on the device thread and returns its result (blocks the caller).
    template <class F>
    auto runOnDeviceThread(F fn) -> decltype(fn())
    {
        using R = decltype(fn());
        auto task = std::make_shared<std::packaged_task<R()>>(std::move(fn));
        std::future<R> done = task->get_future();
        post([task] { (*task)(); });
        return done.get();
    }

private:
    void post(std::function<void()> work);
    void loop();

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::function<void()>> m_queue;
    bool m_stop = false;
    std::thread m_thread;
};

}  // namespace faultline::cuda
