// Glue of the element-wise golden ops: gelu, silu, all_reduce (add, mul and the other formulas:
// PointwiseOps.cpp).
#include "ActivationGolden.h"
#include "AllReduceGolden.h"
#include "OpDefinitions.h"

namespace faultline::golden::ops {

namespace {

struct ActivationPlan {
    OutputSpec out;
    Activation kind = Activation::Silu;
};

Result<ActivationPlan> planActivation(std::string_view op, GoldenInputs in, const OpParams& p)
{
    if (Status s = checkCount(op, in, 1, 1, "1 input (x)"); !s) return s.error();
    if (Status s = checkInputs(op, in); !s) return s.error();
    ActivationPlan plan;
    plan.out = {in[0].dtype, in[0].shape};
    if (op == "silu") return plan;
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

Result<HostTensor> runActivation(std::string_view op, GoldenInputs in, const OpParams& p)
{
    Result<ActivationPlan> plan = planActivation(op, in, p);
    if (!plan) return plan.error();
    std::vector<float> x = toFloatVector(in[0]);
    activationGolden(plan->kind, x.data(), x.data(), int64_t(x.size()));
    return fromFloatVector(plan->out.dtype, plan->out.shape, x);
}

Result<std::vector<double>> boundActivation(std::string_view op, GoldenInputs in, const OpParams& p,
                                            const HostTensor& golden, const BoundOptions& o)
{
    Result<ActivationPlan> plan = planActivation(op, in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden(op, plan->out, golden); !s) return s.error();
    const std::vector<float> x = toFloatVector(in[0]);
    return activationErrorBound(plan->kind, x.data(), int64_t(x.size()), toDoubleVector(golden),
                                plan->out.dtype, o);
}

}  // namespace

Result<OutputSpec> inferGelu(GoldenInputs in, const OpParams& p)
{
    Result<ActivationPlan> plan = planActivation("gelu", in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runGelu(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runActivation("gelu", in, p);
}

Result<std::vector<double>> boundGelu(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                      const BoundOptions& o)
{
    return boundActivation("gelu", in, p, golden, o);
}

Result<OutputSpec> inferSilu(GoldenInputs in, const OpParams& p)
{
    Result<ActivationPlan> plan = planActivation("silu", in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runSilu(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runActivation("silu", in, p);
}

Result<std::vector<double>> boundSilu(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                      const BoundOptions& o)
{
    return boundActivation("silu", in, p, golden, o);
}

// ---- all_reduce ------------------------------------------------------------------------------

namespace {

struct AllReducePlan {
    OutputSpec out;
    ReduceOp op = ReduceOp::Sum;
};

Result<AllReducePlan> planAllReduce(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "all_reduce";
    if (Status s = checkCount(op, in, 1, size_t(1) << 20, "at least 1 input (one per rank)"); !s)
        return s.error();
    if (Status s = checkInputs(op, in); !s) return s.error();
    for (size_t i = 1; i < in.size(); ++i)
        if (in[i].shape != in[0].shape || in[i].dtype != in[0].dtype)
            return opError(op, inputName(i) + " is " + std::string(dtypeName(in[i].dtype)) + " " +
                                   shapeString(in[i].shape) + " but every rank needs inputs[0]'s " +
                                   std::string(dtypeName(in[0].dtype)) + " " + shapeString(in[0].shape));
    AllReducePlan plan;
    Result<std::string> name = paramString(op, p, "reduce_op", std::string("sum"));
    if (!name) return name.error();
    const auto reduce = parseReduceOp(*name);
    if (!reduce) return opError(op, "parameter reduce_op=" + *name + " is not sum, max or min");
    plan.op = *reduce;
    if (auto it = p.find("ranks"); it != p.end()) {
        const auto* labels = std::get_if<std::vector<std::string>>(&it->second);
        const size_t count = labels ? labels->size() : 1;
        if (count != in.size())
            return opError(op, "parameter ranks=" + attrValueToString(it->second) + " names " +
                                   std::to_string(count) + " rank(s) but there are " +
                                   std::to_string(in.size()) + " inputs");
    }
    plan.out = {in[0].dtype, in[0].shape};
    return plan;
}

std::vector<std::vector<float>> rankValues(GoldenInputs in)
{
    std::vector<std::vector<float>> v;
    v.reserve(in.size());
    for (const HostTensor& t : in) v.push_back(toFloatVector(t));
    return v;
}

std::vector<const float*> rankPointers(const std::vector<std::vector<float>>& v)
{
    std::vector<const float*> p;
    for (const auto& r : v) p.push_back(r.data());
    return p;
}

}  // namespace

Result<OutputSpec> inferAllReduce(GoldenInputs in, const OpParams& p)
{
    Result<AllReducePlan> plan = planAllReduce(in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runAllReduce(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<AllReducePlan> plan = planAllReduce(in, p);
    if (!plan) return plan.error();
    const auto values = rankValues(in);
    const auto ptrs = rankPointers(values);
    std::vector<float> out(values[0].size());
    allReduceGolden(plan->op, ptrs, out.data(), int64_t(out.size()));
    return fromFloatVector(plan->out.dtype, plan->out.shape, out);
}

Result<std::vector<double>> boundAllReduce(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                           const BoundOptions& o)
{
    Result<AllReducePlan> plan = planAllReduce(in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden("all_reduce", plan->out, golden); !s) return s.error();
    const auto values = rankValues(in);
    const auto ptrs = rankPointers(values);
    return allReduceErrorBound(plan->op, ptrs, int64_t(values[0].size()), toDoubleVector(golden),
                               plan->out.dtype, o);
}

}  // namespace faultline::golden::ops
