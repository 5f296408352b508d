#include "TraceOps.h"

#include <algorithm>
#include <map>

#include "Trace.h"

namespace faultline {

namespace {

const std::vector<TraceOpSpec>& table()
{
    static const std::vector<TraceOpSpec> rows = {
#define FL_TRACE_OP(name, Glue, numerics, collective, signature, ...) \
    {OpKind::Glue, #name, signature, {__VA_ARGS__}, OpNumerics::numerics, collective},
#include "OpList.h"
#undef FL_TRACE_OP
    };
    return rows;
}

}  // namespace

const std::vector<std::string_view>& captureTraceOpAttributes()
{
    static const std::vector<std::string_view> attributes = {
        "aten", "device_type", "call", "allow_tf32", "reduced_precision_reduction",
        // What decides a GEMM's kernel (golden/CpuGemmNumerics.h, golden/RecordedNumerics.h).
        "torch_version", "torch_threads", "mkldnn", "onednn_version", "onednn_max_cpu_isa", "cpu_capability",
        "cpu_flags", "a_strides", "b_strides", "split_k_max", "blas_library"};
    return attributes;
}

const std::vector<std::string_view>& replaySettingAttributes()
{
    static const std::vector<std::string_view> settings = {
        "impl", "library", "tf32", "math_mode", "compute_type", "algo", "workspace", "grid"};
    return settings;
}

std::span<const TraceOpSpec> traceOpTable()
{
    return table();
}

const TraceOpSpec* findTraceOp(std::string_view op)
{
    for (const TraceOpSpec& spec : table())
        if (spec.name == op) return &spec;
    return nullptr;
}

const TraceOpSpec& traceOpSpec(OpKind kind)
{
    return table()[size_t(kind)];
}

std::optional<OpKind> opKindOf(std::string_view op)
{
    const TraceOpSpec* spec = findTraceOp(op);
    return spec ? std::optional<OpKind>(spec->kind) : std::nullopt;
}

std::string_view opName(OpKind kind)
{
    return traceOpSpec(kind).name;
}

std::string_view opNumericsName(OpNumerics n)
{
    switch (n) {
        case OpNumerics::MatrixProduct:
            return "matrix_product";
        case OpNumerics::Attention:
            return "attention";
        case OpNumerics::Reduction:
            return "reduction";
        case OpNumerics::OneRounding:
            return "one_rounding";
        case OpNumerics::DataMovement:
            return "data_movement";
        case OpNumerics::Intermediates:
            return "intermediates";
        case OpNumerics::NarrowSums:
            return "narrow_sums";
        case OpNumerics::Pointwise:
            return "pointwise";
        case OpNumerics::Summation:
            return "summation";
        case OpNumerics::FloatSteps:
            return "float_steps";
    }
    return "intermediates";
}

const TraceDevice* findTraceDevice(const Trace& trace, const std::string& label)
{
    for (const TraceDevice& d : trace.devices)
        if (d.label == label) return &d;
    return nullptr;
}

const TraceOp* findTraceOpByIndex(const Trace& trace, size_t index)
{
    for (const TraceOp& op : trace.ops)
        if (op.index == index) return &op;
    return nullptr;
}

bool isKnownTraceOp(const std::string& op)
{
    return findTraceOp(op) != nullptr;
}

const std::vector<std::string_view>& commonTraceOpAttributes()
{
    static const std::vector<std::string_view> common = {"op", "inputs", "name", "phase"};
    return common;
}

const std::vector<std::string_view>& knownTraceOpParameters(const std::string& op)
{
    static const std::vector<std::string_view> none;
    const TraceOpSpec* spec = findTraceOp(op);
    return spec ? spec->params : none;
}

bool isKnownTraceOpAttribute(const std::string& op, const std::string& attribute)
{
    const auto& common = commonTraceOpAttributes();
    if (std::find(common.begin(), common.end(), attribute) != common.end()) return true;
    const auto& known = knownTraceOpParameters(op);
    if (std::find(known.begin(), known.end(), attribute) != known.end()) return true;
    if (!isKnownTraceOp(op)) return false;
    for (const auto* list : {&captureTraceOpAttributes(), &replaySettingAttributes()})
        if (std::find(list->begin(), list->end(), attribute) != list->end()) return true;
    return false;
}

OutputReproducibility outputReproducibility(const TraceOp& op, const std::string& label)
{
    OutputReproducibility out;
    const auto attrs = op.outputAttributes.find(label);
    if (attrs == op.outputAttributes.end()) return out;
    auto integer = [&](const char* name) -> std::optional<int64_t> {
        const auto it = attrs->second.find(name);
        if (it == attrs->second.end()) return std::nullopt;
        if (const int64_t* v = std::get_if<int64_t>(&it->second)) return *v;
        return std::nullopt;
    };
    out.repeats = integer("repeats");
    if (const std::optional<int64_t> r = integer("reproducible"); r && (*r == 0 || *r == 1))
        out.reproducible = *r == 1;
    return out;
}

}  // namespace faultline
