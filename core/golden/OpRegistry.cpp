#include "OpRegistry.h"

#include <algorithm>

#include "OpDefinitions.h"

namespace faultline::golden {

namespace {

const std::vector<GoldenOp>& registry()
{
    // THE list of golden ops. A new op: its kernel file, its glue (infer/run/bound), one row here.
    static const std::vector<GoldenOp> table = {
        {"gemm",
         "gemm(A, B[, C])",
         {"trans_a", "trans_b", "alpha", "beta", "out_dtype"},
         ops::inferGemm,
         ops::runGemm,
         ops::boundGemm},
        {"layernorm",
         "layernorm(x, gamma, beta)",
         {"eps"},
         ops::inferLayerNorm,
         ops::runLayerNorm,
         ops::boundLayerNorm},
        {"rmsnorm", "rmsnorm(x, gamma)", {"eps"}, ops::inferRmsNorm, ops::runRmsNorm, ops::boundRmsNorm},
        {"softmax", "softmax(x)", {"scale"}, ops::inferSoftmax, ops::runSoftmax, ops::boundSoftmax},
        {"gelu", "gelu(x)", {"approximate"}, ops::inferGelu, ops::runGelu, ops::boundGelu},
        {"silu", "silu(x)", {}, ops::inferSilu, ops::runSilu, ops::boundSilu},
        {"add", "add(x, y)", {}, ops::inferAdd, ops::runAdd, ops::boundAdd},
        {"mul", "mul(x, y)", {}, ops::inferMul, ops::runMul, ops::boundMul},
        {"attention",
         "attention(q, k, v)",
         {"causal", "scale"},
         ops::inferAttention,
         ops::runAttention,
         ops::boundAttention},
        {"all_reduce",
         "all_reduce(x_rank0, x_rank1, ...)",
         {"reduce_op", "ranks"},
         ops::inferAllReduce,
         ops::runAllReduce,
         ops::boundAllReduce},
    };
    return table;
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
    return def->infer(inputs, params);
}

Result<HostTensor> runGolden(std::string_view op, GoldenInputs inputs, const OpParams& params,
                             const GoldenRunOptions& options)
{
    const GoldenOp* def = findGoldenOp(op);
    if (!def) return unknownOp(op);
    return def->run(inputs, params, options);
}

Result<std::vector<double>> goldenErrorBound(std::string_view op, GoldenInputs inputs, const OpParams& params,
                                             const HostTensor& golden, const BoundOptions& options)
{
    const GoldenOp* def = findGoldenOp(op);
    if (!def) return unknownOp(op);
    return def->bound(inputs, params, golden, options);
}

std::vector<std::string> unknownGoldenParams(std::string_view op, const OpParams& params)
{
    std::vector<std::string> unknown;
    const GoldenOp* def = findGoldenOp(op);
    for (const auto& [name, value] : params) {
        (void)value;
        if (!def || std::find(def->params.begin(), def->params.end(), name) == def->params.end())
            unknown.push_back(name);
    }
    return unknown;  // std::map keys: already sorted
}

}  // namespace faultline::golden
