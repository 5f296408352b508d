// Glue of the golden ops that pass elements through or route gradients without arithmetic: relu,
// its backward (threshold_backward) and select's backward. Their outputs are input bytes or +0,
// so every implementation produces the same bits: the bound is 0 (judged bit for bit). PyTorch's
// semantics, checked against its CPU kernels (1.13 and 2.15):
//   relu                [x]: x < 0 ? +0 : x (-0 and NaN pass through unchanged)
//   threshold_backward  [grad, x] of one shape and dtype: x <= threshold ? +0 : grad (a NaN x
//                       passes grad), threshold (default 0) rounded to float
//   select_backward     [grad]: +0 of shape input_sizes, grad written at `index` along `dim`
//                       (grad's shape is input_sizes without dim); negative dim and index count
//                       from the end
#include <cstring>

#include "GoldenSupport.h"
#include "OpDefinitions.h"
#include "PointwiseSupport.h"

namespace faultline::golden::ops {

namespace {

Result<OutputSpec> planRelu(GoldenInputs in)
{
    if (Status s = checkCount("relu", in, 1, 1, "1 input (x)"); !s) return s.error();
    if (Status s = checkGoldenInput("relu", in[0], "inputs[0] (x)"); !s) return s.error();
    return OutputSpec{in[0].dtype, in[0].shape};
}

struct ThresholdPlan {
    OutputSpec out;
    float threshold = 0;
};

Result<ThresholdPlan> planThresholdBackward(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "threshold_backward";
    if (Status s = checkCount(op, in, 2, 2, "2 inputs (grad, x)"); !s) return s.error();
    const size_t both[] = {0, 1};
    if (Status s = checkSameFloatInputs(op, in, both); !s) return s.error();
    if (in[0].shape != in[1].shape)
        return opError(op, "inputs[0] (grad) has shape " + shapeString(in[0].shape) + " but inputs[1] (x) " +
                               shapeString(in[1].shape));
    Result<float> t = paramFloat(op, p, "threshold", 0.0);
    if (!t) return t.error();
    return ThresholdPlan{{in[0].dtype, in[0].shape}, *t};
}

struct SelectBackwardPlan {
    OutputSpec out;
    size_t dim = 0;
    uint64_t index = 0;
};

Result<SelectBackwardPlan> planSelectBackward(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "select_backward";
    if (Status s = checkCount(op, in, 1, 1, "1 input (grad)"); !s) return s.error();
    if (Status s = checkGoldenInput(op, in[0], "inputs[0] (grad)"); !s) return s.error();
    auto sizes = paramInts(op, p, "input_sizes");
    if (!sizes) return sizes.error();
    if (!*sizes || (*sizes)->empty())
        return opError(op, "missing parameter input_sizes (the selected tensor's shape)");
    std::vector<uint64_t> shape;
    for (int64_t d : **sizes) {
        if (d < 0) return opError(op, "input_sizes has a negative size " + std::to_string(d));
        shape.push_back(uint64_t(d));
    }
    Result<int64_t> dim = paramInt(op, p, "dim", std::nullopt);
    if (!dim) return dim.error();
    Result<size_t> d = wrapDim(op, "dim", *dim, shape.size());
    if (!d) return d.error();
    Result<int64_t> index = paramInt(op, p, "index", std::nullopt);
    if (!index) return index.error();
    const int64_t n = int64_t(shape[*d]);
    if (*index < -n || *index >= n)
        return opError(op, "index=" + std::to_string(*index) + " is out of range for size " +
                               std::to_string(n) + " of dim " + std::to_string(*d));
    std::vector<uint64_t> gradShape = shape;
    gradShape.erase(gradShape.begin() + std::ptrdiff_t(*d));
    if (in[0].shape != gradShape)
        return opError(op, "inputs[0] (grad) has shape " + shapeString(in[0].shape) + " but input_sizes " +
                               shapeString(shape) + " without dim " + std::to_string(*d) + " is " +
                               shapeString(gradShape));
    if (Status s = checkOutputSize(op, shape); !s) return s.error();
    return SelectBackwardPlan{{in[0].dtype, shape}, *d, uint64_t(*index < 0 ? *index + n : *index)};
}

}  // namespace

// ---- glue -------------------------------------------------------------------------------------

Result<OutputSpec> inferRelu(GoldenInputs in, const OpParams&)
{
    return planRelu(in);
}

Result<HostTensor> runRelu(GoldenInputs in, const OpParams&, const GoldenRunOptions&)
{
    Result<OutputSpec> spec = planRelu(in);
    if (!spec) return spec.error();
    const std::vector<float> x = toFloatVector(in[0]);
    HostTensor out = in[0];
    const size_t es = dtypeSize(out.dtype);
    for (size_t i = 0; i < x.size(); ++i)
        if (x[i] < 0.0f) std::memset(out.data.data() + i * es, 0, es);  // all-zero bytes: +0
    return out;
}

Result<std::vector<double>> boundRelu(GoldenInputs in, const OpParams&, const HostTensor& golden,
                                      const BoundOptions&)
{
    Result<OutputSpec> spec = planRelu(in);
    if (!spec) return spec.error();
    Status s;
    std::vector<double> b = zeroBound("relu", *spec, golden, s);
    if (!s) return s.error();
    return b;
}

Result<OutputSpec> inferThresholdBackward(GoldenInputs in, const OpParams& p)
{
    Result<ThresholdPlan> plan = planThresholdBackward(in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runThresholdBackward(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<ThresholdPlan> plan = planThresholdBackward(in, p);
    if (!plan) return plan.error();
    const std::vector<float> x = toFloatVector(in[1]);
    HostTensor out = in[0];
    const size_t es = dtypeSize(out.dtype);
    for (size_t i = 0; i < x.size(); ++i)
        if (x[i] <= plan->threshold) std::memset(out.data.data() + i * es, 0, es);
    return out;
}

Result<std::vector<double>> boundThresholdBackward(GoldenInputs in, const OpParams& p,
                                                   const HostTensor& golden, const BoundOptions&)
{
    Result<ThresholdPlan> plan = planThresholdBackward(in, p);
    if (!plan) return plan.error();
    Status s;
    std::vector<double> b = zeroBound("threshold_backward", plan->out, golden, s);
    if (!s) return s.error();
    return b;
}

Result<OutputSpec> inferSelectBackward(GoldenInputs in, const OpParams& p)
{
    Result<SelectBackwardPlan> plan = planSelectBackward(in, p);
    if (!plan) return plan.error();
    return plan->out;
}

Result<HostTensor> runSelectBackward(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    Result<SelectBackwardPlan> plan = planSelectBackward(in, p);
    if (!plan) return plan.error();
    const std::vector<uint64_t>& shape = plan->out.shape;
    // outer x size x inner view of the output around dim; grad is outer x inner.
    uint64_t outer = 1, inner = 1;
    for (size_t i = 0; i < plan->dim; ++i) outer *= shape[i];
    for (size_t i = plan->dim + 1; i < shape.size(); ++i) inner *= shape[i];
    const uint64_t size = shape[plan->dim];
    HostTensor out(plan->out.dtype, shape);  // zero bytes: +0
    const size_t es = dtypeSize(out.dtype);
    for (uint64_t o = 0; o < outer; ++o)
        std::memcpy(out.data.data() + ((o * size + plan->index) * inner) * es,
                    in[0].data.data() + o * inner * es, size_t(inner) * es);
    return out;
}

Result<std::vector<double>> boundSelectBackward(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                                const BoundOptions&)
{
    Result<SelectBackwardPlan> plan = planSelectBackward(in, p);
    if (!plan) return plan.error();
    Status s;
    std::vector<double> b = zeroBound("select_backward", plan->out, golden, s);
    if (!s) return s.error();
    return b;
}

}  // namespace faultline::golden::ops
