// Glue and math of the golden sums over dims: sum and mean.
//   [x]; dims (a list, negative counting from the end; absent or empty: every dim), keepdim (0/1,
//   default 0), out_dtype (default x's dtype; e.g. float32 for torch.sum(x_bf16, dtype=float32)).
//   Golden: the elements of each output reduced in the golden tree order (GoldenOrder.h treeSum,
//   the reduced elements taken in row-major order) in float; mean = divRn(sum, n); the result
//   rounded once to out_dtype. PyTorch accumulates in float on the CPU and on CUDA for every
//   float dtype (bf16 and fp16 too), but its CPU kernel adds partial sums into a narrow output
//   when the reduced dims are not adjacent (measured on 1.13: sum over dims (0, 2) of a bf16
//   [4, 30, 20]); its CPU mean divides the sum already rounded to the output dtype, CUDA's
//   multiplies the float sum by the rounded 1/n.
// Bound model (see PointwiseOps.cpp for formulaBound and the roundoffs):
//   sum    pre = 2 gamma_{n-1}(u) sum|x| (the golden tree and any order of float additions)
//          + gamma_{P-1}(u_i) sum|x| where narrow steps are allowed and PyTorch's CPU reduction
//          rounds P partial sums of an output to its dtype (cpuNarrowPasses: P > 1 when the
//          reduced dims are not adjacent, or for a large reduction to one element)
//   mean   pre = the sum's / n + (u + u_i) |mean| + eta (CUDA's rounded 1/n; the
//          CPU's sum rounded to a narrow dtype before the division)
// A sum or mean of one element is exact (pre 0 for sum).
#include <algorithm>
#include <cmath>

#include "GoldenOrder.h"
#include "OpDefinitions.h"
#include "PointwiseSupport.h"

namespace faultline::golden::ops {

namespace {

struct ReducePlan {
    OutputSpec out;
    std::vector<int64_t> keptOffsets;     // element offset of each output's first input element
    std::vector<int64_t> reducedOffsets;  // offsets of the reduced elements, row-major
    double narrowPasses = 1;              // partial sums a CPU kernel may round to a narrow output
};

// How many partial sums of one output PyTorch's CPU reduction rounds to the output dtype: its
// TensorIterator coalesces adjacent dims that are alike (reduced or kept), drops size-1 dims,
// runs a 2-D loop over the innermost two (accumulating in float) and adds each 2-D loop's
// result into the output: one rounding per iteration of the outer reduced dims. A reduction to
// one output of at least 32768 elements is split across threads whose partial outputs are
// combined in the output dtype (up to kCombinedThreads more).
double cpuNarrowPasses(const std::vector<uint64_t>& shape, const std::vector<bool>& reduced, uint64_t n,
                       uint64_t outputs)
{
    constexpr double kCombinedThreads = 64;
    std::vector<std::pair<uint64_t, bool>> dims;  // innermost first: (size, reduced)
    for (size_t k = shape.size(); k-- > 0;) {
        if (shape[k] == 1) continue;
        if (!dims.empty() && dims.back().second == reduced[k])
            dims.back().first *= shape[k];
        else
            dims.push_back({shape[k], reduced[k]});
    }
    double passes = 1;
    for (size_t k = 2; k < dims.size(); ++k)
        if (dims[k].second) passes *= double(dims[k].first);
    if (outputs == 1 && n >= 32768) passes += kCombinedThreads;
    return passes;
}

Result<ReducePlan> planReduce(std::string_view op, GoldenInputs in, const OpParams& p)
{
    if (Status s = checkCount(op, in, 1, 1, "1 input (x)"); !s) return s.error();
    if (Status s = checkGoldenInput(op, in[0], "inputs[0] (x)"); !s) return s.error();
    const HostTensor& x = in[0];
    const size_t rank = x.shape.size();
    Result<std::optional<std::vector<int64_t>>> dims = paramInts(op, p, "dims");
    if (!dims) return dims.error();
    Result<bool> keepdim = paramBool(op, p, "keepdim", false);
    if (!keepdim) return keepdim.error();
    Result<std::string> outName = paramString(op, p, "out_dtype", std::string(dtypeName(x.dtype)));
    if (!outName) return outName.error();
    const auto outType = parseDTypeName(*outName);
    if (!outType || !isGoldenDType(*outType))
        return opError(op, "parameter out_dtype=" + *outName + " is not one of " + goldenDTypeList());
    // No dims, or an empty list (as PyTorch reads dim=[]): every dim.
    std::vector<bool> reduced(std::max<size_t>(rank, 1), !dims->has_value() || (*dims)->empty());
    if (dims->has_value())
        for (int64_t d : **dims) {
            Result<size_t> w = wrapDim(op, "parameter dims", d, rank);
            if (!w) return w.error();
            if (reduced[*w]) return opError(op, "parameter dims names dim " + std::to_string(*w) + " twice");
            reduced[*w] = true;
        }
    ReducePlan plan;
    plan.out.dtype = *outType;
    // Strides of x; a 0-dim x is one element.
    std::vector<int64_t> stride(rank, 1);
    for (size_t k = rank; k-- > 1;) stride[k - 1] = stride[k] * int64_t(x.shape[k]);
    std::vector<uint64_t> keptShape, reducedShape;
    std::vector<int64_t> keptStride, reducedStride;
    for (size_t k = 0; k < rank; ++k) {
        if (reduced[k]) {
            reducedShape.push_back(x.shape[k]);
            reducedStride.push_back(stride[k]);
            if (*keepdim) plan.out.shape.push_back(1);
        } else {
            keptShape.push_back(x.shape[k]);
            keptStride.push_back(stride[k]);
            plan.out.shape.push_back(x.shape[k]);
        }
    }
    if (Status s = checkOutputSize(op, plan.out.shape); !s) return s.error();
    if (Status s = checkOutputSize(op, reducedShape); !s) return s.error();
    auto offsets = [](const std::vector<uint64_t>& shape, const std::vector<int64_t>& strides) {
        std::vector<int64_t> out(size_t(elementCountOf(shape)));
        std::vector<uint64_t> idx(shape.size(), 0);
        int64_t at = 0;
        for (size_t e = 0; e < out.size(); ++e) {
            out[e] = at;
            for (size_t d = shape.size(); d-- > 0;) {  // odometer
                if (++idx[d] < shape[d]) {
                    at += strides[d];
                    break;
                }
                at -= strides[d] * int64_t(shape[d] - 1);
                idx[d] = 0;
            }
        }
        return out;
    };
    plan.keptOffsets = offsets(keptShape, keptStride);
    plan.reducedOffsets = offsets(reducedShape, reducedStride);
    if (rank > 0)
        plan.narrowPasses =
            cpuNarrowPasses(x.shape, reduced, plan.reducedOffsets.size(), plan.keptOffsets.size());
    return plan;
}

struct Reduced {
    std::vector<float> value;  // before the output rounding
    std::vector<double> pre;   // both sides' error before it
};

Reduced reduce(const ReducePlan& plan, const HostTensor& x, bool mean, const FormulaRoundoff& r)
{
    const std::vector<float> v = toFloatVector(x);
    const int64_t n = int64_t(plan.reducedOffsets.size());
    const double gamma = n > 1 ? gammaN(double(n - 1), r.u) : 0.0;
    // Partial sums rounded to a narrow output (PyTorch's CPU kernels), where narrow steps are allowed.
    const double narrow = r.ui > r.u && plan.narrowPasses > 1 ? gammaN(plan.narrowPasses - 1, r.ui) : 0.0;
    Reduced out;
    out.value.resize(plan.keptOffsets.size());
    out.pre.resize(plan.keptOffsets.size());
    const int64_t* red = plan.reducedOffsets.data();
    for (size_t o = 0; o < plan.keptOffsets.size(); ++o) {
        const float* base = v.data() + plan.keptOffsets[o];
        const float sum = treeSum([base, red](int64_t i) { return base[red[i]]; }, n);
        double absSum = 0.0;
        for (int64_t i = 0; i < n; ++i) absSum += std::fabs(double(base[red[i]]));
        double pre = (2.0 * gamma + narrow) * absSum;
        float value = sum;
        if (mean) {
            value = divRn(sum, float(n));
            pre = pre / double(n) + (r.u + r.ui) * std::fabs(double(value)) + r.eta;
        }
        out.value[o] = value;
        out.pre[o] = pre;
    }
    return out;
}

Result<HostTensor> runReduce(std::string_view op, GoldenInputs in, const OpParams& p)
{
    Result<ReducePlan> plan = planReduce(op, in, p);
    if (!plan) return plan.error();
    const Reduced r = reduce(*plan, in[0], op == "mean", FormulaRoundoff(BoundOptions{}));
    return fromFloatVector(plan->out.dtype, plan->out.shape, r.value);
}

Result<std::vector<double>> boundReduce(std::string_view op, GoldenInputs in, const OpParams& p,
                                        const HostTensor& golden, const BoundOptions& o)
{
    Result<ReducePlan> plan = planReduce(op, in, p);
    if (!plan) return plan.error();
    if (Status s = checkGolden(op, plan->out, golden); !s) return s.error();
    const Reduced r = reduce(*plan, in[0], op == "mean", FormulaRoundoff(o));
    const std::vector<double> g = toDoubleVector(golden);
    std::vector<double> bound(g.size());
    for (size_t e = 0; e < g.size(); ++e) bound[e] = formulaBound(r.pre[e], g[e], plan->out.dtype);
    return bound;
}

}  // namespace

Result<OutputSpec> inferSum(GoldenInputs in, const OpParams& p)
{
    Result<ReducePlan> plan = planReduce("sum", in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runSum(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runReduce("sum", in, p);
}

Result<std::vector<double>> boundSum(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                     const BoundOptions& o)
{
    return boundReduce("sum", in, p, golden, o);
}

Result<OutputSpec> inferMean(GoldenInputs in, const OpParams& p)
{
    Result<ReducePlan> plan = planReduce("mean", in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runMean(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    return runReduce("mean", in, p);
}

Result<std::vector<double>> boundMean(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                      const BoundOptions& o)
{
    return boundReduce("mean", in, p, golden, o);
}

}  // namespace faultline::golden::ops
