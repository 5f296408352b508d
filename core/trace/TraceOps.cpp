#include "TraceOps.h"

#include <algorithm>
#include <charconv>
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
    static const std::vector<std::string_view> attributes = {"aten", "device_type", "call", "allow_tf32",
                                                             "reduced_precision_reduction"};
    return attributes;
}

namespace {

std::string numberToString(double v)
{
    char buffer[64];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);  // shortest round-trip form
    return std::string(buffer, r.ptr);
}

std::string quoted(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

template <class T, class F>
std::string listToString(const std::vector<T>& values, F format)
{
    std::string out = "[";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ", ";
        out += format(values[i]);
    }
    return out + "]";
}

}  // namespace

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
        case OpNumerics::Pointwise:
            return "pointwise";
        case OpNumerics::Summation:
            return "summation";
    }
    return "intermediates";
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
    const auto& capture = captureTraceOpAttributes();
    return isKnownTraceOp(op) && std::find(capture.begin(), capture.end(), attribute) != capture.end();
}

// Integers as decimal, floats in their shortest round-trip form, strings as they are; arrays as
// "[1, 2]" / "[0.5, 2]" / "[\"gpu0\", \"gpu1\"]".
std::string attrValueToString(const AttrValue& v)
{
    return std::visit(
        [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, int64_t>)
                return std::to_string(x);
            else if constexpr (std::is_same_v<T, double>)
                return numberToString(x);
            else if constexpr (std::is_same_v<T, std::string>)
                return x;
            else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
                return listToString(x, [](int64_t i) { return std::to_string(i); });
            else if constexpr (std::is_same_v<T, std::vector<double>>)
                return listToString(x, numberToString);
            else
                return listToString(x, quoted);
        },
        v);
}

}  // namespace faultline
