// Glue of the backward golden ops: softmax_backward, layernorm_backward_input/_weight/_bias,
// gelu_backward, silu_backward (BackwardGolden.h).
#include "BackwardGolden.h"
#include "OpDefinitions.h"
#include "TrainingBounds.h"

namespace faultline::golden::ops {

namespace {

// [g, other]: two float inputs of one shape; the output has g's dtype and shape.
Status checkGradPair(std::string_view op, GoldenInputs in, std::string_view what, std::string_view other)
{
    if (Status s = checkCount(op, in, 2, 2, what); !s) return s;
    if (Status s = checkInputs(op, in); !s) return s;
    if (in[1].shape != in[0].shape)
        return opError(op, "inputs[1] (" + std::string(other) + ") has shape " + shapeString(in[1].shape) +
                               " but needs the shape of inputs[0] " + shapeString(in[0].shape));
    return Status::success();
}

// ---- softmax_backward ----------------------------------------------------------------------------

struct SoftmaxBackwardPlan {
    OutputSpec out;
    RowView rows;
};

Result<SoftmaxBackwardPlan> planSoftmaxBackward(GoldenInputs in)
{
    const std::string_view op = "softmax_backward";
    if (Status s = checkGradPair(op, in, "2 inputs (grad, the forward's output p)", "the forward's output p");
        !s)
        return s.error();
    Result<RowView> rows = lastAxisRows(op, in[0], "inputs[0] (grad)");
    if (!rows) return rows.error();
    return SoftmaxBackwardPlan{{in[0].dtype, in[0].shape}, *rows};
}

}  // namespace

Result<OutputSpec> inferSoftmaxBackward(GoldenInputs in, const OpParams&)
{
    return outputOf(planSoftmaxBackward(in));
}

Result<HostTensor> runSoftmaxBackward(GoldenInputs in, const OpParams&, const GoldenRunOptions&)
{
    Result<SoftmaxBackwardPlan> plan = planSoftmaxBackward(in);
    if (!plan) return plan.error();
    const std::vector<float> g = toFloatVector(in[0]), y = toFloatVector(in[1]);
    std::vector<float> gi(g.size());
    softmaxBackwardGolden(g.data(), y.data(), gi.data(), plan->rows.rows, plan->rows.n);
    return fromFloatVector(plan->out.dtype, plan->out.shape, gi);
}

Result<std::vector<double>> boundSoftmaxBackward(GoldenInputs in, const OpParams&, const HostTensor& golden,
                                                 const BoundOptions& o)
{
    Result<SoftmaxBackwardPlan> plan = planSoftmaxBackward(in);
    if (!plan) return plan.error();
    if (Status s = checkGolden("softmax_backward", plan->out, golden); !s) return s.error();
    const std::vector<float> g = toFloatVector(in[0]), y = toFloatVector(in[1]);
    return softmaxBackwardErrorBound(g.data(), y.data(), plan->rows.rows, plan->rows.n,
                                     toDoubleVector(golden), plan->out.dtype, o);
}

// ---- layernorm_backward_input, _weight, _bias ------------------------------------------------------

namespace {

std::string_view layerNormGradName(LayerNormGrad which)
{
    return which == LayerNormGrad::Input    ? "layernorm_backward_input"
           : which == LayerNormGrad::Weight ? "layernorm_backward_weight"
                                            : "layernorm_backward_bias";
}

struct LayerNormBackwardPlan {
    OutputSpec out;
    RowView rows;
    std::vector<float> dy, x, mean, rstd, gamma;
    LayerNormBackwardInput in;
};

// [dy, x, mean, rstd, gamma, beta]: dy and x [..., n], mean and rstd one value per row (any shape,
// e.g. the forward's [..., 1]), gamma and beta [n] (beta is not read: the call takes it).
Result<LayerNormBackwardPlan> planLayerNormBackward(LayerNormGrad which, GoldenInputs in, const OpParams& p,
                                                    bool load)
{
    const std::string_view op = layerNormGradName(which);
    if (Status s = checkCount(op, in, 6, 6, "6 inputs (dy, x, mean, rstd, gamma, beta)"); !s)
        return s.error();
    if (Status s = checkInputs(op, in); !s) return s.error();
    if (in[1].shape != in[0].shape)
        return opError(op, "inputs[1] (x) has shape " + shapeString(in[1].shape) +
                               " but needs the shape of inputs[0] " + shapeString(in[0].shape));
    LayerNormBackwardPlan plan;
    Result<RowView> rows = lastAxisRows(op, in[0], "inputs[0] (dy)");
    if (!rows) return rows.error();
    plan.rows = *rows;
    for (size_t i : {size_t(2), size_t(3)})
        if (in[i].elementCount() != uint64_t(plan.rows.rows))
            return opError(op, inputName(i) + (i == 2 ? " (mean)" : " (rstd)") + " has shape " +
                                   shapeString(in[i].shape) + " but needs one value per row (" +
                                   std::to_string(plan.rows.rows) + ")");
    const uint64_t n = in[0].shape.back();
    if (Status s = checkVector(op, in, 4, "gamma", n); !s) return s.error();
    if (Status s = checkVector(op, in, 5, "beta", n); !s) return s.error();
    plan.out =
        which == LayerNormGrad::Input ? OutputSpec{in[0].dtype, in[0].shape} : OutputSpec{in[4].dtype, {n}};
    int64_t chunks = 0;
    if (which != LayerNormGrad::Input) {  // grad_weight, grad_bias: PyTorch's CPU order, if recorded
        Result<int64_t> order = paramInt(op, p, "cpu_order", 0);
        if (!order) return order.error();
        if (*order < 0 || *order > 65536)
            return opError(op, "parameter cpu_order=" + std::to_string(*order) + " is not a thread count");
        chunks = *order;
    }
    if (!load) return plan;
    plan.dy = toFloatVector(in[0]);
    plan.x = toFloatVector(in[1]);
    plan.mean = toFloatVector(in[2]);
    plan.rstd = toFloatVector(in[3]);
    plan.gamma = toFloatVector(in[4]);
    plan.in = {plan.dy.data(), plan.x.data(), plan.mean.data(), plan.rstd.data(), plan.gamma.data(),
               plan.rows.rows, plan.rows.n,   chunks,           plan.out.dtype};
    return plan;
}

Result<HostTensor> runLayerNormGrad(LayerNormGrad which, GoldenInputs in, const OpParams& p)
{
    Result<LayerNormBackwardPlan> plan = planLayerNormBackward(which, in, p, true);
    if (!plan) return plan.error();
    std::vector<float> out(size_t(elementCountOf(plan->out.shape)));
    layerNormBackwardGolden(which, plan->in, out.data());
    return fromFloatVector(plan->out.dtype, plan->out.shape, out);
}

Result<std::vector<double>> boundLayerNormGrad(LayerNormGrad which, GoldenInputs in, const OpParams& p,
                                               const HostTensor& golden, const BoundOptions& o)
{
    Result<LayerNormBackwardPlan> plan = planLayerNormBackward(which, in, p, true);
    if (!plan) return plan.error();
    if (Status s = checkGolden(layerNormGradName(which), plan->out, golden); !s) return s.error();
    return layerNormBackwardErrorBound(which, plan->in, toDoubleVector(golden), plan->out.dtype, o);
}

}  // namespace

Result<OutputSpec> inferLayerNormBackwardInput(GoldenInputs in, const OpParams& p)
{
    return outputOf(planLayerNormBackward(LayerNormGrad::Input, in, p, false));
}

Result<HostTensor> runLayerNormBackwardInput(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runLayerNormGrad(LayerNormGrad::Input, in, p);
}

Result<std::vector<double>> boundLayerNormBackwardInput(GoldenInputs in, const OpParams& p,
                                                        const HostTensor& golden, const BoundOptions& o)
{
    return boundLayerNormGrad(LayerNormGrad::Input, in, p, golden, o);
}

Result<OutputSpec> inferLayerNormBackwardWeight(GoldenInputs in, const OpParams& p)
{
    return outputOf(planLayerNormBackward(LayerNormGrad::Weight, in, p, false));
}

Result<HostTensor> runLayerNormBackwardWeight(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runLayerNormGrad(LayerNormGrad::Weight, in, p);
}

Result<std::vector<double>> boundLayerNormBackwardWeight(GoldenInputs in, const OpParams& p,
                                                         const HostTensor& golden, const BoundOptions& o)
{
    return boundLayerNormGrad(LayerNormGrad::Weight, in, p, golden, o);
}

Result<OutputSpec> inferLayerNormBackwardBias(GoldenInputs in, const OpParams& p)
{
    return outputOf(planLayerNormBackward(LayerNormGrad::Bias, in, p, false));
}

Result<HostTensor> runLayerNormBackwardBias(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runLayerNormGrad(LayerNormGrad::Bias, in, p);
}

Result<std::vector<double>> boundLayerNormBackwardBias(GoldenInputs in, const OpParams& p,
                                                       const HostTensor& golden, const BoundOptions& o)
{
    return boundLayerNormGrad(LayerNormGrad::Bias, in, p, golden, o);
}

// ---- gelu_backward, silu_backward ------------------------------------------------------------------

namespace {

struct ActivationBackwardPlan {
    OutputSpec out;
    Activation kind = Activation::Silu;
};

Result<ActivationBackwardPlan> planActivationBackward(bool gelu, GoldenInputs in, const OpParams& p)
{
    const std::string_view op = gelu ? "gelu_backward" : "silu_backward";
    if (Status s = checkGradPair(op, in, "2 inputs (grad, x)", "x"); !s) return s.error();
    ActivationBackwardPlan plan;
    plan.out = {in[0].dtype, in[0].shape};
    if (!gelu) return plan;
    Result<std::string> approx = paramString(op, p, "approximate", std::string("none"));
    if (!approx) return approx.error();
    if (*approx == "none")
        plan.kind = Activation::GeluErf;
    else if (*approx == "tanh")
        plan.kind = Activation::GeluTanh;
    else
        return opError(op, "parameter approximate=" + *approx + " is not none or tanh");
    return plan;
}

Result<HostTensor> runActivationBackward(bool gelu, GoldenInputs in, const OpParams& p)
{
    Result<ActivationBackwardPlan> plan = planActivationBackward(gelu, in, p);
    if (!plan) return plan.error();
    const std::vector<float> g = toFloatVector(in[0]), x = toFloatVector(in[1]);
    std::vector<float> gi(g.size());
    activationBackwardGolden(plan->kind, g.data(), x.data(), gi.data(), int64_t(g.size()));
    return fromFloatVector(plan->out.dtype, plan->out.shape, gi);
}

Result<std::vector<double>> boundActivationBackward(bool gelu, GoldenInputs in, const OpParams& p,
                                                    const HostTensor& golden, const BoundOptions& o)
{
    Result<ActivationBackwardPlan> plan = planActivationBackward(gelu, in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden(gelu ? "gelu_backward" : "silu_backward", plan->out, golden); !s)
        return s.error();
    const std::vector<float> g = toFloatVector(in[0]), x = toFloatVector(in[1]);
    return activationBackwardErrorBound(plan->kind, g.data(), x.data(), int64_t(g.size()),
                                        toDoubleVector(golden), plan->out.dtype, o);
}

}  // namespace

Result<OutputSpec> inferGeluBackward(GoldenInputs in, const OpParams& p)
{
    return outputOf(planActivationBackward(true, in, p));
}

Result<HostTensor> runGeluBackward(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runActivationBackward(true, in, p);
}

Result<std::vector<double>> boundGeluBackward(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                              const BoundOptions& o)
{
    return boundActivationBackward(true, in, p, golden, o);
}

Result<OutputSpec> inferSiluBackward(GoldenInputs in, const OpParams& p)
{
    return outputOf(planActivationBackward(false, in, p));
}

Result<HostTensor> runSiluBackward(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runActivationBackward(false, in, p);
}

Result<std::vector<double>> boundSiluBackward(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                              const BoundOptions& o)
{
    return boundActivationBackward(false, in, p, golden, o);
}

}  // namespace faultline::golden::ops
