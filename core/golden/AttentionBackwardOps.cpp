// Glue of the fused attention backward's golden ops: attention_backward_q, _k, _v
// (AttentionBackwardGolden.h), one trace op per gradient, each with every input the call reads.
#include <cmath>

#include "AttentionBackwardGolden.h"
#include "OpDefinitions.h"

namespace faultline::golden::ops {

namespace {

using Shape = std::vector<uint64_t>;

std::string_view gradName(AttentionGrad which)
{
    return which == AttentionGrad::Query ? "attention_backward_q"
           : which == AttentionGrad::Key ? "attention_backward_k"
                                         : "attention_backward_v";
}

struct AttentionBackwardPlan {
    OutputSpec out;
    AttentionShape shape;
    double scale = 1.0;
    bool causal = false;
    std::vector<float> g, q, k, v;
    AttentionBackwardInput in;
};

// [g, q, k, v, out, logsumexp] = [b, h, sq, dv], [b, h, sq, d], [b, h, sk, d], [b, h, sk, dv],
// the forward's output [b, h, sq, dv] and logsumexp (b h sq values): the call reads all six, the
// golden model the first four (its answer is the mathematical one, not the saved forward's).
Result<AttentionBackwardPlan> planAttentionBackward(AttentionGrad which, GoldenInputs in, const OpParams& p,
                                                    bool load)
{
    const std::string_view op = gradName(which);
    if (Status s = checkCount(op, in, 6, 6, "6 inputs (grad_out, q, k, v, out, logsumexp)"); !s)
        return s.error();
    if (Status s = checkInputs(op, in); !s) return s.error();
    const char* layouts[] = {"[b, h, sq, dv]", "[b, h, sq, d]", "[b, h, sk, d]", "[b, h, sk, dv]"};
    const char* roles[] = {"grad_out", "q", "k", "v"};
    for (size_t i = 0; i < 4; ++i)
        if (in[i].shape.size() != 4)
            return opError(op, inputName(i) + " (" + roles[i] + ") has shape " + shapeString(in[i].shape) +
                                   " but needs 4 dimensions " + layouts[i]);
    const Shape& g = in[0].shape;
    const Shape& q = in[1].shape;
    const Shape& k = in[2].shape;
    const Shape& v = in[3].shape;
    const Shape wantK = {q[0], q[1], k[2], q[3]}, wantV = {q[0], q[1], k[2], v[3]},
                wantG = {q[0], q[1], q[2], v[3]};
    if (k != wantK)
        return opError(op, "inputs[2] (k) has shape " + shapeString(k) + " but q " + shapeString(q) +
                               " needs [" + std::to_string(q[0]) + ", " + std::to_string(q[1]) + ", sk, " +
                               std::to_string(q[3]) + "]");
    if (v != wantV)
        return opError(op, "inputs[3] (v) has shape " + shapeString(v) + " but needs " + shapeString(wantV));
    if (g != wantG)
        return opError(
            op, "inputs[0] (grad_out) has shape " + shapeString(g) + " but needs " + shapeString(wantG));
    if (in[4].shape != wantG)
        return opError(
            op, "inputs[4] (out) has shape " + shapeString(in[4].shape) + " but needs " + shapeString(wantG));
    if (in[5].elementCount() != q[0] * q[1] * q[2])
        return opError(op, "inputs[5] (logsumexp) has shape " + shapeString(in[5].shape) +
                               " but needs b h sq = " + std::to_string(q[0] * q[1] * q[2]) + " values");
    if (q[3] == 0) return opError(op, "inputs[1] (q) has head dimension d = 0");
    AttentionBackwardPlan plan;
    plan.shape = {int64_t(q[0]), int64_t(q[1]), int64_t(q[2]), int64_t(k[2]), int64_t(q[3]), int64_t(v[3])};
    Result<bool> causal = paramBool(op, p, "causal", false);
    if (!causal) return causal.error();
    plan.causal = *causal;
    Result<double> scale = paramDouble(op, p, "scale", 1.0 / std::sqrt(double(q[3])));
    if (!scale) return scale.error();
    plan.scale = *scale;
    const size_t source = which == AttentionGrad::Query ? 1 : which == AttentionGrad::Key ? 2 : 3;
    plan.out = {in[source].dtype, in[source].shape};
    if (Status s = checkOutputSize(op, plan.out.shape); !s) return s.error();
    if (Status s = checkOutputSize(op, Shape{q[2], k[2]}); !s) return s.error();  // score rows
    if (!load) return plan;
    plan.g = toFloatVector(in[0]);
    plan.q = toFloatVector(in[1]);
    plan.k = toFloatVector(in[2]);
    plan.v = toFloatVector(in[3]);
    plan.in = {plan.g.data(), plan.q.data(), plan.k.data(), plan.v.data(),
               plan.shape,    plan.scale,    plan.causal,   in[1].dtype};
    return plan;
}

Result<OutputSpec> inferGrad(AttentionGrad which, GoldenInputs in, const OpParams& p)
{
    Result<AttentionBackwardPlan> plan = planAttentionBackward(which, in, p, false);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runGrad(AttentionGrad which, GoldenInputs in, const OpParams& p)
{
    Result<AttentionBackwardPlan> plan = planAttentionBackward(which, in, p, true);
    if (!plan) return plan.error();
    const std::vector<double> exact = attentionBackwardGolden(which, plan->in);
    std::vector<float> rounded(exact.begin(), exact.end());
    return fromFloatVector(plan->out.dtype, plan->out.shape, rounded);
}

Result<std::vector<double>> boundGrad(AttentionGrad which, GoldenInputs in, const OpParams& p,
                                      const HostTensor& golden, const BoundOptions& o)
{
    Result<AttentionBackwardPlan> plan = planAttentionBackward(which, in, p, true);
    if (!plan) return plan.error();
    if (Status s = checkGolden(gradName(which), plan->out, golden); !s) return s.error();
    return attentionBackwardErrorBound(which, plan->in, toDoubleVector(golden), plan->out.dtype, o);
}

}  // namespace

#define FL_ATTENTION_GRAD_GLUE(Name, which)                                                               \
    Result<OutputSpec> infer##Name(GoldenInputs in, const OpParams& p)                                    \
    {                                                                                                     \
        return inferGrad(which, in, p);                                                                   \
    }                                                                                                     \
    Result<HostTensor> run##Name(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)             \
    {                                                                                                     \
        return runGrad(which, in, p);                                                                     \
    }                                                                                                     \
    Result<std::vector<double>> bound##Name(GoldenInputs in, const OpParams& p, const HostTensor& golden, \
                                            const BoundOptions& o)                                        \
    {                                                                                                     \
        return boundGrad(which, in, p, golden, o);                                                        \
    }

FL_ATTENTION_GRAD_GLUE(AttentionBackwardQ, AttentionGrad::Query)
FL_ATTENTION_GRAD_GLUE(AttentionBackwardK, AttentionGrad::Key)
FL_ATTENTION_GRAD_GLUE(AttentionBackwardV, AttentionGrad::Value)

#undef FL_ATTENTION_GRAD_GLUE

}  // namespace faultline::golden::ops
