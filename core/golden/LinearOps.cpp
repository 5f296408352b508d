// Glue of the golden ops whose core is the golden GEMM: gemm and attention.
#include <cmath>

#include "AttentionGolden.h"
#include "GoldenOrder.h"
#include "OpDefinitions.h"

namespace faultline::golden::ops {

namespace {

using Shape = std::vector<uint64_t>;

// ---- gemm ------------------------------------------------------------------------------------

struct GemmPlan {
    OutputSpec out;
    int64_t m = 0, n = 0, k = 0, batch = 1;
    bool transA = false, transB = false, readC = false;
    float alpha = 1.0f, beta = 0.0f;
    Shape batchShape;
};

Result<GemmPlan> planGemm(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "gemm";
    if (Status s = checkCount(op, in, 2, 3, "2 or 3 inputs (A, B[, C])"); !s) return s.error();
    if (Status s = checkInputs(op, in); !s) return s.error();
    GemmPlan plan;
    Result<bool> ta = paramBool(op, p, "trans_a", false), tb = paramBool(op, p, "trans_b", false);
    if (!ta) return ta.error();
    if (!tb) return tb.error();
    plan.transA = *ta;
    plan.transB = *tb;
    Result<float> alpha = paramFloat(op, p, "alpha", 1.0), beta = paramFloat(op, p, "beta", 0.0);
    if (!alpha) return alpha.error();
    if (!beta) return beta.error();
    plan.alpha = *alpha;
    plan.beta = *beta;
    Result<std::string> outName = paramString(op, p, "out_dtype", std::string(dtypeName(in[0].dtype)));
    if (!outName) return outName.error();
    const std::optional<DType> outType = parseDTypeName(*outName);
    if (!outType || !isGoldenDType(*outType))
        return opError(op, "parameter out_dtype=" + *outName + " is not one of " + goldenDTypeList());
    plan.out.dtype = *outType;

    const Shape& a = in[0].shape;
    const Shape& b = in[1].shape;
    if (a.size() < 2)
        return opError(op, "inputs[0] (A) has shape " + shapeString(a) +
                               " but needs at least 2 dimensions (" +
                               (plan.transA ? "[..., k, m] with trans_a=1" : "[..., m, k]") + ")");
    if (b.size() < 2)
        return opError(op, "inputs[1] (B) has shape " + shapeString(b) +
                               " but needs at least 2 dimensions (" +
                               (plan.transB ? "[..., n, k] with trans_b=1" : "[..., k, n]") + ")");
    const uint64_t m = plan.transA ? a[a.size() - 1] : a[a.size() - 2];
    const uint64_t k = plan.transA ? a[a.size() - 2] : a[a.size() - 1];
    const uint64_t kb = plan.transB ? b[b.size() - 1] : b[b.size() - 2];
    const uint64_t n = plan.transB ? b[b.size() - 2] : b[b.size() - 1];
    if (kb != k)
        return opError(op, "inputs[1] has shape " + shapeString(b) +
                               " but trans_b=" + (plan.transB ? "1 needs [n, k]" : "0 needs [k, n]") +
                               " with k = " + std::to_string(k) + " (from inputs[0] " + shapeString(a) +
                               ", trans_a=" + (plan.transA ? "1" : "0") + ")");
    const Shape aBatch(a.begin(), a.end() - 2), bBatch(b.begin(), b.end() - 2);
    const auto batchShape = broadcastShapes(aBatch, bBatch);
    if (!batchShape)
        return opError(op, "batch dimensions of inputs[0] " + shapeString(aBatch) + " and inputs[1] " +
                               shapeString(bBatch) + " neither match nor broadcast");
    plan.batchShape = *batchShape;
    plan.out.shape = plan.batchShape;
    plan.out.shape.push_back(m);
    plan.out.shape.push_back(n);
    if (Status s = checkOutputSize(op, plan.out.shape); !s) return s.error();
    plan.m = int64_t(m);
    plan.n = int64_t(n);
    plan.k = int64_t(k);
    plan.batch = int64_t(elementCountOf(plan.batchShape));
    if (in.size() == 3) {
        if (!broadcastsTo(in[2].shape, plan.out.shape))
            return opError(op, "inputs[2] (C) has shape " + shapeString(in[2].shape) +
                                   " which does not broadcast to the output shape " +
                                   shapeString(plan.out.shape));
        plan.readC = plan.beta != 0.0f;
    }
    return plan;
}

// The float operands of a planned GEMM, owned here; ops.out unset.
struct GemmData {
    std::vector<float> a, b, c;
    GemmOperands ops;
};

GemmData prepareGemm(const GemmPlan& plan, GoldenInputs in)
{
    GemmData d;
    d.a = toFloatVector(in[0]);
    d.b = toFloatVector(in[1]);
    GemmOperands& g = d.ops;
    g.batch = plan.batch;
    g.m = plan.m;
    g.n = plan.n;
    g.k = plan.k;
    g.a = d.a.data();
    g.b = d.b.data();
    // A stored [m, k] (row i at i*k) or, transposed, [k, m]; B stored [k, n] or [n, k].
    g.aRowStride = plan.transA ? 1 : plan.k;
    g.aColStride = plan.transA ? plan.m : 1;
    g.bRowStride = plan.transB ? 1 : plan.n;
    g.bColStride = plan.transB ? plan.k : 1;
    const Shape aBatch(in[0].shape.begin(), in[0].shape.end() - 2);
    const Shape bBatch(in[1].shape.begin(), in[1].shape.end() - 2);
    g.aOffsets = broadcastIndex(aBatch, plan.batchShape, plan.m * plan.k);
    g.bOffsets = broadcastIndex(bBatch, plan.batchShape, plan.k * plan.n);
    if (plan.readC) {
        const std::vector<float> c = toFloatVector(in[2]);
        const std::vector<int64_t> idx = broadcastIndex(in[2].shape, plan.out.shape);
        d.c.resize(idx.size());
        for (size_t e = 0; e < idx.size(); ++e) d.c[e] = c[size_t(idx[e])];
    }
    return d;
}

}  // namespace

Result<OutputSpec> inferGemm(GoldenInputs in, const OpParams& p)
{
    Result<GemmPlan> plan = planGemm(in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runGemm(GoldenInputs in, const OpParams& p, const GoldenRunOptions& o)
{
    Result<GemmPlan> plan = planGemm(in, p);
    if (!plan) return plan.error();
    GemmData d = prepareGemm(*plan, in);
    std::vector<float> out(size_t(elementCountOf(plan->out.shape)));
    d.ops.out = out.data();
    gemmAccumulateGolden(d.ops, GemmRunOptions{o.threads, o.gemmKernel});
    for (size_t e = 0; e < out.size(); ++e)
        out[e] = gemmEpilogue(out[e], plan->alpha, plan->beta, plan->readC ? d.c[e] : 0.0f, plan->readC);
    return fromFloatVector(plan->out.dtype, plan->out.shape, out);
}

Result<std::vector<double>> boundGemm(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                      const BoundOptions& o)
{
    Result<GemmPlan> plan = planGemm(in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden("gemm", plan->out, golden); !s) return s.error();
    GemmData d = prepareGemm(*plan, in);
    GemmBoundInput bi;
    bi.ops = &d.ops;
    bi.aElements = d.a.size();
    bi.bElements = d.b.size();
    bi.alpha = plan->alpha;
    bi.beta = plan->beta;
    bi.c = plan->readC ? d.c.data() : nullptr;
    return gemmErrorBound(bi, toDoubleVector(golden), plan->out.dtype, o);
}

// ---- attention -------------------------------------------------------------------------------

namespace {

struct AttentionPlan {
    OutputSpec out;
    AttentionShape shape;
    float scale = 1.0f;
    bool causal = false;
};

Result<AttentionPlan> planAttention(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "attention";
    if (Status s = checkCount(op, in, 3, 3, "3 inputs (q, k, v)"); !s) return s.error();
    if (Status s = checkInputs(op, in); !s) return s.error();
    const char* layouts[] = {"[b, h, sq, d]", "[b, h, sk, d]", "[b, h, sk, dv]"};
    const char* roles[] = {"q", "k", "v"};
    for (size_t i = 0; i < 3; ++i)
        if (in[i].shape.size() != 4)
            return opError(op, inputName(i) + " (" + roles[i] + ") has shape " + shapeString(in[i].shape) +
                                   " but needs 4 dimensions " + layouts[i]);
    const Shape& q = in[0].shape;
    const Shape& k = in[1].shape;
    const Shape& v = in[2].shape;
    if (k[0] != q[0] || k[1] != q[1] || k[3] != q[3])
        return opError(op, "inputs[1] (k) has shape " + shapeString(k) + " but q " + shapeString(q) +
                               " needs [" + std::to_string(q[0]) + ", " + std::to_string(q[1]) + ", sk, " +
                               std::to_string(q[3]) + "]");
    if (v[0] != q[0] || v[1] != q[1] || v[2] != k[2])
        return opError(op, "inputs[2] (v) has shape " + shapeString(v) + " but q " + shapeString(q) +
                               " and k " + shapeString(k) + " need [" + std::to_string(q[0]) + ", " +
                               std::to_string(q[1]) + ", " + std::to_string(k[2]) + ", dv]");
    if (q[3] == 0) return opError(op, "inputs[0] (q) has head dimension d = 0");
    AttentionPlan plan;
    plan.shape = {int64_t(q[0]), int64_t(q[1]), int64_t(q[2]), int64_t(k[2]), int64_t(q[3]), int64_t(v[3])};
    Result<bool> causal = paramBool(op, p, "causal", false);
    if (!causal) return causal.error();
    plan.causal = *causal;
    Result<float> scale = paramFloat(op, p, "scale", 1.0 / std::sqrt(double(q[3])));
    if (!scale) return scale.error();
    plan.scale = *scale;
    plan.out = {in[0].dtype, {q[0], q[1], q[2], v[3]}};
    if (Status s = checkOutputSize(op, plan.out.shape); !s) return s.error();
    if (Status s = checkOutputSize(op, Shape{q[2], k[2]}); !s) return s.error();  // score rows
    return plan;
}

}  // namespace

Result<OutputSpec> inferAttention(GoldenInputs in, const OpParams& p)
{
    Result<AttentionPlan> plan = planAttention(in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runAttention(GoldenInputs in, const OpParams& p, const GoldenRunOptions& o)
{
    Result<AttentionPlan> plan = planAttention(in, p);
    if (!plan) return plan.error();
    const auto q = toFloatVector(in[0]), k = toFloatVector(in[1]), v = toFloatVector(in[2]);
    std::vector<float> out(size_t(elementCountOf(plan->out.shape)));
    attentionGolden(q.data(), k.data(), v.data(), out.data(), plan->shape, plan->scale, plan->causal,
                    GemmRunOptions{o.threads, o.gemmKernel});
    return fromFloatVector(plan->out.dtype, plan->out.shape, out);
}

Result<std::vector<double>> boundAttention(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                           const BoundOptions& o)
{
    Result<AttentionPlan> plan = planAttention(in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden("attention", plan->out, golden); !s) return s.error();
    const auto q = toFloatVector(in[0]), k = toFloatVector(in[1]), v = toFloatVector(in[2]);
    return attentionErrorBound(q.data(), k.data(), v.data(), plan->shape, plan->scale, plan->causal,
                               toDoubleVector(golden), plan->out.dtype, o);
}

}  // namespace faultline::golden::ops
