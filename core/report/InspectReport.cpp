#include "InspectReport.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace faultline {
namespace {

nlohmann::json attrValueJson(const AttrValue& v)
{
    return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

nlohmann::json deviceJson(const TraceDevice& d)
{
    nlohmann::json j = {{"label", d.label},   {"name", d.name},           {"uuid", d.uuid},
                        {"serial", d.serial}, {"pci_bus_id", d.pciBusId}, {"driver_version", d.driverVersion},
                        {"role", d.role}};
    for (const auto& [k, v] : d.extra) j[k] = v;
    return j;
}

nlohmann::json opJson(const TraceOp& op)
{
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : op.params) params[k] = attrValueJson(v);
    return {{"index", op.index},   {"op", op.op},      {"name", op.name},      {"phase", op.phase},
            {"inputs", op.inputs}, {"params", params}, {"outputs", op.outputs}};
}

}  // namespace

std::string formatBytes(uint64_t bytes)
{
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    if (u == 0)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    else
        std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

nlohmann::json inspectJson(const TensorFile& file, const Trace* trace)
{
    nlohmann::json tensors = nlohmann::json::array();
    for (const TensorInfo& t : file.tensors()) {
        nlohmann::json j = {{"name", t.name},
                            {"dtype", std::string(dtypeName(t.dtype))},
                            {"shape", t.shape},
                            {"bytes", t.byteCount()},
                            {"elements", t.elementCount()},
                            {"kind", t.kind},
                            {"storage", t.storage}};
        if (!t.attributes.empty()) j["attributes"] = t.attributes;
        tensors.push_back(std::move(j));
    }
    nlohmann::json devices = nlohmann::json::array();
    nlohmann::json ops = nlohmann::json::array();
    std::vector<std::string> warnings = file.warnings();
    if (trace) {
        for (const TraceDevice& d : trace->devices) devices.push_back(deviceJson(d));
        for (const TraceOp& op : trace->ops) ops.push_back(opJson(op));
        for (const std::string& w : trace->warnings)
            if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    }
    nlohmann::json doc = {{"file", file.path()},
                          {"format", fileFormatName(file.format())},
                          {"attributes", file.attributes()},
                          {"tensors", tensors},
                          {"devices", devices},
                          {"ops", ops},
                          {"warnings", warnings}};
    if (trace) doc["trace_version"] = trace->version;
    return doc;
}

std::string inspectText(const TensorFile& file, const Trace* trace)
{
    std::ostringstream out;
    uint64_t total = 0;
    for (const TensorInfo& t : file.tensors()) total += t.byteCount();
    out << file.path() << ": " << fileFormatName(file.format()) << ", " << file.tensors().size()
        << " tensors, " << formatBytes(total) << "\n";
    for (const auto& [k, v] : file.attributes()) out << "  " << k << " = " << v << "\n";

    size_t nameWidth = 4;
    for (const TensorInfo& t : file.tensors()) nameWidth = std::max(nameWidth, t.name.size());
    nameWidth = std::min<size_t>(nameWidth, 60);
    char line[512];
    std::snprintf(line, sizeof line, "  %-*s  %-13s  %-22s  %10s  %s\n", int(nameWidth), "name", "dtype",
                  "shape", "bytes", "kind");
    out << line;
    for (const TensorInfo& t : file.tensors()) {
        std::snprintf(line, sizeof line, "  %-*s  %-13s  %-22s  %10s  %s\n", int(nameWidth), t.name.c_str(),
                      std::string(dtypeName(t.dtype)).c_str(), shapeToString(t.shape).c_str(),
                      formatBytes(t.byteCount()).c_str(), t.kind.c_str());
        out << line;
    }
    if (trace) {
        out << "devices (" << trace->devices.size() << "):\n";
        for (const TraceDevice& d : trace->devices) {
            out << "  " << d.label << ": " << (d.name.empty() ? "?" : d.name);
            if (!d.role.empty()) out << " [" << d.role << "]";
            if (!d.uuid.empty()) out << " uuid=" << d.uuid;
            if (!d.serial.empty()) out << " serial=" << d.serial;
            if (!d.pciBusId.empty()) out << " pci=" << d.pciBusId;
            out << "\n";
        }
        out << "ops (" << trace->ops.size() << "):\n";
        for (const TraceOp& op : trace->ops) {
            std::snprintf(line, sizeof line, "  %06zu  %-11s %-40s", op.index, op.op.c_str(),
                          op.name.c_str());
            out << line << " in=[";
            for (size_t i = 0; i < op.inputs.size(); ++i) out << (i ? ", " : "") << op.inputs[i];
            out << "] out=[";
            bool first = true;
            for (const auto& [label, outs] : op.outputs) {
                out << (first ? "" : ", ") << label << ":" << outs.size();
                first = false;
            }
            out << "]\n";
        }
    }
    std::vector<std::string> warnings = file.warnings();
    if (trace) warnings.insert(warnings.end(), trace->warnings.begin(), trace->warnings.end());
    std::sort(warnings.begin(), warnings.end());
    warnings.erase(std::unique(warnings.begin(), warnings.end()), warnings.end());
    for (const std::string& w : warnings) out << "warning: " << w << "\n";
    return out.str();
}

}  // namespace faultline
