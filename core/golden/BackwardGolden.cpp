#include "BackwardGolden.h"

#include <algorithm>
#include <vector>

#include "GoldenMath.h"
#include "LossGolden.h"

namespace faultline::golden {

void softmaxBackwardGolden(const float* g, const float* p, float* gi, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* gr = g + r * n;
        const float* pr = p + r * n;
        float* out = gi + r * n;
        const float s = treeSum([gr, pr](int64_t j) { return mulRn(gr[j], pr[j]); }, n);
        for (int64_t j = 0; j < n; ++j) out[j] = mulRn(pr[j], gr[j] - s);
    }
}

void layerNormBackwardGolden(LayerNormGrad which, const LayerNormBackwardInput& in, float* out)
{
    const int64_t n = in.n;
    auto xhat = [&in](int64_t i, int64_t j) { return mulRn(in.x[i * in.n + j] - in.mean[i], in.rstd[i]); };
    switch (which) {
        case LayerNormGrad::Input: {
            const float count = float(n);
            std::vector<float> gd(static_cast<size_t>(n)), xh(static_cast<size_t>(n));
            for (int64_t i = 0; i < in.rows; ++i) {
                for (int64_t j = 0; j < n; ++j) {
                    gd[size_t(j)] = mulRn(in.gamma[j], in.dy[i * n + j]);
                    xh[size_t(j)] = xhat(i, j);
                }
                const float db = treeSumRow(gd.data(), n);
                const float ds =
                    treeSum([&gd, &xh](int64_t j) { return mulRn(gd[size_t(j)], xh[size_t(j)]); }, n);
                const float meanDb = divRn(db, count), meanDs = divRn(ds, count);
                for (int64_t j = 0; j < n; ++j)
                    out[i * n + j] =
                        mulRn(in.rstd[i], (gd[size_t(j)] - meanDb) - mulRn(xh[size_t(j)], meanDs));
            }
            break;
        }
        case LayerNormGrad::Weight:
            if (in.cpuRowChunks > 0) {
                layerNormColumnSumsCpuOrder(which, in, false, false, out);
                break;
            }
            for (int64_t j = 0; j < n; ++j)
                out[j] = treeSum([&](int64_t i) { return mulRn(in.dy[i * n + j], xhat(i, j)); }, in.rows);
            break;
        case LayerNormGrad::Bias:
            if (in.cpuRowChunks > 0) {
                layerNormColumnSumsCpuOrder(which, in, false, false, out);
                break;
            }
            for (int64_t j = 0; j < n; ++j)
                out[j] = treeSum([&](int64_t i) { return in.dy[i * n + j]; }, in.rows);
            break;
    }
}

void layerNormColumnSumsCpuOrder(LayerNormGrad which, const LayerNormBackwardInput& in, bool fuseInner,
                                 bool fuseAdd, float* out)
{
    const int64_t n = in.n, rows = in.rows;
    const int64_t chunks = std::max<int64_t>(1, std::min(in.cpuRowChunks, rows));
    const int64_t size = rows == 0 ? 0 : (rows + chunks - 1) / chunks;
    for (int64_t j = 0; j < n; ++j) {
        float total = 0.0f;
        for (int64_t t = 0; t < chunks; ++t) {
            float partial = 0.0f;
            for (int64_t i = t * size; i < std::min(rows, (t + 1) * size); ++i) {
                const float dy = in.dy[i * n + j];
                float sum = 0;
                if (which == LayerNormGrad::Bias) {
                    sum = partial + dy;
                } else {
                    const float a = in.rstd[i], x = in.x[i * n + j];
                    const float b = -mulRn(a, in.mean[i]);
                    const float inner = fuseInner ? fmaRn(a, x, b) : mulRn(a, x) + b;
                    sum = fuseAdd ? fmaRn(dy, inner, partial) : partial + mulRn(dy, inner);
                }
                partial = roundToDType(in.partials, sum);
            }
            total = total + partial;
        }
        out[j] = total;
    }
}

namespace {

// PyTorch's constants, rounded to float.
constexpr float kSqrtHalf = 7.07106769e-01f;     // M_SQRT1_2
constexpr float kInvSqrt2Pi = 3.98942292e-01f;   // M_2_SQRTPI * M_SQRT1_2 * 0.5
constexpr float kSqrt2OverPi = 7.97884583e-01f;  // M_SQRT2 * M_2_SQRTPI * 0.5
constexpr float kKappa = 4.471499845e-02f;       // 0.044715
constexpr float kThreeKappa = 3.0f * kKappa;     // 3 * 0.044715, as PyTorch's float product

float geluErfBackward(float g, float x)
{
    const float cdf = mulRn(0.5f, 1.0f + goldenErf(mulRn(x, kSqrtHalf)));
    const float pdf = mulRn(kInvSqrt2Pi, goldenExp(mulRn(mulRn(x, x), -0.5f)));
    return mulRn(g, cdf + mulRn(x, pdf));
}

float geluTanhBackward(float g, float x)
{
    const float xSq = mulRn(x, x);
    const float xCube = mulRn(xSq, x);
    const float inner = mulRn(kSqrt2OverPi, x + mulRn(kKappa, xCube));
    const float t = goldenTanh(inner);
    const float left = mulRn(0.5f, x);
    const float leftDerivative = mulRn(0.5f, 1.0f + t);
    const float tanhDerivative = 1.0f - mulRn(t, t);
    const float innerDerivative = mulRn(kSqrt2OverPi, 1.0f + mulRn(kThreeKappa, xSq));
    const float rightDerivative = mulRn(mulRn(left, tanhDerivative), innerDerivative);
    return mulRn(g, leftDerivative + rightDerivative);
}

float siluBackward(float g, float x)
{
    const float s = divRn(1.0f, 1.0f + goldenExp(-x));
    return mulRn(mulRn(g, s), 1.0f + mulRn(x, 1.0f - s));
}

}  // namespace

void activationBackwardGolden(Activation kind, const float* g, const float* x, float* gi, int64_t count)
{
    for (int64_t i = 0; i < count; ++i) {
        switch (kind) {
            case Activation::GeluErf:
                gi[i] = geluErfBackward(g[i], x[i]);
                break;
            case Activation::GeluTanh:
                gi[i] = geluTanhBackward(g[i], x[i]);
                break;
            case Activation::Silu:
                gi[i] = siluBackward(g[i], x[i]);
                break;
        }
    }
}

}  // namespace faultline::golden
