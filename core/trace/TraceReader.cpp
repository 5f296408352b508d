// readTrace: trace v1 (docs/formats.md) into the Trace model. The tensor data stays in the file
// and is read through Trace::file.
#include <algorithm>
#include <set>

#include "../io/Hdf5Attributes.h"
#include "../io/Hdf5File.h"
#include "../io/Hdf5Handles.h"
#include "../io/WarningTally.h"
#include "Trace.h"
#include "TraceOps.h"

namespace faultline {

using namespace hdf5;

namespace {

constexpr size_t kMaxIndexDigits = 18;  // fits in 64 bits

struct Link {
    std::string name;
    H5O_type_t type = H5O_TYPE_UNKNOWN;
};

herr_t collectLinkName(hid_t, const char* name, const H5L_info_t*, void* data)
{
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
}

std::optional<size_t> parseIndex(const std::string& name)
{
    if (name.empty() || name.size() > kMaxIndexDigits) return std::nullopt;
    size_t value = 0;
    for (char c : name) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + size_t(c - '0');
    }
    return value;
}

class TraceScanner {
public:
    TraceScanner(const std::string& path, Trace& trace, hid_t file, hid_t linkAccess)
        : m_path(path), m_trace(trace), m_file(file), m_linkAccess(linkAccess)
    {
    }

    Status readDevices();
    Status readOps();
    void finish();

private:
    Result<std::vector<Link>> links(hid_t group, const std::string& where);
    Result<GroupHandle> openGroup(hid_t parent, const std::string& name, const std::string& where);
    Result<TraceOp> readOp(hid_t group, size_t index, const std::string& groupPath);
    Status readOutputs(hid_t opGroup, TraceOp& op, const std::string& groupPath);
    Status readOutputAttributes(hid_t labelGroup, TraceOp& op, const std::string& label,
                                const std::string& labelPath);
    Error error(const std::string& problem) const { return fileError(m_path, problem); }
    std::string text(const AttrValue& v) const { return attrValueToString(v); }

    const std::string& m_path;
    Trace& m_trace;
    hid_t m_file;
    hid_t m_linkAccess;
    std::set<std::string> m_tensorIds;
    std::set<std::string> m_tensorNames;  // every tensor in the file
    std::set<std::string> m_deviceLabels;
    WarningTally m_unknownOps;
    WarningTally m_unknownAttributes;
    WarningTally m_unknownLabels;
    WarningTally m_other;
};

Result<std::vector<Link>> TraceScanner::links(hid_t group, const std::string& where)
{
    std::vector<std::string> names;
    hsize_t index = 0;
    if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &index, collectLinkName, &names) < 0)
        return hdf5Error(m_path, "cannot list '" + where + "'");
    std::vector<Link> out;
    for (std::string& name : names) {
        ObjectInfo info;
        Link link{std::move(name), H5O_TYPE_UNKNOWN};
        if (objectInfoByName(group, link.name.c_str(), m_linkAccess, &info))
            link.type = info.type;
        else
            H5Eclear2(H5E_DEFAULT);
        out.push_back(std::move(link));
    }
    return out;
}

Result<GroupHandle> TraceScanner::openGroup(hid_t parent, const std::string& name, const std::string& where)
{
    GroupHandle g(H5Gopen2(parent, name.c_str(), H5P_DEFAULT));
    if (!g) return hdf5Error(m_path, "cannot open group '" + where + "'");
    return g;
}

Status TraceScanner::readDevices()
{
    const htri_t exists = H5Lexists(m_file, "devices", H5P_DEFAULT);
    if (exists <= 0) {
        m_other.add("the trace has no /devices group", "/");
        return Status::success();
    }
    Result<GroupHandle> devices = openGroup(m_file, "devices", "/devices");
    if (!devices) return devices.error();
    Result<std::vector<Link>> children = links(devices->get(), "/devices");
    if (!children) return children.error();
    for (const Link& link : *children) {
        const std::string where = "devices/" + link.name;
        if (link.type != H5O_TYPE_GROUP) {
            m_other.add("objects under /devices that are not groups are ignored", where);
            continue;
        }
        Result<GroupHandle> g = openGroup(devices->get(), link.name, where);
        if (!g) return g.error();
        TraceDevice device;
        device.label = link.name;
        Result<std::vector<std::string>> names = attributeNames(g->get());
        if (!names) return error(where + ": " + names.message());
        for (const std::string& name : *names) {
            Result<AttrValue> value = readAttribute(g->get(), name);
            if (!value) {
                m_other.add("device attribute '" + name + "' skipped: " + value.message(), where);
                continue;
            }
            const std::string v = text(*value);
            if (name == "name")
                device.name = v;
            else if (name == "uuid")
                device.uuid = v;
            else if (name == "serial")
                device.serial = v;
            else if (name == "pci_bus_id")
                device.pciBusId = v;
            else if (name == "driver_version")
                device.driverVersion = v;
            else if (name == "role")
                device.role = v;
            else
                device.extra[name] = v;
        }
        m_deviceLabels.insert(device.label);
        m_trace.devices.push_back(std::move(device));
    }
    return Status::success();
}

Status TraceScanner::readOps()
{
    for (const std::string& id : m_trace.tensorIds) m_tensorIds.insert(id);
    for (const TensorInfo& t : m_trace.file->tensors()) m_tensorNames.insert(t.name);
    const htri_t exists = H5Lexists(m_file, "ops", H5P_DEFAULT);
    if (exists <= 0) {
        m_other.add("the trace has no /ops group", "/");
        return Status::success();
    }
    Result<GroupHandle> ops = openGroup(m_file, "ops", "/ops");
    if (!ops) return ops.error();
    Result<std::vector<Link>> children = links(ops->get(), "/ops");
    if (!children) return children.error();
    std::map<size_t, std::string> seen;  // index -> group name
    for (const Link& link : *children) {
        const std::string groupPath = "ops/" + link.name;
        const std::optional<size_t> index = parseIndex(link.name);
        if (!index) return error("'" + groupPath + "': op group names must be numbers (execution order)");
        if (link.type != H5O_TYPE_GROUP) return error("'" + groupPath + "' is not a group");
        if (auto [it, inserted] = seen.emplace(*index, link.name); !inserted)
            return error("'" + groupPath + "' and 'ops/" + it->second + "' have the same op index");
        Result<GroupHandle> g = openGroup(ops->get(), link.name, groupPath);
        if (!g) return g.error();
        Result<TraceOp> op = readOp(g->get(), *index, groupPath);
        if (!op) return op.error();
        m_trace.ops.push_back(std::move(*op));
    }
    std::sort(m_trace.ops.begin(), m_trace.ops.end(),
              [](const TraceOp& a, const TraceOp& b) { return a.index < b.index; });
    return Status::success();
}

Result<TraceOp> TraceScanner::readOp(hid_t group, size_t index, const std::string& groupPath)
{
    TraceOp op;
    op.index = index;
    Result<std::vector<std::string>> names = attributeNames(group);
    if (!names) return error(groupPath + ": " + names.message());
    std::map<std::string, AttrValue> values;
    for (const std::string& name : *names) {
        Result<AttrValue> value = readAttribute(group, name);
        if (!value) {
            m_other.add("op attribute '" + name + "' skipped: " + value.message(), groupPath);
            continue;
        }
        values.emplace(name, std::move(*value));
    }
    const auto opName = values.find("op");
    if (opName == values.end() || !std::holds_alternative<std::string>(opName->second))
        return error("'" + groupPath + "' has no string attribute 'op'");
    op.op = std::get<std::string>(opName->second);
    const std::string where = "'" + groupPath + "' (" + op.op + ")";
    const bool known = isKnownTraceOp(op.op);
    if (!known) m_unknownOps.add("unknown op '" + op.op + "'", groupPath);

    for (auto& [name, value] : values) {
        if (name == "op") continue;
        if (name == "inputs") {
            if (auto* list = std::get_if<std::vector<std::string>>(&value))
                op.inputs = *list;
            else if (auto* one = std::get_if<std::string>(&value))
                op.inputs = {*one};
            else
                return error(where + ": attribute 'inputs' must be strings (tensor ids)");
        } else if (name == "name") {
            op.name = text(value);
        } else if (name == "phase") {
            op.phase = text(value);
        } else {
            if (known && !isKnownTraceOpAttribute(op.op, name))
                m_unknownAttributes.add("op '" + op.op + "': unknown attribute '" + name + "'", groupPath);
            op.params.emplace(name, std::move(value));
        }
    }
    for (const std::string& input : op.inputs)
        if (!m_tensorIds.count(input))
            return error(where + ": input '" + input + "' is not a tensor under /tensors");
    if (Status s = readOutputs(group, op, groupPath); !s) return s.error();
    return op;
}

Status TraceScanner::readOutputs(hid_t opGroup, TraceOp& op, const std::string& groupPath)
{
    Result<std::vector<Link>> children = links(opGroup, groupPath);
    if (!children) return children.error();
    for (const Link& child : *children)
        if (child.name != "outputs")
            m_other.add("objects in op groups other than 'outputs' are ignored",
                        groupPath + "/" + child.name);
    const auto outputs =
        std::find_if(children->begin(), children->end(), [](const Link& l) { return l.name == "outputs"; });
    if (outputs == children->end()) return Status::success();
    const std::string outputsPath = groupPath + "/outputs";
    if (outputs->type != H5O_TYPE_GROUP) return error("'" + outputsPath + "' is not a group");
    Result<GroupHandle> g = openGroup(opGroup, "outputs", outputsPath);
    if (!g) return g.error();
    Result<std::vector<Link>> labels = links(g->get(), outputsPath);
    if (!labels) return labels.error();
    for (const Link& label : *labels) {
        const std::string labelPath = outputsPath + "/" + label.name;
        if (label.type != H5O_TYPE_GROUP)
            return error("'" + labelPath + "' is not a group (one per device label)");
        if (!m_deviceLabels.count(label.name))
            m_unknownLabels.add("output label '" + label.name + "' is not a device under /devices",
                                labelPath);
        Result<GroupHandle> lg = openGroup(g->get(), label.name, labelPath);
        if (!lg) return lg.error();
        if (Status s = readOutputAttributes(lg->get(), op, label.name, labelPath); !s) return s.error();
        Result<std::vector<Link>> items = links(lg->get(), labelPath);
        if (!items) return items.error();
        std::vector<std::pair<size_t, std::string>> numbered;
        for (const Link& item : *items) {
            const std::optional<size_t> k = parseIndex(item.name);
            if (!k)
                return error("'" + labelPath + "/" + item.name +
                             "': output names must be numbers (0, 1, ...)");
            numbered.emplace_back(*k, labelPath + "/" + item.name);
        }
        std::sort(numbered.begin(), numbered.end());
        std::vector<std::string>& names = op.outputs[label.name];
        for (auto& [k, name] : numbered) {
            if (!m_tensorNames.count(name)) {
                m_other.add("op outputs that are not tensors are ignored (see the file's skipped datasets)",
                            name);
                continue;
            }
            names.push_back(std::move(name));
        }
    }
    return Status::success();
}

Status TraceScanner::readOutputAttributes(hid_t labelGroup, TraceOp& op, const std::string& label,
                                          const std::string& labelPath)
{
    Result<std::vector<std::string>> names = attributeNames(labelGroup);
    if (!names) return error(labelPath + ": " + names.message());
    for (const std::string& name : *names) {
        Result<AttrValue> value = readAttribute(labelGroup, name);
        if (!value) {
            m_other.add("output group attribute '" + name + "' skipped: " + value.message(), labelPath);
            continue;
        }
        op.outputAttributes[label].emplace(name, std::move(*value));
    }
    return Status::success();
}

void TraceScanner::finish()
{
    auto report = [&](const WarningTally& tally, const char* unit) {
        for (const auto& e : tally.entries()) {
            std::string line = e.key + " (" + std::to_string(e.count) + " " + unit +
                               (e.count == 1 ? "" : "s") + ", first: '" + e.first + "')";
            m_trace.warnings.push_back(fileError(m_path, line).message);
        }
    };
    report(m_unknownOps, "op");
    report(m_unknownAttributes, "op");
    report(m_unknownLabels, "output");
    report(m_other, "case");
}

}  // namespace

Result<Trace> readTrace(const std::string& path, const OpenOptions& options)
{
    // Format and version first: a newer trace is refused with a clear message before anything
    // else it might contain is looked at.
    Result<FileHandle> file = openReadOnly(path);
    if (!file) return file.error();
    Hdf5Lock lock;
    {
        GroupHandle root(H5Gopen2(file->get(), "/", H5P_DEFAULT));
        if (!root) return hdf5Error(path, "cannot open the root group");
        const std::optional<std::string> format = readStringAttribute(root.get(), "faultline_format");
        if (!format) return fileError(path, "not a Faultline trace (no faultline_format attribute)");
        if (*format != "trace")
            return fileError(path, "not a Faultline trace (faultline_format is '" + *format + "')");
        if (H5Aexists(root.get(), "faultline_version") <= 0)
            return fileError(path, "trace has no faultline_version attribute");
        Result<AttrValue> version = readAttribute(root.get(), "faultline_version");
        const int64_t* v = version ? std::get_if<int64_t>(&*version) : nullptr;
        if (!v) return fileError(path, "trace attribute faultline_version is not an integer");
        if (*v > kTraceFormatVersion)
            return fileError(path, "written by a newer Faultline (trace version " + std::to_string(*v) +
                                       "; this build reads up to " + std::to_string(kTraceFormatVersion) +
                                       ")");
        if (*v < 1) return fileError(path, "invalid trace version " + std::to_string(*v));
    }

    // The tensor file applies every safety check (external links, virtual datasets, sizes).
    Result<std::unique_ptr<TensorFile>> tensors = openHdf5TensorFile(path, options);
    if (!tensors) return tensors.error();

    Trace trace;
    trace.version = kTraceFormatVersion;
    trace.file = std::shared_ptr<TensorFile>(std::move(*tensors));
    for (const auto& [key, value] : trace.file->attributes())
        if (key != "faultline_format" && key != "faultline_version") trace.attributes[key] = value;
    trace.warnings = trace.file->warnings();
    const std::string prefix = "tensors/";
    for (const TensorInfo& t : trace.file->tensors())
        if (t.name.compare(0, prefix.size(), prefix) == 0)
            trace.tensorIds.push_back(t.name.substr(prefix.size()));
    std::sort(trace.tensorIds.begin(), trace.tensorIds.end());

    PlistHandle linkAccess(H5Pcreate(H5P_LINK_ACCESS));
    if (!linkAccess ||
        (!options.allowExternal && H5Pset_elink_cb(linkAccess.get(), refuseExternalLink, nullptr) < 0))
        return hdf5Error(path, "cannot set up HDF5 access");
    TraceScanner scanner(path, trace, file->get(), linkAccess.get());
    if (Status s = scanner.readDevices(); !s) return s.error();
    if (Status s = scanner.readOps(); !s) return s.error();
    scanner.finish();
    return trace;
}

}  // namespace faultline
