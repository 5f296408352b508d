#pragma once
// Device-thread helpers of CudaTarget: a device allocation that frees itself, and the execution
// of one op that keeps its first CUDA error (later calls are skipped once one failed).
#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <vector>

#include "CudaRuntime.h"
#include "core/Result.h"

namespace faultline::cuda {

// A device allocation owned by the device thread (freed there too).
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    ~DeviceBuffer() { cudaFree(m_ptr); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    int allocate(size_t bytes)
    {
        if (bytes == 0) return 0;
        return int(cudaMalloc(&m_ptr, bytes));
    }
    template <class T>
    T* as() const
    {
        return static_cast<T*>(m_ptr);
    }
    void release()
    {
        cudaFree(m_ptr);
        m_ptr = nullptr;
    }

private:
    void* m_ptr = nullptr;
};

// One op's execution on the device thread: collects the first CUDA error.
class OpRun {
public:
    OpRun(int device, cudaStream_t stream) : m_device(device), m_stream(stream) {}
    bool ok() const { return m_code == 0 && !m_error; }
    int code() const { return m_code; }
    Error error() const { return m_error ? *m_error : cudaErrorFor(m_device, m_what, m_code); }
    void check(int rc, const char* what)
    {
        if (rc != 0 && ok()) {
            m_code = rc;
            m_what = what;
        }
    }
    void fail(Error e)
    {
        if (ok()) m_error = std::move(e);
    }
    // A failure with a message of its own that may also carry a CUDA error code (sticky check).
    void fail(Error e, int cudaCode)
    {
        if (!ok()) return;
        m_error = std::move(e);
        m_code = cudaCode;
    }
    // Uploads host bytes.
    template <class T>
    T* uploadBytes(DeviceBuffer& buf, const void* bytes, size_t count)
    {
        if (!ok()) return nullptr;
        check(buf.allocate(count), "cudaMalloc");
        if (ok() && count)
            check(int(cudaMemcpyAsync(buf.as<void>(), bytes, count, cudaMemcpyHostToDevice, m_stream)),
                  "cudaMemcpy to device");
        return buf.as<T>();
    }
    // Uploads values as float.
    float* upload(DeviceBuffer& buf, const std::vector<float>& v)
    {
        return uploadBytes<float>(buf, v.data(), v.size() * sizeof(float));
    }
    template <class T>
    T* allocate(DeviceBuffer& buf, size_t count)
    {
        if (!ok()) return nullptr;
        check(buf.allocate(count * sizeof(T)), "cudaMalloc");
        return buf.as<T>();
    }
    template <class T>
    void download(std::vector<T>& dst, const DeviceBuffer& buf, size_t count)
    {
        dst.resize(count);
        if (!ok() || count == 0) return;
        check(int(cudaMemcpyAsync(dst.data(), buf.as<T>(), count * sizeof(T), cudaMemcpyDeviceToHost,
                                  m_stream)),
              "cudaMemcpy to host");
    }
    int device() const { return m_device; }
    cudaStream_t stream() const { return m_stream; }

private:
    int m_device;
    cudaStream_t m_stream;
    int m_code = 0;
    const char* m_what = "";
    std::optional<Error> m_error;
};

}  // namespace faultline::cuda
