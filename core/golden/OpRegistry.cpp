#include "OpRegistry.h"

#include <algorithm>

#include "../trace/TraceOps.h"
#include "OpDefinitions.h"

namespace faultline::golden {

namespace {

const std::vector<GoldenOp>& registry()
{
    // One row per op of THE list (core/trace/OpList.h): name, signature and parameters from the
    // list, the glue (infer/run/bound) by the row's Glue name.
    static const std::vector<GoldenOp> table = {
#define FL_TRACE_OP(name, Glue, numerics, collective, signature, ...) \
    {#name, signature, {__VA_ARGS__}, ops::infer##Glue, ops::run##Glue, ops::bound##Glue},
#include "../trace/OpList.h"
#undef FL_TRACE_OP
    };
    return table;
}

// A parameter the op does not read would be silently ignored, and the device judged against a
// computation other than the one it ran: an error (what faultline_capture records on every op,
// how the call ran, is not a parameter of the computation and passes).
Status checkParams(const GoldenOp& def, const OpParams& params)
{
    for (const auto& [name, value] : params) {
        (void)value;
        if (std::find(def.params.begin(), def.params.end(), name) != def.params.end()) continue;
        if (isKnownTraceOpAttribute(std::string(def.name), name)) continue;
        std::string reads;
        for (std::string_view p : def.params) reads += (reads.empty() ? "" : ", ") + std::string(p);
        return opError(def.name, "parameter '" + name + "' is not one the golden model reads (" +
                                     (reads.empty() ? std::string("it reads none") : "it reads " + reads) +
                                     "): judging the op without it would compare another computation");
    }
    return {};
}

Error unknownOp(std::string_view op)
{
    return opError(op, "the golden model has no such op");
}

}  // namespace

std::span<const GoldenOp> goldenOps()
{
    return registry();
}

const GoldenOp* findGoldenOp(std::string_view name)
{
    for (const GoldenOp& op : registry())
        if (op.name == name) return &op;
    return nullptr;
}

Result<OutputSpec> inferGoldenOutput(std::string_view op, GoldenInputs inputs, const OpParams& params)
{
    const GoldenOp* def = findGoldenOp(op);
    if (!def) return unknownOp(op);
    if (Status st = checkParams(*def, params); !st) return st.error();
    return def->infer(inputs, params);
}

Result<HostTensor> runGolden(std::string_view op, GoldenInputs inputs, const OpParams& params,
                             const GoldenRunOptions& options)
{
    const GoldenOp* def = findGoldenOp(op);
    if (!def) return unknownOp(op);
    if (Status st = checkParams(*def, params); !st) return st.error();
    return def->run(inputs, params, options);
}

Result<std::vector<double>> goldenErrorBound(std::string_view op, GoldenInputs inputs, const OpParams& params,
                                             const HostTensor& golden, const BoundOptions& options)
{
    const GoldenOp* def = findGoldenOp(op);
    if (!def) return unknownOp(op);
    if (Status st = checkParams(*def, params); !st) return st.error();
    return def->bound(inputs, params, golden, options);
}

}  // namespace faultline::golden
