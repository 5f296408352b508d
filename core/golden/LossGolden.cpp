#include "LossGolden.h"

#include "../Convert.h"
#include "GoldenLog.h"
#include "GoldenMath.h"

namespace faultline::golden {

float roundToDType(DType t, float v)
{
    if (t == DType::Float32) return v;
    std::byte bytes[8];
    convertFromFloat(t, &v, bytes, 1);
    float back = 0;
    convertToFloat(t, bytes, &back, 1);
    return back;
}

namespace {

bool ignored(const NllLossInput& in, int64_t i)
{
    return in.target[i] == in.ignoreIndex;
}

float classWeight(const NllLossInput& in, int64_t i)
{
    return in.weight ? in.weight[in.target[i]] : 1.0f;
}

// -(w x) of row i, +0 where it is ignored.
float nllTerm(const NllLossInput& in, int64_t i)
{
    if (ignored(in, i)) return 0.0f;
    const float x = in.x[i * in.classes + in.target[i]];
    return -(in.weight ? mulRn(in.weight[in.target[i]], x) : x);
}

}  // namespace

bool parseLossReduction(std::string_view text, LossReduction& out)
{
    if (text == "none")
        out = LossReduction::None;
    else if (text == "mean")
        out = LossReduction::Mean;
    else if (text == "sum")
        out = LossReduction::Sum;
    else
        return false;
    return true;
}

void logSoftmaxGolden(const float* x, float* y, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        const float m = treeMaxRow(xr, n);
        for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - m;
        const float s = treeSum([yr](int64_t j) { return goldenExp(yr[j]); }, n);
        const float l = goldenLog(s);
        for (int64_t j = 0; j < n; ++j) yr[j] = yr[j] - l;
    }
}

void logSoftmaxBackwardGolden(const float* g, const float* y, float* gi, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* gr = g + r * n;
        const float* yr = y + r * n;
        float* out = gi + r * n;
        const float s = treeSumRow(gr, n);
        for (int64_t j = 0; j < n; ++j) out[j] = gr[j] - mulRn(goldenExp(yr[j]), s);
    }
}

std::vector<float> nllLossGolden(const NllLossInput& in)
{
    if (in.reduction == LossReduction::None) {
        std::vector<float> out(size_t(in.batch));
        for (int64_t i = 0; i < in.batch; ++i) out[size_t(i)] = nllTerm(in, i);
        return out;
    }
    const float sum = treeSum([&in](int64_t i) { return nllTerm(in, i); }, in.batch);
    if (in.reduction == LossReduction::Sum) return {sum};
    return {divRn(sum, nllLossTotalWeightGolden(in))};
}

float nllLossTotalWeightGolden(const NllLossInput& in)
{
    if (in.reduction == LossReduction::None) return 0.0f;
    return treeSum([&in](int64_t i) { return ignored(in, i) ? 0.0f : classWeight(in, i); }, in.batch);
}

void nllLossBackwardGolden(const NllLossInput& in, const float* grad, float totalWeight, DType out, float* gi)
{
    for (int64_t e = 0; e < in.batch * in.classes; ++e) gi[e] = 0.0f;
    for (int64_t i = 0; i < in.batch; ++i) {
        if (ignored(in, i)) continue;
        float v = 0;
        switch (in.reduction) {
            case LossReduction::None:
                v = -(in.weight ? mulRn(classWeight(in, i), grad[i]) : grad[i]);
                break;
            case LossReduction::Sum:
                v = in.weight ? mulRn(classWeight(in, i), -grad[0]) : -grad[0];
                break;
            case LossReduction::Mean: {
                const float q = roundToDType(out, -divRn(grad[0], totalWeight));
                v = in.weight ? mulRn(classWeight(in, i), q) : q;
                break;
            }
        }
        gi[i * in.classes + in.target[i]] = v;
    }
}

void embeddingGolden(const float* weight, int64_t dim, const int64_t* idx, int64_t count, float* out)
{
    for (int64_t i = 0; i < count; ++i)
        for (int64_t c = 0; c < dim; ++c) out[i * dim + c] = weight[idx[i] * dim + c];
}

void embeddingBackwardGolden(const float* grad, const int64_t* idx, int64_t count, int64_t dim,
                             int64_t numWeights, int64_t padding, bool scaleByFrequency, float* out,
                             DType partials)
{
    for (int64_t e = 0; e < numWeights * dim; ++e) out[e] = 0.0f;
    std::vector<int64_t> counts(scaleByFrequency ? size_t(numWeights) : 0, 0);
    if (scaleByFrequency)
        for (int64_t i = 0; i < count; ++i) ++counts[size_t(idx[i])];
    for (int64_t i = 0; i < count; ++i) {
        const int64_t k = idx[i];
        if (k == padding) continue;
        float* row = out + k * dim;
        const float* g = grad + i * dim;
        if (scaleByFrequency) {
            const float scale = float(1.0 / double(counts[size_t(k)]));
            for (int64_t c = 0; c < dim; ++c) row[c] = roundToDType(partials, fmaRn(g[c], scale, row[c]));
        } else {
            for (int64_t c = 0; c < dim; ++c) row[c] = roundToDType(partials, row[c] + g[c]);
        }
    }
}

}  // namespace faultline::golden
