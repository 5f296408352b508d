#pragma once
// NVML loaded at run time with dlopen, declaring only the few functions and types Faultline uses
// (there is no nvml.h at build time, and machines without a driver must still run the worker).
#include <optional>
#include <string>

#include "DeviceInventory.h"

namespace faultline::cuda {

class NvmlLibrary {
public:
    // Loads `library` and calls nvmlInit_v2; check ok() / error().
    explicit NvmlLibrary(const std::string& library);
    ~NvmlLibrary();
    NvmlLibrary(const NvmlLibrary&) = delete;
    NvmlLibrary& operator=(const NvmlLibrary&) = delete;

    bool ok() const { return m_ok; }
    const std::string& error() const { return m_error; }
    std::string driverVersion() const;
    // The device with this PCI bus id ("0000:17:00.0"); nullopt when NVML does not know it.
    std::optional<GpuHealth> query(const std::string& pciBusId) const;

private:
    struct Api;
    void* m_handle = nullptr;
    Api* m_api = nullptr;
    bool m_ok = false;
    std::string m_error;
};

}  // namespace faultline::cuda
