#pragma once
// Trace v1: ordered ops (kernel calls) with their input tensors and what each recording device
// produced. The in-memory model; the HDF5 layout is in docs/formats.md.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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

    // What produced the device's outputs: "rerun" where faultline_capture's rerun computed them
    // from the trace's recorded inputs (a healthy peer's answer to the same inputs), "" for a
    // recording. Read from the string attribute `source` (kept in `extra`).
    std::string source() const
    {
        const auto it = extra.find("source");
        return it == extra.end() ? std::string() : it->second;
    }
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
    // device label -> the attributes of /ops/<NNNNNN>/outputs/<label> (faultline_capture's
    // rerun: repeats, reproducible); labels without attributes are absent.
    std::map<std::string, std::map<std::string, AttrValue>> outputAttributes;
};

// Whether device `label`'s outputs of `op` were shown to be bit-for-bit reproducible: rerun's
// `repeats` (runs of the op) and `reproducible` (1: every run gave the same bits). Traces
// without the attributes (recordings, older reruns) give unknown.
struct OutputReproducibility {
    std::optional<int64_t> repeats;
    std::optional<bool> reproducible;  // nullopt: unknown
};
OutputReproducibility outputReproducibility(const TraceOp& op, const std::string& label);

struct Trace {
    int version = kTraceFormatVersion;
    std::map<std::string, std::string> attributes;  // root attributes other than the format pair
    std::vector<TraceDevice> devices;
    std::vector<std::string> tensorIds;  // ids under /tensors, sorted
    std::vector<TraceOp> ops;            // in execution order
    std::vector<std::string> warnings;   // unknown ops/attributes, each reported once with a count
    std::shared_ptr<TensorFile> file;    // reads tensor data; names: "tensors/<id>", output paths
};

// The device labelled `label`, or the op whose index is `index`; nullptr when there is none.
const TraceDevice* findTraceDevice(const Trace& trace, const std::string& label);
const TraceOp* findTraceOpByIndex(const Trace& trace, size_t index);

// The ops and their required inputs/parameters that this version understands. Unknown ops are
// warnings, not errors.
bool isKnownTraceOp(const std::string& op);

// Reads a trace. A newer faultline_version, a missing format attribute, an op naming a tensor
// that is not there, are errors naming the file and the problem.
Result<Trace> readTrace(const std::string& path, const OpenOptions& options = {});

}  // namespace faultline
