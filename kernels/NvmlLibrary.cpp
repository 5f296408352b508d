#include "NvmlLibrary.h"

#include <dlfcn.h>

namespace faultline::cuda {
namespace {

// The subset of nvml.h used here (NVML's ABI: int return codes, an opaque device handle).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kMemoryErrorCorrected = 0, kMemoryErrorUncorrected = 1;  // nvmlMemoryErrorType_t
constexpr unsigned kVolatileEcc = 0, kAggregateEcc = 1;                     // nvmlEccCounterType_t
constexpr unsigned kTemperatureGpu = 0;                                     // nvmlTemperatureSensors_t
constexpr unsigned kStringLength = 96;

}  // namespace

struct NvmlLibrary::Api {
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    const char* (*errorString)(nvmlReturn_t) = nullptr;
    nvmlReturn_t (*systemGetDriverVersion)(char*, unsigned) = nullptr;
    nvmlReturn_t (*getHandleByPciBusId)(const char*, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*getSerial)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*getBoardPartNumber)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*getVbiosVersion)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*getInforomImageVersion)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*getTotalEccErrors)(nvmlDevice_t, unsigned, unsigned, unsigned long long*) = nullptr;
    nvmlReturn_t (*getRemappedRows)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
    nvmlReturn_t (*getTemperature)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
    nvmlReturn_t (*getPowerUsage)(nvmlDevice_t, unsigned*) = nullptr;
};

namespace {

template <class F>
void bind(void* handle, F& fn, const char* name)
{
    fn = reinterpret_cast<F>(dlsym(handle, name));
}

}  // namespace

NvmlLibrary::NvmlLibrary(const std::string& library)
{
    m_handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_handle) {
        const char* why = dlerror();
        m_error = "no NVML: dlopen " + library + ": " + (why ? why : "failed");
        return;
    }
    m_api = new Api;
    Api& a = *m_api;
    bind(m_handle, a.init, "nvmlInit_v2");
    bind(m_handle, a.shutdown, "nvmlShutdown");
    bind(m_handle, a.errorString, "nvmlErrorString");
    bind(m_handle, a.systemGetDriverVersion, "nvmlSystemGetDriverVersion");
    bind(m_handle, a.getHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(m_handle, a.getSerial, "nvmlDeviceGetSerial");
    bind(m_handle, a.getBoardPartNumber, "nvmlDeviceGetBoardPartNumber");
    bind(m_handle, a.getVbiosVersion, "nvmlDeviceGetVbiosVersion");
    bind(m_handle, a.getInforomImageVersion, "nvmlDeviceGetInforomImageVersion");
    bind(m_handle, a.getTotalEccErrors, "nvmlDeviceGetTotalEccErrors");
    bind(m_handle, a.getRemappedRows, "nvmlDeviceGetRemappedRows");
    bind(m_handle, a.getTemperature, "nvmlDeviceGetTemperature");
    bind(m_handle, a.getPowerUsage, "nvmlDeviceGetPowerUsage");
    if (!a.init || !a.shutdown || !a.errorString || !a.getHandleByPciBusId) {
        m_error = "no NVML: " + library + " lacks nvmlInit_v2/nvmlDeviceGetHandleByPciBusId_v2";
        return;
    }
    const nvmlReturn_t rc = a.init();
    if (rc != kNvmlSuccess) {
        m_error = std::string("no NVML: nvmlInit_v2: ") + a.errorString(rc);
        return;
    }
    m_ok = true;
}

NvmlLibrary::~NvmlLibrary()
{
    if (m_ok) m_api->shutdown();
    delete m_api;
    if (m_handle) dlclose(m_handle);
}

std::string NvmlLibrary::driverVersion() const
{
    char buf[kStringLength] = {};
    if (!m_ok || !m_api->systemGetDriverVersion ||
        m_api->systemGetDriverVersion(buf, kStringLength) != kNvmlSuccess)
        return {};
    return buf;
}

std::optional<GpuHealth> NvmlLibrary::query(const std::string& pciBusId) const
{
    if (!m_ok) return std::nullopt;
    const Api& a = *m_api;
    nvmlDevice_t dev = nullptr;
    if (a.getHandleByPciBusId(pciBusId.c_str(), &dev) != kNvmlSuccess) return std::nullopt;
    GpuHealth info;
    auto note = [&](const char* what, nvmlReturn_t rc) {
        if (rc != kNvmlSuccess) info.errors.push_back(std::string(what) + ": " + a.errorString(rc));
        return rc == kNvmlSuccess;
    };
    auto text = [&](auto fn, const char* what, std::string& out) {
        if (!fn) return info.errors.push_back(std::string(what) + ": not in this NVML");
        char buf[kStringLength] = {};
        if (note(what, fn(dev, buf, kStringLength))) out = buf;
    };
    text(a.getSerial, "nvmlDeviceGetSerial", info.serial);
    text(a.getBoardPartNumber, "nvmlDeviceGetBoardPartNumber", info.boardPartNumber);
    text(a.getVbiosVersion, "nvmlDeviceGetVbiosVersion", info.vbiosVersion);
    text(a.getInforomImageVersion, "nvmlDeviceGetInforomImageVersion", info.inforomImageVersion);
    if (a.getTotalEccErrors) {
        auto ecc = [&](unsigned type, unsigned counter, std::optional<uint64_t>& out) {
            unsigned long long v = 0;
            if (note("nvmlDeviceGetTotalEccErrors", a.getTotalEccErrors(dev, type, counter, &v))) out = v;
        };
        ecc(kMemoryErrorCorrected, kVolatileEcc, info.eccCorrectedVolatile);
        ecc(kMemoryErrorUncorrected, kVolatileEcc, info.eccUncorrectedVolatile);
        ecc(kMemoryErrorCorrected, kAggregateEcc, info.eccCorrectedAggregate);
        ecc(kMemoryErrorUncorrected, kAggregateEcc, info.eccUncorrectedAggregate);
    }
    if (a.getRemappedRows) {
        unsigned corr = 0, unc = 0, pending = 0, failure = 0;
        if (note("nvmlDeviceGetRemappedRows", a.getRemappedRows(dev, &corr, &unc, &pending, &failure))) {
            info.remappedRowsCorrectable = corr;
            info.remappedRowsUncorrectable = unc;
            info.remapPending = pending != 0;
            info.remapFailure = failure != 0;
        }
    }
    if (a.getTemperature) {
        unsigned t = 0;
        if (note("nvmlDeviceGetTemperature", a.getTemperature(dev, kTemperatureGpu, &t)))
            info.temperatureC = t;
    }
    if (a.getPowerUsage) {
        unsigned mw = 0;
        if (note("nvmlDeviceGetPowerUsage", a.getPowerUsage(dev, &mw))) info.powerW = mw / 1000.0;
    }
    return info;
}

}  // namespace faultline::cuda
