#pragma once
// Trace v1: ordered ops (kernel calls) with their input tensors and what each recording device
// produced. The in-memory model; the HDF5 layout is in docs/formats.md.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "../AttrValue.h"
#include "../Result.h"
#include "../TensorFile.h"

namespace faultline {

inline constexpr int kTraceFormatVersion = 1;

// One recording device: /devices/<label>.
struct TraceDevice {
    std::string label;
    std::string name, uuid, serial, pciBusId, driverVersion, role;  // role: suspect | reference | ""
    std::map<std::string, std::string> extra;                       // any other string attributes
};

// One op: /ops/<NNNNNN>.
struct TraceOp {
    size_t index = 0;  // execution order (the group name's number)
    std::string
        op;  // gemm | layernorm | rmsnorm | softmax | gelu | silu | add | attention | all_reduce | ...
    std::string name;                         // module path
    std::string phase;                        // forward | backward | optimizer | ""
    std::vector<std::string> inputs;          // ids under /tensors
    std::map<std::string, AttrValue> params;  // every other attribute (trans_a, alpha, eps, ...)
    // device label -> tensor names (paths in the file, e.g. "ops/000003/outputs/gpu0/0"), k order
    std::map<std::string, std::vector<std::string>> outputs;
};

struct Trace {
    int version = kTraceFormatVersion;
    std::map<std::string, std::string> attributes;  // root attributes other than the format pair
    std::vector<TraceDevice> devices;
    std::vector<std::string> tensorIds;  // ids under /tensors, sorted
    std::vector<TraceOp> ops;            // in execution order
    std::vector<std::string> warnings;   // unknown ops/attributes, each reported once with a count
    std::shared_ptr<TensorFile> file;    // reads tensor data; names: "tensors/<id>", output paths
};

// The ops and their required inputs/parameters that this version understands. Unknown ops are
// warnings, not errors.
bool isKnownTraceOp(const std::string& op);

// Reads a trace. A newer faultline_version, a missing format attribute, an op naming a tensor
// that is not there, are errors naming the file and the problem.
Result<Trace> readTrace(const std::string& path, const OpenOptions& options = {});

}  // namespace faultline
