#include "TraceOps.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "Trace.h"

namespace faultline {

namespace {

const std::map<std::string, std::vector<std::string_view>, std::less<>>& opTable()
{
    static const std::map<std::string, std::vector<std::string_view>, std::less<>> table = {
        {"gemm", {"trans_a", "trans_b", "alpha", "beta", "out_dtype"}},
        {"layernorm", {"eps"}},
        {"rmsnorm", {"eps"}},
        {"softmax", {"scale"}},
        {"gelu", {"approximate"}},
        {"silu", {}},
        {"add", {}},
        {"mul", {}},
        {"attention", {"causal", "scale"}},
        {"all_reduce", {"reduce_op", "ranks"}},
        {"all_gather", {"ranks"}},
        {"reduce_scatter", {"reduce_op", "ranks"}},
        {"broadcast", {"root", "ranks"}},
    };
    return table;
}

// What faultline_capture records on every op (docs/capture.md): how the aten call ran, not
// what the op computes.
const std::vector<std::string_view>& captureAttributes()
{
    static const std::vector<std::string_view> attributes = {"aten", "device_type", "call", "allow_tf32",
                                                             "reduced_precision_reduction"};
    return attributes;
}

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

bool isKnownTraceOp(const std::string& op)
{
    return opTable().count(op) > 0;
}

const std::vector<std::string_view>& commonTraceOpAttributes()
{
    static const std::vector<std::string_view> common = {"op", "inputs", "name", "phase"};
    return common;
}

const std::vector<std::string_view>& knownTraceOpParameters(const std::string& op)
{
    static const std::vector<std::string_view> none;
    const auto it = opTable().find(op);
    return it == opTable().end() ? none : it->second;
}

bool isKnownTraceOpAttribute(const std::string& op, const std::string& attribute)
{
    const auto& common = commonTraceOpAttributes();
    if (std::find(common.begin(), common.end(), attribute) != common.end()) return true;
    const auto& known = knownTraceOpParameters(op);
    if (std::find(known.begin(), known.end(), attribute) != known.end()) return true;
    const auto& capture = captureAttributes();
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
