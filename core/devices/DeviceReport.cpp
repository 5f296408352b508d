#include "DeviceReport.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace faultline {
namespace {

using nlohmann::json;

// A field that does not hold a T: parseDeviceReport turns it into an error naming the field.
struct BadField : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// j[key] as T. An integer field must hold an integer in T's range: nlohmann::json would convert a
// floating-point value too, and one out of range is undefined behaviour.
template <class T>
T fieldValue(const json& j, const char* key)
{
    const json& v = j[key];
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        const bool fits = v.is_number_unsigned()
                              ? v.get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())
                              : v.is_number_integer() &&
                                    v.get<int64_t>() >= int64_t(std::numeric_limits<T>::min()) &&
                                    (v.get<int64_t>() < 0 ||
                                     uint64_t(v.get<int64_t>()) <= uint64_t(std::numeric_limits<T>::max()));
        if (!fits) throw BadField(std::string("\"") + key + "\" is not an integer in range");
    }
    return v.get<T>();
}

template <class T>
void readOptional(const json& j, const char* key, std::optional<T>& out)
{
    if (j.contains(key) && !j[key].is_null()) out = fieldValue<T>(j, key);
}

template <class T>
void read(const json& j, const char* key, T& out)
{
    if (j.contains(key) && !j[key].is_null()) out = fieldValue<T>(j, key);
}

GpuHealth readHealth(const json& n)
{
    GpuHealth h;
    read(n, "serial", h.serial);
    read(n, "board_part_number", h.boardPartNumber);
    read(n, "vbios_version", h.vbiosVersion);
    read(n, "inforom_image_version", h.inforomImageVersion);
    readOptional(n, "ecc_corrected_volatile", h.eccCorrectedVolatile);
    readOptional(n, "ecc_uncorrected_volatile", h.eccUncorrectedVolatile);
    readOptional(n, "ecc_corrected_aggregate", h.eccCorrectedAggregate);
    readOptional(n, "ecc_uncorrected_aggregate", h.eccUncorrectedAggregate);
    readOptional(n, "remapped_rows_correctable", h.remappedRowsCorrectable);
    readOptional(n, "remapped_rows_uncorrectable", h.remappedRowsUncorrectable);
    readOptional(n, "remap_pending", h.remapPending);
    readOptional(n, "remap_failure", h.remapFailure);
    readOptional(n, "temperature_c", h.temperatureC);
    readOptional(n, "power_w", h.powerW);
    read(n, "errors", h.errors);
    return h;
}

LocalGpu readGpu(const json& g)
{
    LocalGpu d;
    read(g, "index", d.index);
    read(g, "name", d.name);
    read(g, "uuid", d.uuid);
    read(g, "pci_bus_id", d.pciBusId);
    read(g, "compute_capability", d.computeCapability);
    read(g, "sm_count", d.smCount);
    read(g, "memory_bytes", d.memoryBytes);
    read(g, "clock_khz", d.clockKHz);
    read(g, "memory_clock_khz", d.memoryClockKHz);
    read(g, "ecc_enabled", d.eccEnabled);
    read(g, "peer_key", d.peerKey);
    if (g.contains("nvml") && g["nvml"].is_object()) d.health = readHealth(g["nvml"]);
    return d;
}

}  // namespace

bool GpuHealth::needsAttention() const
{
    return eccUncorrectedVolatile.value_or(0) > 0 || eccUncorrectedAggregate.value_or(0) > 0 ||
           remappedRowsUncorrectable.value_or(0) > 0 || remapPending.value_or(false) ||
           remapFailure.value_or(false);
}

std::vector<std::vector<int>> DeviceReport::peerGroups() const
{
    std::map<std::string, std::vector<int>> byKey;
    for (const LocalGpu& g : gpus)
        if (!g.peerKey.empty()) byKey[g.peerKey].push_back(g.index);
    std::vector<std::vector<int>> groups;
    for (auto& [key, indices] : byKey)
        if (indices.size() >= 2) groups.push_back(std::move(indices));
    std::sort(groups.begin(), groups.end());
    return groups;
}

std::string DeviceReport::noDevicesReason() const
{
    if (!gpus.empty()) return {};
    // The runtime says "insufficient driver" (cudaErrorInsufficientDriver, 35) both for an old
    // driver and for none at all; without a driver, cudaDriverGetVersion reports 0.
    const bool insufficient = cudaError.find("(35)") != std::string::npos ||
                              cudaError.find("nsufficient") != std::string::npos ||
                              cudaError.find("InsufficientDriver") != std::string::npos;
    if (insufficient && cudaDriverVersion == 0)
        return "no NVIDIA driver is installed or loaded on this machine (the CUDA runtime reports it as: " +
               cudaError + ")";
    if (!cudaError.empty()) return cudaError;
    return cudaBuilt ? "the CUDA runtime reports none" : "faultline-worker has no CUDA target";
}

namespace {

template <class T>
void putOptional(json& j, const char* key, const std::optional<T>& v)
{
    if (v) j[key] = *v;
}

}  // namespace

nlohmann::json deviceReportJson(const DeviceReport& r)
{
    json j;
    j["cuda_built"] = r.cudaBuilt;
    j["cuda_available"] = r.cudaAvailable;
    if (!r.cudaError.empty()) j["cuda_error"] = r.cudaError;
    if (r.cudaBuilt) {
        j["cuda_driver_version"] = r.cudaDriverVersion;
        j["cuda_runtime_version"] = r.cudaRuntimeVersion;
        j["nvml_available"] = r.nvmlAvailable;
    }
    if (!r.nvmlError.empty()) j["nvml_error"] = r.nvmlError;
    if (!r.driverVersion.empty()) j["driver_version"] = r.driverVersion;
    j["gpus"] = json::array();
    for (const LocalGpu& g : r.gpus) {
        json d{{"index", g.index},
               {"name", g.name},
               {"uuid", g.uuid},
               {"pci_bus_id", g.pciBusId},
               {"compute_capability", g.computeCapability},
               {"sm_count", g.smCount},
               {"memory_bytes", g.memoryBytes},
               {"clock_khz", g.clockKHz},
               {"memory_clock_khz", g.memoryClockKHz},
               {"ecc_enabled", g.eccEnabled},
               {"peer_key", g.peerKey}};
        if (g.health) {
            const GpuHealth& n = *g.health;
            json m{{"serial", n.serial},
                   {"board_part_number", n.boardPartNumber},
                   {"vbios_version", n.vbiosVersion},
                   {"inforom_image_version", n.inforomImageVersion}};
            putOptional(m, "ecc_corrected_volatile", n.eccCorrectedVolatile);
            putOptional(m, "ecc_uncorrected_volatile", n.eccUncorrectedVolatile);
            putOptional(m, "ecc_corrected_aggregate", n.eccCorrectedAggregate);
            putOptional(m, "ecc_uncorrected_aggregate", n.eccUncorrectedAggregate);
            putOptional(m, "remapped_rows_correctable", n.remappedRowsCorrectable);
            putOptional(m, "remapped_rows_uncorrectable", n.remappedRowsUncorrectable);
            putOptional(m, "remap_pending", n.remapPending);
            putOptional(m, "remap_failure", n.remapFailure);
            putOptional(m, "temperature_c", n.temperatureC);
            putOptional(m, "power_w", n.powerW);
            if (!n.errors.empty()) m["errors"] = n.errors;
            d["nvml"] = std::move(m);
        }
        j["gpus"].push_back(std::move(d));
    }
    return j;
}

Result<DeviceReport> parseDeviceReport(std::string_view text, const std::string& source)
{
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fileError(source,
                         "malformed device report (not a JSON object): " + std::string(text.substr(0, 200)));
    try {
        DeviceReport r;
        read(j, "cuda_built", r.cudaBuilt);
        read(j, "cuda_available", r.cudaAvailable);
        read(j, "cuda_error", r.cudaError);
        read(j, "cuda_driver_version", r.cudaDriverVersion);
        read(j, "cuda_runtime_version", r.cudaRuntimeVersion);
        read(j, "nvml_available", r.nvmlAvailable);
        read(j, "nvml_error", r.nvmlError);
        read(j, "driver_version", r.driverVersion);
        if (j.contains("gpus") && !j["gpus"].is_null()) {
            if (!j["gpus"].is_array())
                return fileError(source, "malformed device report: \"gpus\" is not an array");
            for (const json& g : j["gpus"]) {
                if (!g.is_object())
                    return fileError(source, "malformed device report: a \"gpus\" entry is not an object");
                r.gpus.push_back(readGpu(g));
            }
        }
        return r;
    } catch (const json::exception& e) {
        return fileError(source, std::string("malformed device report: ") + e.what());
    } catch (const BadField& e) {
        return fileError(source, std::string("malformed device report: ") + e.what());
    }
}

std::string formatGiB(uint64_t bytes)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(uint64_t(1) << 30));
    return buf;
}

Result<nlohmann::json> readInventoryJson(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return fileError(path, "cannot open the GPU inventory", ErrorCode::Io);
    std::ostringstream text;
    text << in.rdbuf();
    auto report = parseDeviceReport(text.str(), path);
    if (!report) return report.error();
    nlohmann::json gpus = nlohmann::json::array();
    for (const LocalGpu& g : report->gpus)
        gpus.push_back({{"index", g.index},
                        {"name", g.name},
                        {"uuid", g.uuid},
                        {"serial", g.health ? g.health->serial : std::string()},
                        {"pci_bus_id", g.pciBusId},
                        {"sm_count", g.smCount},
                        {"peer_key", g.peerKey}});
    return nlohmann::json{{"driver_version", report->driverVersion}, {"gpus", gpus}};
}

}  // namespace faultline
