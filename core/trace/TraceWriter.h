#pragma once
// Writes trace v1 files (docs/formats.md) on top of SnapshotWriter: PATH.tmp renamed to PATH by
// close(). The writer is strict (inputs must name added tensors, outputs must name added
// devices); the reader is lenient.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../io/SnapshotWriter.h"
#include "Trace.h"

namespace faultline {

// One tensor's data for the writer: row-major little-endian elements of `dtype`.
struct TensorData {
    DType dtype = DType::Float32;
    std::vector<uint64_t> shape;
    const void* data = nullptr;
};

class TraceWriter {
public:
    // Creates PATH.tmp and writes faultline_format="trace", faultline_version=1.
    static Result<TraceWriter> create(const std::string& path);

    // Root attribute (faultline_format / faultline_version are the writer's).
    Status setAttribute(const std::string& name, const AttrValue& value);
    // /devices/<label> with name, uuid, serial, pci_bus_id, driver_version, role and `extra`.
    Status addDevice(const TraceDevice& device);
    // /tensors/<id>.
    Status addTensor(const std::string& id, const TensorData& tensor, const TensorWriteOptions& options = {});
    // /ops/<NNNNNN> for op.index with op, inputs, name, phase and op.params as attributes, and
    // outputs[label][k] as /ops/<NNNNNN>/outputs/<label>/<k>. op.outputs is ignored (it is what
    // the reader fills in). Each index once.
    Status addOp(const TraceOp& op, const std::map<std::string, std::vector<TensorData>>& outputs = {});

    // An attribute of /ops/<NNNNNN>/outputs/<label> (rerun's repeats, reproducible): the op must
    // have been added and the label be a device.
    Status setOutputAttribute(size_t opIndex, const std::string& label, const std::string& name,
                              const AttrValue& value);

    // Streaming big tensors: begin a /tensors/<id> or an op output, then write through
    // snapshot().writeElements / appendElements and finish with snapshot().endTensor().
    Status beginTensor(const std::string& id, DType dtype, const std::vector<uint64_t>& shape,
                       const TensorWriteOptions& options = {});
    Status beginOutput(size_t opIndex, const std::string& label, size_t k, DType dtype,
                       const std::vector<uint64_t>& shape, const TensorWriteOptions& options = {});
    SnapshotWriter& snapshot() { return m_writer; }

    Status close();

    // "000042": the op group name for an index (at least six digits).
    static std::string opGroupName(size_t index);
    // "ops/000042/outputs/<label>/<k>"
    static std::string opOutputPath(size_t index, const std::string& label, size_t k);

private:
    explicit TraceWriter(SnapshotWriter writer);
    Error error(const std::string& problem) const;

    SnapshotWriter m_writer;
    std::set<std::string> m_devices;
    std::set<std::string> m_tensors;
    std::set<size_t> m_ops;
};

}  // namespace faultline
