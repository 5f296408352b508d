// Glue of the golden ops that work row by row over the last axis: layernorm, rmsnorm, softmax.
#include "NormGolden.h"
#include "OpDefinitions.h"
#include "SoftmaxGolden.h"

namespace faultline::golden::ops {

namespace {

// ---- layernorm, rmsnorm ------------------------------------------------------------------------

struct NormPlan {
    OutputSpec out;
    RowView rows;
    float eps = 0;
};

Result<NormPlan> planNorm(std::string_view op, GoldenInputs in, const OpParams& p)
{
    const bool layer = op == "layernorm";
    if (Status s = checkCount(op, in, layer ? 3 : 2, layer ? 3 : 2,
                              layer ? "3 inputs (x, gamma, beta)" : "2 inputs (x, gamma)");
        !s)
        return s.error();
    if (Status s = checkInputs(op, in); !s) return s.error();
    NormPlan plan;
    Result<RowView> rows = lastAxisRows(op, in[0], "inputs[0] (x)");
    if (!rows) return rows.error();
    plan.rows = *rows;
    const uint64_t n = in[0].shape.back();
    if (Status s = checkVector(op, in, 1, "gamma", n); !s) return s.error();
    if (layer)
        if (Status s = checkVector(op, in, 2, "beta", n); !s) return s.error();
    Result<float> eps = layer ? paramEps(op, p, 1e-5) : paramEps(op, p, std::nullopt);
    if (!eps) return eps.error();
    plan.eps = *eps;
    plan.out = {in[0].dtype, in[0].shape};
    return plan;
}

}  // namespace

Result<OutputSpec> inferLayerNorm(GoldenInputs in, const OpParams& p)
{
    Result<NormPlan> plan = planNorm("layernorm", in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<OutputSpec> inferRmsNorm(GoldenInputs in, const OpParams& p)
{
    Result<NormPlan> plan = planNorm("rmsnorm", in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runLayerNorm(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<NormPlan> plan = planNorm("layernorm", in, p);
    if (!plan) return plan.error();
    const auto x = toFloatVector(in[0]), g = toFloatVector(in[1]), b = toFloatVector(in[2]);
    std::vector<float> y(x.size());
    layerNormGolden(x.data(), g.data(), b.data(), y.data(), plan->rows.rows, plan->rows.n, plan->eps);
    return fromFloatVector(plan->out.dtype, plan->out.shape, y);
}

Result<HostTensor> runRmsNorm(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<NormPlan> plan = planNorm("rmsnorm", in, p);
    if (!plan) return plan.error();
    const auto x = toFloatVector(in[0]), g = toFloatVector(in[1]);
    std::vector<float> y(x.size());
    rmsNormGolden(x.data(), g.data(), y.data(), plan->rows.rows, plan->rows.n, plan->eps);
    return fromFloatVector(plan->out.dtype, plan->out.shape, y);
}

Result<std::vector<double>> boundLayerNorm(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                           const BoundOptions& o)
{
    Result<NormPlan> plan = planNorm("layernorm", in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden("layernorm", plan->out, golden); !s) return s.error();
    const auto x = toFloatVector(in[0]), g = toFloatVector(in[1]), b = toFloatVector(in[2]);
    return layerNormErrorBound(x.data(), g.data(), b.data(), plan->rows.rows, plan->rows.n, plan->eps,
                               toDoubleVector(golden), plan->out.dtype, o);
}

Result<std::vector<double>> boundRmsNorm(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                         const BoundOptions& o)
{
    Result<NormPlan> plan = planNorm("rmsnorm", in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden("rmsnorm", plan->out, golden); !s) return s.error();
    const auto x = toFloatVector(in[0]), g = toFloatVector(in[1]);
    return rmsNormErrorBound(x.data(), g.data(), plan->rows.rows, plan->rows.n, plan->eps,
                             toDoubleVector(golden), plan->out.dtype, o);
}

// ---- softmax -----------------------------------------------------------------------------------

namespace {

struct SoftmaxPlan {
    OutputSpec out;
    RowView rows;
    bool hasScale = false;
    float scale = 1.0f;
};

Result<SoftmaxPlan> planSoftmax(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "softmax";
    if (Status s = checkCount(op, in, 1, 1, "1 input (x)"); !s) return s.error();
    if (Status s = checkInputs(op, in); !s) return s.error();
    SoftmaxPlan plan;
    Result<RowView> rows = lastAxisRows(op, in[0], "inputs[0] (x)");
    if (!rows) return rows.error();
    plan.rows = *rows;
    if (p.count("scale")) {
        Result<float> scale = paramFloat(op, p, "scale", std::nullopt);
        if (!scale) return scale.error();
        plan.hasScale = true;
        plan.scale = *scale;
    }
    plan.out = {in[0].dtype, in[0].shape};
    return plan;
}

}  // namespace

Result<OutputSpec> inferSoftmax(GoldenInputs in, const OpParams& p)
{
    Result<SoftmaxPlan> plan = planSoftmax(in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runSoftmax(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<SoftmaxPlan> plan = planSoftmax(in, p);
    if (!plan) return plan.error();
    std::vector<float> x = toFloatVector(in[0]);
    softmaxGolden(x.data(), x.data(), plan->rows.rows, plan->rows.n, plan->hasScale, plan->scale);
    return fromFloatVector(plan->out.dtype, plan->out.shape, x);
}

Result<std::vector<double>> boundSoftmax(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                         const BoundOptions& o)
{
    Result<SoftmaxPlan> plan = planSoftmax(in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden("softmax", plan->out, golden); !s) return s.error();
    const std::vector<float> x = toFloatVector(in[0]);
    return softmaxErrorBound(x.data(), plan->rows.rows, plan->rows.n, plan->hasScale, plan->scale,
                             toDoubleVector(golden), plan->out.dtype, o);
}

}  // namespace faultline::golden::ops
