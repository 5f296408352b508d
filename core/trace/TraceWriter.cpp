#include "TraceWriter.h"

#include <cstdio>

#include "../io/FlatRange.h"

namespace faultline {

namespace {

bool isPlainLabel(const std::string& label)
{
    return !label.empty() && label != "." && label != ".." && label.find('/') == std::string::npos;
}

}  // namespace

TraceWriter::TraceWriter(SnapshotWriter writer) : m_writer(std::move(writer)) {}

Error TraceWriter::error(const std::string& problem) const
{
    return fileError(m_writer.path(), problem);
}

std::string TraceWriter::opGroupName(size_t index)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%06zu", index);
    return buffer;
}

std::string TraceWriter::opOutputPath(size_t index, const std::string& label, size_t k)
{
    return "ops/" + opGroupName(index) + "/outputs/" + label + "/" + std::to_string(k);
}

Result<TraceWriter> TraceWriter::create(const std::string& path)
{
    Result<SnapshotWriter> writer = SnapshotWriter::create(path);
    if (!writer) return writer.error();
    if (Status s = writer->setRootAttribute("faultline_format", std::string("trace")); !s) return s.error();
    if (Status s = writer->setRootAttribute("faultline_version", int64_t(kTraceFormatVersion)); !s)
        return s.error();
    for (const char* group : {"devices", "tensors", "ops"})
        if (Status s = writer->createGroup(group); !s) return s.error();
    return TraceWriter(std::move(*writer));
}

Status TraceWriter::setAttribute(const std::string& name, const AttrValue& value)
{
    if (name == "faultline_format" || name == "faultline_version")
        return error("root attribute '" + name + "' is set by the trace writer");
    return m_writer.setRootAttribute(name, value);
}

Status TraceWriter::addDevice(const TraceDevice& device)
{
    if (!isPlainLabel(device.label))
        return error("device label '" + device.label + "' is empty or contains '/'");
    if (!m_devices.insert(device.label).second) return error("device '" + device.label + "' added twice");
    const std::string group = "devices/" + device.label;
    if (Status s = m_writer.createGroup(group); !s) return s;
    const std::pair<const char*, const std::string*> fields[] = {{"name", &device.name},
                                                                 {"uuid", &device.uuid},
                                                                 {"serial", &device.serial},
                                                                 {"pci_bus_id", &device.pciBusId},
                                                                 {"driver_version", &device.driverVersion},
                                                                 {"role", &device.role}};
    for (const auto& [key, value] : fields)
        if (Status s = m_writer.setGroupAttribute(group, key, *value); !s) return s;
    for (const auto& [key, value] : device.extra)
        if (Status s = m_writer.setGroupAttribute(group, key, value); !s) return s;
    return Status::success();
}

Status TraceWriter::addTensor(const std::string& id, const TensorData& tensor,
                              const TensorWriteOptions& options)
{
    if (Status s = beginTensor(id, tensor.dtype, tensor.shape, options); !s) return s;
    const uint64_t n = checkedElementCount(tensor.shape).value_or(0);
    if (Status s = m_writer.writeElements(0, n, tensor.data); !s) {
        m_writer.endTensor();
        return s;
    }
    return m_writer.endTensor();
}

Status TraceWriter::beginTensor(const std::string& id, DType dtype, const std::vector<uint64_t>& shape,
                                const TensorWriteOptions& options)
{
    if (id.empty()) return error("tensor id is empty");
    if (m_tensors.count(id)) return error("tensor '" + id + "' added twice");
    if (Status s = m_writer.beginTensor("tensors/" + id, dtype, shape, options); !s) return s;
    m_tensors.insert(id);
    return Status::success();
}

Status TraceWriter::addOp(const TraceOp& op, const std::map<std::string, std::vector<TensorData>>& outputs)
{
    const std::string where = "op " + std::to_string(op.index);
    if (op.op.empty()) return error(where + ": no op name");
    if (m_ops.count(op.index)) return error(where + " added twice");
    for (const std::string& input : op.inputs)
        if (!m_tensors.count(input))
            return error(where + " (" + op.op + "): input '" + input + "' is not a tensor in the trace");
    for (const auto& [key, value] : op.params)
        if (key == "op" || key == "inputs" || key == "name" || key == "phase" || key.empty() ||
            key.find('/') != std::string::npos)
            return error(where + " (" + op.op + "): parameter name '" + key + "' is reserved or invalid");
    for (const auto& [label, tensors] : outputs)
        if (!m_devices.count(label))
            return error(where + " (" + op.op + "): output device '" + label + "' was not added");

    const std::string group = "ops/" + opGroupName(op.index);
    if (Status s = m_writer.createGroup(group); !s) return s;
    m_ops.insert(op.index);
    if (Status s = m_writer.setGroupAttribute(group, "op", op.op); !s) return s;
    if (Status s = m_writer.setGroupAttribute(group, "inputs", op.inputs); !s) return s;
    if (!op.name.empty())
        if (Status s = m_writer.setGroupAttribute(group, "name", op.name); !s) return s;
    if (!op.phase.empty())
        if (Status s = m_writer.setGroupAttribute(group, "phase", op.phase); !s) return s;
    for (const auto& [key, value] : op.params)
        if (Status s = m_writer.setGroupAttribute(group, key, value); !s) return s;
    if (Status s = m_writer.createGroup(group + "/outputs"); !s) return s;
    for (const auto& [label, tensors] : outputs)
        for (size_t k = 0; k < tensors.size(); ++k) {
            const TensorData& t = tensors[k];
            if (Status s = m_writer.writeTensor(opOutputPath(op.index, label, k), t.dtype, t.shape, t.data);
                !s)
                return s;
        }
    return Status::success();
}

Status TraceWriter::setOutputAttribute(size_t opIndex, const std::string& label, const std::string& name,
                                       const AttrValue& value)
{
    if (!m_ops.count(opIndex)) return error("op " + std::to_string(opIndex) + " was not added");
    if (!m_devices.count(label)) return error("output device '" + label + "' was not added");
    if (name.empty() || name.find('/') != std::string::npos)
        return error("output attribute name '" + name + "' is invalid");
    return m_writer.setGroupAttribute("ops/" + opGroupName(opIndex) + "/outputs/" + label, name, value);
}

Status TraceWriter::beginOutput(size_t opIndex, const std::string& label, size_t k, DType dtype,
                                const std::vector<uint64_t>& shape, const TensorWriteOptions& options)
{
    if (!m_ops.count(opIndex)) return error("op " + std::to_string(opIndex) + " was not added");
    if (!m_devices.count(label)) return error("output device '" + label + "' was not added");
    return m_writer.beginTensor(opOutputPath(opIndex, label, k), dtype, shape, options);
}

Status TraceWriter::close()
{
    return m_writer.close();
}

}  // namespace faultline
