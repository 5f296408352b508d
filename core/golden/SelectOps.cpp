// Glue of the golden ops that select and move elements without arithmetic: masked_fill, where,
// triu, tril, cat. Their outputs are the inputs' bytes (masked_fill's value rounded once to the
// dtype), so every implementation produces the same bits: the bound is 0 (judged bit for bit).
//   masked_fill  [x, mask]: mask (bool, uint8 or a float dtype; non-zero = true) broadcasts to
//                x's shape; out = mask ? value : x, value rounded from the trace's double to
//                float, then to x's dtype (as c10::Scalar::to does)
//   where        [condition, x, y]: all three broadcast together; x and y of one dtype;
//                out = condition ? x : y
//   triu, tril   [x] of rank >= 2 and any dtype (masks too), over its last two dims [m, n]
//                (leading dims are batch): element (i, j) is kept where j - i >= diagonal
//                (triu) / <= diagonal (tril), else zero bytes (+0, false)
//   cat          [x0, x1, ...] of one dtype and rank, equal but along `dim` (default 0, negative
//                counts from the end); 1-D inputs with no elements are skipped (as PyTorch does)
#include <cstring>

#include "OpDefinitions.h"
#include "PointwiseSupport.h"

namespace faultline::golden::ops {

namespace {

// For every element of `outShape`, the element index of `src` it reads (broadcasting).
std::vector<int64_t> readIndex(const HostTensor& src, const std::vector<uint64_t>& outShape)
{
    if (src.shape == outShape) {
        std::vector<int64_t> idx(size_t(elementCountOf(outShape)));
        for (size_t i = 0; i < idx.size(); ++i) idx[i] = int64_t(i);
        return idx;
    }
    return broadcastIndex(src.shape, outShape);
}

// Masks and conditions as 0/1 per element.
std::vector<uint8_t> truthValues(const HostTensor& t)
{
    const std::vector<float> v = toFloatVector(t);  // bool and uint8: 0/1 and 0..255 exactly
    std::vector<uint8_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = v[i] != 0.0f ? 1 : 0;  // NaN is true
    return out;
}

// ---- masked_fill ------------------------------------------------------------------------------

struct MaskedFillPlan {
    OutputSpec out;
    float value = 0;
};

Result<MaskedFillPlan> planMaskedFill(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "masked_fill";
    if (Status s = checkCount(op, in, 2, 2, "2 inputs (x, mask)"); !s) return s.error();
    if (Status s = checkGoldenInput(op, in[0], "inputs[0] (x)"); !s) return s.error();
    if (Status s = checkMaskInput(op, in, 1, "mask"); !s) return s.error();
    if (!broadcastsTo(in[1].shape, in[0].shape))
        return opError(op, "inputs[1] (mask) has shape " + shapeString(in[1].shape) +
                               ", which does not broadcast to x's " + shapeString(in[0].shape));
    Result<float> value = paramFloat(op, p, "value", std::nullopt);
    if (!value) return value.error();
    return MaskedFillPlan{{in[0].dtype, in[0].shape}, *value};
}

// ---- where ------------------------------------------------------------------------------------

Result<OutputSpec> planWhere(GoldenInputs in)
{
    const std::string_view op = "where";
    if (Status s = checkCount(op, in, 3, 3, "3 inputs (condition, x, y)"); !s) return s.error();
    if (Status s = checkMaskInput(op, in, 0, "condition"); !s) return s.error();
    const size_t values[] = {1, 2};
    if (Status s = checkSameFloatInputs(op, in, values); !s) return s.error();
    const size_t all[] = {0, 1, 2};
    Result<std::vector<uint64_t>> shape = broadcastInputs(op, in, all);
    if (!shape) return shape.error();
    return OutputSpec{in[1].dtype, std::move(shape).value()};
}

// ---- triu, tril -------------------------------------------------------------------------------

struct TriPlan {
    OutputSpec out;
    int64_t diagonal = 0;
};

Result<TriPlan> planTri(std::string_view op, GoldenInputs in, const OpParams& p)
{
    if (Status s = checkCount(op, in, 1, 1, "1 input (x)"); !s) return s.error();
    if (Status s = checkMovedInput(op, in[0], "inputs[0] (x)"); !s) return s.error();
    if (in[0].shape.size() < 2)
        return opError(op,
                       "inputs[0] (x) has shape " + shapeString(in[0].shape) + " but needs at least 2 dims");
    Result<int64_t> diagonal = paramInt(op, p, "diagonal", 0);
    if (!diagonal) return diagonal.error();
    return TriPlan{{in[0].dtype, in[0].shape}, *diagonal};
}

Result<HostTensor> runTri(std::string_view op, GoldenInputs in, const OpParams& p, bool upper)
{
    Result<TriPlan> plan = planTri(op, in, p);
    if (!plan) return plan.error();
    const HostTensor& x = in[0];
    HostTensor out(x.dtype, x.shape);
    const size_t es = dtypeSize(x.dtype);
    const uint64_t m = x.shape[x.shape.size() - 2], n = x.shape.back();
    const uint64_t count = x.elementCount();
    for (uint64_t e = 0; e < count; ++e) {
        const int64_t i = int64_t((e / n) % m), j = int64_t(e % n);
        const bool keep = upper ? j - i >= plan->diagonal : j - i <= plan->diagonal;
        if (keep) std::memcpy(out.data.data() + e * es, x.data.data() + e * es, es);
        // else: HostTensor's bytes start zeroed, and all-zero bytes are +0 in every float dtype
    }
    return out;
}

// ---- cat --------------------------------------------------------------------------------------

struct CatPlan {
    OutputSpec out;
    size_t dim = 0;
    std::vector<size_t> parts;  // the inputs that are concatenated (skipped empty 1-D ones left out)
};

Result<CatPlan> planCat(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "cat";
    if (Status s = checkCount(op, in, 1, size_t(1) << 20, "at least 1 input"); !s) return s.error();
    std::vector<size_t> all(in.size());
    for (size_t i = 0; i < in.size(); ++i) all[i] = i;
    if (Status s = checkSameFloatInputs(op, in, all); !s) return s.error();
    CatPlan plan;
    for (size_t i = 0; i < in.size(); ++i)
        if (!(in[i].shape.size() == 1 && in[i].shape[0] == 0)) plan.parts.push_back(i);
    if (plan.parts.empty()) {  // only empty 1-D inputs: an empty 1-D result
        plan.out = {in[0].dtype, {0}};
        return plan;
    }
    const HostTensor& first = in[plan.parts[0]];
    if (first.shape.empty())
        return opError(op, inputName(plan.parts[0]) + " has shape [] but cat needs dims");
    Result<int64_t> dim = paramInt(op, p, "dim", 0);
    if (!dim) return dim.error();
    Result<size_t> d = wrapDim(op, "parameter dim", *dim, first.shape.size());
    if (!d) return d.error();
    plan.dim = *d;
    std::vector<uint64_t> shape = first.shape;
    shape[plan.dim] = 0;
    for (size_t i : plan.parts) {
        const auto& s = in[i].shape;
        bool ok = s.size() == shape.size();
        for (size_t k = 0; ok && k < s.size(); ++k) ok = k == plan.dim || s[k] == first.shape[k];
        if (!ok)
            return opError(op, inputName(i) + " has shape " + shapeString(s) + ", which does not match " +
                                   shapeString(first.shape) + " but along dim " + std::to_string(plan.dim));
        shape[plan.dim] += s[plan.dim];
    }
    if (Status s = checkOutputSize(op, shape); !s) return s.error();
    plan.out = {first.dtype, std::move(shape)};
    return plan;
}

}  // namespace

// ---- glue -------------------------------------------------------------------------------------

Result<OutputSpec> inferMaskedFill(GoldenInputs in, const OpParams& p)
{
    Result<MaskedFillPlan> plan = planMaskedFill(in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runMaskedFill(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<MaskedFillPlan> plan = planMaskedFill(in, p);
    if (!plan) return plan.error();
    const HostTensor& x = in[0];
    const HostTensor fill = fromFloatVector(x.dtype, {1}, std::vector<float>{plan->value});
    const std::vector<uint8_t> mask = truthValues(in[1]);
    const std::vector<int64_t> at = readIndex(in[1], x.shape);
    HostTensor out = x;
    const size_t es = dtypeSize(x.dtype);
    for (size_t e = 0; e < at.size(); ++e)
        if (mask[size_t(at[e])]) std::memcpy(out.data.data() + e * es, fill.data.data(), es);
    return out;
}

Result<std::vector<double>> boundMaskedFill(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                            const BoundOptions&)
{
    Result<MaskedFillPlan> plan = planMaskedFill(in, p);
    if (!plan) return plan.error();
    Status s;
    std::vector<double> b = zeroBound("masked_fill", plan->out, golden, s);
    if (!s) return s.error();
    return b;
}

Result<OutputSpec> inferWhere(GoldenInputs in, const OpParams&)
{
    return planWhere(in);
}

Result<HostTensor> runWhere(GoldenInputs in, const OpParams&, const GoldenRunOptions&)
{
    Result<OutputSpec> spec = planWhere(in);
    if (!spec) return spec.error();
    const std::vector<uint8_t> cond = truthValues(in[0]);
    const std::vector<int64_t> c = readIndex(in[0], spec->shape), x = readIndex(in[1], spec->shape),
                               y = readIndex(in[2], spec->shape);
    HostTensor out(spec->dtype, spec->shape);
    const size_t es = dtypeSize(spec->dtype);
    for (size_t e = 0; e < c.size(); ++e) {
        const bool pick = cond[size_t(c[e])] != 0;
        const HostTensor& src = pick ? in[1] : in[2];
        std::memcpy(out.data.data() + e * es, src.data.data() + size_t(pick ? x[e] : y[e]) * es, es);
    }
    return out;
}

Result<std::vector<double>> boundWhere(GoldenInputs in, const OpParams&, const HostTensor& golden,
                                       const BoundOptions&)
{
    Result<OutputSpec> spec = planWhere(in);
    if (!spec) return spec.error();
    Status s;
    std::vector<double> b = zeroBound("where", *spec, golden, s);
    if (!s) return s.error();
    return b;
}

Result<OutputSpec> inferTriu(GoldenInputs in, const OpParams& p)
{
    Result<TriPlan> plan = planTri("triu", in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runTriu(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runTri("triu", in, p, true);
}

Result<std::vector<double>> boundTriu(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                      const BoundOptions&)
{
    Result<TriPlan> plan = planTri("triu", in, p);
    if (!plan) return plan.error();
    Status s;
    std::vector<double> b = zeroBound("triu", plan->out, golden, s);
    if (!s) return s.error();
    return b;
}

Result<OutputSpec> inferTril(GoldenInputs in, const OpParams& p)
{
    Result<TriPlan> plan = planTri("tril", in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runTril(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runTri("tril", in, p, false);
}

Result<std::vector<double>> boundTril(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                      const BoundOptions&)
{
    Result<TriPlan> plan = planTri("tril", in, p);
    if (!plan) return plan.error();
    Status s;
    std::vector<double> b = zeroBound("tril", plan->out, golden, s);
    if (!s) return s.error();
    return b;
}

Result<OutputSpec> inferCat(GoldenInputs in, const OpParams& p)
{
    Result<CatPlan> plan = planCat(in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runCat(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<CatPlan> plan = planCat(in, p);
    if (!plan) return plan.error();
    HostTensor out(plan->out.dtype, plan->out.shape);
    if (plan->parts.empty()) return out;
    const size_t es = dtypeSize(out.dtype);
    // Each input is `outer` blocks of (its extent along dim) x `inner` elements.
    uint64_t outer = 1, inner = 1;
    for (size_t k = 0; k < plan->dim; ++k) outer *= out.shape[k];
    for (size_t k = plan->dim + 1; k < out.shape.size(); ++k) inner *= out.shape[k];
    const uint64_t outRow = out.shape[plan->dim] * inner * es;
    uint64_t offset = 0;  // bytes into each output block
    for (size_t i : plan->parts) {
        const uint64_t row = in[i].shape[plan->dim] * inner * es;
        for (uint64_t o = 0; o < outer && row; ++o)
            std::memcpy(out.data.data() + o * outRow + offset, in[i].data.data() + o * row, row);
        offset += row;
    }
    return out;
}

Result<std::vector<double>> boundCat(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                     const BoundOptions&)
{
    Result<CatPlan> plan = planCat(in, p);
    if (!plan) return plan.error();
    Status s;
    std::vector<double> b = zeroBound("cat", plan->out, golden, s);
    if (!s) return s.error();
    return b;
}

}  // namespace faultline::golden::ops
