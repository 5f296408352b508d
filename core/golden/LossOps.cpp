// Glue of the loss and embedding golden ops: log_softmax, log_softmax_backward, nll_loss,
// nll_loss_total_weight, nll_loss_backward, embedding, embedding_backward (LossGolden.h).
#include <cmath>
#include <limits>

#include "LossGolden.h"
#include "OpDefinitions.h"
#include "TrainingBounds.h"

namespace faultline::golden::ops {

namespace {

Status checkShape(std::string_view op, GoldenInputs in, size_t i, std::string_view role,
                  const std::vector<uint64_t>& shape)
{
    if (in[i].shape == shape) return Status::success();
    return opError(op, inputName(i) + " (" + std::string(role) + ") has shape " + shapeString(in[i].shape) +
                           " but needs " + shapeString(shape));
}

// ---- log_softmax, log_softmax_backward: rows over the last axis --------------------------------

struct RowsPlan {
    OutputSpec out;
    RowView rows;
};

// [x] or [g, y] (same shape), float.
Result<RowsPlan> planRows(std::string_view op, GoldenInputs in, size_t count, std::string_view what)
{
    if (Status s = checkCount(op, in, count, count, what); !s) return s.error();
    if (Status s = checkInputs(op, in); !s) return s.error();
    if (count == 2)
        if (Status s = checkShape(op, in, 1, "the forward's output", in[0].shape); !s) return s.error();
    Result<RowView> rows = lastAxisRows(op, in[0], "inputs[0]");
    if (!rows) return rows.error();
    return RowsPlan{{in[0].dtype, in[0].shape}, *rows};
}

Result<RowsPlan> planLogSoftmax(GoldenInputs in)
{
    return planRows("log_softmax", in, 1, "1 input (x)");
}

Result<RowsPlan> planLogSoftmaxBackward(GoldenInputs in)
{
    return planRows("log_softmax_backward", in, 2, "2 inputs (grad, the forward's output y)");
}

}  // namespace

Result<OutputSpec> inferLogSoftmax(GoldenInputs in, const OpParams&)
{
    return outputOf(planLogSoftmax(in));
}

Result<HostTensor> runLogSoftmax(GoldenInputs in, const OpParams&, const GoldenRunOptions&)
{
    Result<RowsPlan> plan = planLogSoftmax(in);
    if (!plan) return plan.error();
    const std::vector<float> x = toFloatVector(in[0]);
    std::vector<float> y(x.size());
    logSoftmaxGolden(x.data(), y.data(), plan->rows.rows, plan->rows.n);
    return fromFloatVector(plan->out.dtype, plan->out.shape, y);
}

Result<std::vector<double>> boundLogSoftmax(GoldenInputs in, const OpParams&, const HostTensor& golden,
                                            const BoundOptions& o)
{
    Result<RowsPlan> plan = planLogSoftmax(in);
    if (!plan) return plan.error();
    if (Status s = checkGolden("log_softmax", plan->out, golden); !s) return s.error();
    const std::vector<float> x = toFloatVector(in[0]);
    return logSoftmaxErrorBound(x.data(), plan->rows.rows, plan->rows.n, toDoubleVector(golden),
                                plan->out.dtype, o);
}

Result<OutputSpec> inferLogSoftmaxBackward(GoldenInputs in, const OpParams&)
{
    return outputOf(planLogSoftmaxBackward(in));
}

Result<HostTensor> runLogSoftmaxBackward(GoldenInputs in, const OpParams&, const GoldenRunOptions&)
{
    Result<RowsPlan> plan = planLogSoftmaxBackward(in);
    if (!plan) return plan.error();
    const std::vector<float> g = toFloatVector(in[0]), y = toFloatVector(in[1]);
    std::vector<float> gi(g.size());
    logSoftmaxBackwardGolden(g.data(), y.data(), gi.data(), plan->rows.rows, plan->rows.n);
    return fromFloatVector(plan->out.dtype, plan->out.shape, gi);
}

Result<std::vector<double>> boundLogSoftmaxBackward(GoldenInputs in, const OpParams&,
                                                    const HostTensor& golden, const BoundOptions& o)
{
    Result<RowsPlan> plan = planLogSoftmaxBackward(in);
    if (!plan) return plan.error();
    if (Status s = checkGolden("log_softmax_backward", plan->out, golden); !s) return s.error();
    const std::vector<float> g = toFloatVector(in[0]), y = toFloatVector(in[1]);
    return logSoftmaxBackwardErrorBound(g.data(), y.data(), plan->rows.rows, plan->rows.n,
                                        toDoubleVector(golden), plan->out.dtype, o);
}

// ---- nll_loss, nll_loss_total_weight, nll_loss_backward ------------------------------------------

namespace {

enum class NllOp { Loss, TotalWeight, Backward };

struct NllPlan {
    OutputSpec out;
    NllLossInput in;
    std::vector<float> x, weight, grad;
    std::vector<int64_t> target;
    float totalWeight = 0;
};

std::string_view nllName(NllOp which)
{
    return which == NllOp::Loss          ? "nll_loss"
           : which == NllOp::TotalWeight ? "nll_loss_total_weight"
                                         : "nll_loss_backward";
}

// nll_loss, nll_loss_total_weight: [x, target(, weight)];
// nll_loss_backward: [grad, x, target, total_weight(, weight)].
Result<NllPlan> planNll(NllOp which, GoldenInputs in, const OpParams& p, bool load)
{
    const std::string_view op = nllName(which);
    const bool backward = which == NllOp::Backward;
    const size_t xAt = backward ? 1 : 0, base = backward ? 4 : 2;
    if (Status s = checkCount(op, in, base, base + 1,
                              backward ? "4 or 5 inputs (grad, x, target, total_weight[, weight])"
                                       : "2 or 3 inputs (x, target[, weight])");
        !s)
        return s.error();
    for (size_t i = 0; i < in.size(); ++i) {
        if (i == xAt + 1) continue;
        if (Status s = checkFloatInput(op, in, i); !s) return s.error();
    }
    if (Status s = checkIndexInput(op, in, xAt + 1, "target"); !s) return s.error();
    const HostTensor& x = in[xAt];
    if (x.shape.empty() || x.shape.size() > 2)
        return opError(op, inputName(xAt) + " (x) has shape " + shapeString(x.shape) +
                               " but needs [batch, classes] or [classes]");
    const bool oneRow = x.shape.size() == 1;
    const uint64_t batch = oneRow ? 1 : x.shape[0], classes = x.shape.back();
    const std::vector<uint64_t> rowShape = oneRow ? std::vector<uint64_t>{} : std::vector<uint64_t>{batch};
    if (Status s = checkShape(op, in, xAt + 1, "target", rowShape); !s) return s.error();
    const bool weighted = in.size() == base + 1;
    if (weighted)
        if (Status s = checkShape(op, in, base, "weight", {classes}); !s) return s.error();
    Result<std::string> reduction = paramString(op, p, "reduction", std::string("mean"));
    if (!reduction) return reduction.error();
    NllPlan plan;
    if (!parseLossReduction(*reduction, plan.in.reduction))
        return opError(op, "parameter reduction=" + *reduction + " is not none, mean or sum");
    Result<int64_t> ignore = paramInt(op, p, "ignore_index", -100);
    if (!ignore) return ignore.error();
    plan.in.ignoreIndex = *ignore;
    plan.in.batch = int64_t(batch);
    plan.in.classes = int64_t(classes);
    plan.target = indexVector(in[xAt + 1]);
    for (size_t i = 0; i < plan.target.size(); ++i) {
        const int64_t t = plan.target[i];
        if (t != *ignore && (t < 0 || uint64_t(t) >= classes))
            return opError(op, inputName(xAt + 1) + " (target) holds class " + std::to_string(t) + " at " +
                                   std::to_string(i) + ", outside [0, " + std::to_string(classes) +
                                   ") and not ignore_index " + std::to_string(*ignore));
    }
    const bool none = plan.in.reduction == LossReduction::None;
    if (backward) {
        if (Status s = checkShape(op, in, 0, "grad", none ? rowShape : std::vector<uint64_t>{}); !s)
            return s.error();
        if (Status s = checkShape(op, in, 3, "total_weight", {}); !s) return s.error();
    }
    switch (which) {
        case NllOp::Loss:
            plan.out = {x.dtype, none ? rowShape : std::vector<uint64_t>{}};
            break;
        case NllOp::TotalWeight:
            plan.out = {x.dtype, {}};
            break;
        case NllOp::Backward:
            plan.out = {x.dtype, x.shape};
            break;
    }
    if (Status s = checkOutputSize(op, plan.out.shape); !s) return s.error();
    if (!load) return plan;
    plan.x = toFloatVector(x);
    plan.in.x = plan.x.data();
    plan.in.target = plan.target.data();
    if (weighted) {
        plan.weight = toFloatVector(in[base]);
        plan.in.weight = plan.weight.data();
    }
    if (backward) {
        plan.grad = toFloatVector(in[0]);
        plan.totalWeight = toFloatVector(in[3])[0];
    }
    return plan;
}

Result<HostTensor> runNll(NllOp which, GoldenInputs in, const OpParams& p)
{
    Result<NllPlan> plan = planNll(which, in, p, true);
    if (!plan) return plan.error();
    std::vector<float> out;
    switch (which) {
        case NllOp::Loss:
            out = nllLossGolden(plan->in);
            break;
        case NllOp::TotalWeight:
            out = {nllLossTotalWeightGolden(plan->in)};
            break;
        case NllOp::Backward:
            out.resize(size_t(plan->in.batch * plan->in.classes));
            nllLossBackwardGolden(plan->in, plan->grad.data(), plan->totalWeight, plan->out.dtype,
                                  out.data());
            break;
    }
    return fromFloatVector(plan->out.dtype, plan->out.shape, out);
}

Result<std::vector<double>> boundNll(NllOp which, GoldenInputs in, const OpParams& p,
                                     const HostTensor& golden, const BoundOptions& o)
{
    Result<NllPlan> plan = planNll(which, in, p, true);
    if (!plan) return plan.error();
    if (Status s = checkGolden(nllName(which), plan->out, golden); !s) return s.error();
    const std::vector<double> g = toDoubleVector(golden);
    switch (which) {
        case NllOp::Loss:
            return nllLossErrorBound(plan->in, g, plan->out.dtype, o);
        case NllOp::TotalWeight:
            return nllLossTotalWeightErrorBound(plan->in, g, plan->out.dtype, o);
        case NllOp::Backward:
            break;
    }
    return nllLossBackwardErrorBound(plan->in, g, plan->out.dtype);
}

}  // namespace

Result<OutputSpec> inferNllLoss(GoldenInputs in, const OpParams& p)
{
    return outputOf(planNll(NllOp::Loss, in, p, false));
}

Result<HostTensor> runNllLoss(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runNll(NllOp::Loss, in, p);
}

Result<std::vector<double>> boundNllLoss(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                         const BoundOptions& o)
{
    return boundNll(NllOp::Loss, in, p, golden, o);
}

Result<OutputSpec> inferNllLossTotalWeight(GoldenInputs in, const OpParams& p)
{
    return outputOf(planNll(NllOp::TotalWeight, in, p, false));
}

Result<HostTensor> runNllLossTotalWeight(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runNll(NllOp::TotalWeight, in, p);
}

Result<std::vector<double>> boundNllLossTotalWeight(GoldenInputs in, const OpParams& p,
                                                    const HostTensor& golden, const BoundOptions& o)
{
    return boundNll(NllOp::TotalWeight, in, p, golden, o);
}

Result<OutputSpec> inferNllLossBackward(GoldenInputs in, const OpParams& p)
{
    return outputOf(planNll(NllOp::Backward, in, p, false));
}

Result<HostTensor> runNllLossBackward(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runNll(NllOp::Backward, in, p);
}

Result<std::vector<double>> boundNllLossBackward(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                                 const BoundOptions& o)
{
    return boundNll(NllOp::Backward, in, p, golden, o);
}

// ---- embedding, embedding_backward -----------------------------------------------------------------

namespace {

struct EmbeddingPlan {
    OutputSpec out;
    std::vector<int64_t> idx;
    int64_t dim = 0, numWeights = 0, padding = -1;
    bool scaleByFrequency = false;
    bool cpuOrder = false;  // PyTorch's CPU order with narrow partial sums (not with scale_grad_by_freq)
};

Status checkIndices(std::string_view op, const std::vector<int64_t>& idx, int64_t rows)
{
    for (size_t i = 0; i < idx.size(); ++i)
        if (idx[i] < 0 || idx[i] >= rows)
            return opError(op, "inputs[1] (indices) holds " + std::to_string(idx[i]) + " at " +
                                   std::to_string(i) + ", outside [0, " + std::to_string(rows) + ")");
    return Status::success();
}

// embedding: [weight [rows, dim], indices]; embedding_backward: [grad [..., dim], indices].
Result<EmbeddingPlan> planEmbedding(bool backward, GoldenInputs in, const OpParams& p)
{
    const std::string_view op = backward ? "embedding_backward" : "embedding";
    if (Status s =
            checkCount(op, in, 2, 2, backward ? "2 inputs (grad, indices)" : "2 inputs (weight, indices)");
        !s)
        return s.error();
    if (Status s = checkFloatInput(op, in, 0); !s) return s.error();
    if (Status s = checkIndexInput(op, in, 1, "indices"); !s) return s.error();
    EmbeddingPlan plan;
    plan.idx = indexVector(in[1]);
    const HostTensor& t = in[0];
    if (!backward) {
        if (t.shape.size() != 2)
            return opError(op,
                           "inputs[0] (weight) has shape " + shapeString(t.shape) + " but needs [rows, dim]");
        plan.dim = int64_t(t.shape[1]);
        plan.numWeights = int64_t(t.shape[0]);
        if (Status s = checkIndices(op, plan.idx, plan.numWeights); !s) return s.error();
        plan.out = {t.dtype, in[1].shape};
        plan.out.shape.push_back(t.shape[1]);
        if (Status s = checkOutputSize(op, plan.out.shape); !s) return s.error();
        return plan;
    }
    if (t.shape.empty() || t.shape.back() * in[1].elementCount() != t.elementCount())
        return opError(op, "inputs[0] (grad) has shape " + shapeString(t.shape) +
                               " but needs the shape of inputs[1] " + shapeString(in[1].shape) +
                               " followed by the embedding dimension");
    plan.dim = int64_t(t.shape.back());
    Result<int64_t> rows = paramInt(op, p, "num_weights", std::nullopt);
    if (!rows) return rows.error();
    if (*rows < 0 || uint64_t(*rows) > kMaxGoldenElements)
        return opError(op, "parameter num_weights=" + std::to_string(*rows) + " is out of range");
    plan.numWeights = *rows;
    Result<int64_t> padding = paramInt(op, p, "padding_idx", -1);
    if (!padding) return padding.error();
    plan.padding = *padding;
    Result<bool> scale = paramBool(op, p, "scale_grad_by_freq", false);
    if (!scale) return scale.error();
    plan.scaleByFrequency = *scale;
    Result<int64_t> order = paramInt(op, p, "cpu_order", 0);
    if (!order) return order.error();
    if (*order != 0 && *order != 1)
        return opError(op, "parameter cpu_order=" + std::to_string(*order) + " is not 0 or 1");
    plan.cpuOrder = *order == 1 && !plan.scaleByFrequency;
    if (Status s = checkIndices(op, plan.idx, plan.numWeights); !s) return s.error();
    plan.out = {t.dtype, {uint64_t(plan.numWeights), t.shape.back()}};
    if (Status s = checkOutputSize(op, plan.out.shape); !s) return s.error();
    return plan;
}

}  // namespace

Result<OutputSpec> inferEmbedding(GoldenInputs in, const OpParams& p)
{
    return outputOf(planEmbedding(false, in, p));
}

Result<HostTensor> runEmbedding(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<EmbeddingPlan> plan = planEmbedding(false, in, p);
    if (!plan) return plan.error();
    const std::vector<float> w = toFloatVector(in[0]);
    std::vector<float> out(size_t(elementCountOf(plan->out.shape)));
    embeddingGolden(w.data(), plan->dim, plan->idx.data(), int64_t(plan->idx.size()), out.data());
    return fromFloatVector(plan->out.dtype, plan->out.shape, out);
}

Result<std::vector<double>> boundEmbedding(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                           const BoundOptions&)
{
    Result<EmbeddingPlan> plan = planEmbedding(false, in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden("embedding", plan->out, golden); !s) return s.error();
    // Rows copied: bit for bit (a NaN row stays NaN, an infinity the same infinity).
    std::vector<double> bound = toDoubleVector(golden);
    for (double& b : bound) b = std::isfinite(b) ? 0.0 : std::numeric_limits<double>::infinity();
    return bound;
}

Result<OutputSpec> inferEmbeddingBackward(GoldenInputs in, const OpParams& p)
{
    return outputOf(planEmbedding(true, in, p));
}

Result<HostTensor> runEmbeddingBackward(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<EmbeddingPlan> plan = planEmbedding(true, in, p);
    if (!plan) return plan.error();
    const std::vector<float> g = toFloatVector(in[0]);
    std::vector<float> out(size_t(elementCountOf(plan->out.shape)));
    embeddingBackwardGolden(g.data(), plan->idx.data(), int64_t(plan->idx.size()), plan->dim,
                            plan->numWeights, plan->padding, plan->scaleByFrequency, out.data(),
                            plan->cpuOrder ? plan->out.dtype : DType::Float32);
    return fromFloatVector(plan->out.dtype, plan->out.shape, out);
}

Result<std::vector<double>> boundEmbeddingBackward(GoldenInputs in, const OpParams& p,
                                                   const HostTensor& golden, const BoundOptions& o)
{
    Result<EmbeddingPlan> plan = planEmbedding(true, in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden("embedding_backward", plan->out, golden); !s) return s.error();
    const std::vector<float> g = toFloatVector(in[0]);
    return embeddingBackwardErrorBound(g.data(), plan->idx.data(), int64_t(plan->idx.size()), plan->dim,
                                       plan->numWeights, plan->padding, plan->scaleByFrequency,
                                       plan->cpuOrder, toDoubleVector(golden), plan->out.dtype, o);
}

}  // namespace faultline::golden::ops
