#include "OneOpTrace.h"

#include "../trace/TraceWriter.h"

namespace faultline {

Status writeOneOpTrace(const Trace& source, const TraceOp& op, const std::vector<HostTensor>& inputs,
                       const std::string& path, const std::map<std::string, std::string>& notes)
{
    if (inputs.size() != op.inputs.size())
        return fileError(path,
                         "op " + std::to_string(op.index) + " has " + std::to_string(op.inputs.size()) +
                             " inputs, " + std::to_string(inputs.size()) + " given",
                         ErrorCode::Failed);
    auto w = TraceWriter::create(path);
    if (!w) return w.error();
    for (const auto& [name, value] : source.attributes)
        if (Status st = w->setAttribute(name, value); !st) return st;
    for (const auto& [name, value] : notes)
        if (Status st = w->setAttribute(name, value); !st) return st;
    for (const TraceDevice& d : source.devices)
        if (Status st = w->addDevice(d); !st) return st;
    TraceOp written = op;
    std::map<std::string, size_t> firstOf;  // id -> the position whose tensor was written under it
    for (size_t i = 0; i < inputs.size(); ++i) {
        const HostTensor& t = inputs[i];
        std::string id = op.inputs[i];
        if (auto it = firstOf.find(id); it != firstOf.end()) {
            const HostTensor& first = inputs[it->second];
            if (first.dtype == t.dtype && first.shape == t.shape && first.data == t.data) continue;
            id += "#" + std::to_string(i);
        }
        firstOf.emplace(id, i);
        written.inputs[i] = id;
        if (Status st = w->addTensor(id, {t.dtype, t.shape, t.data.data()}); !st) return st;
    }
    written.outputs.clear();
    written.outputAttributes.clear();
    if (Status st = w->addOp(written); !st) return st;
    return w->close();
}

}  // namespace faultline
