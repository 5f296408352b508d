// Bounds of softmax_backward, the layernorm gradients and gelu/silu backward (TrainingBounds.h).
#include <cmath>

#include "BoundSides.h"
#include "TrainingBounds.h"

namespace faultline::golden {

using namespace bounds;

std::vector<double> softmaxBackwardErrorBound(const float* g, const float* p, int64_t rows, int64_t n,
                                              std::span<const double> golden, DType out,
                                              const BoundOptions& options)
{
    std::vector<double> bound(size_t(rows * n), kInf);
    const Side prod = productionSide(options), gold = goldenSide();
    for (int64_t r = 0; r < rows; ++r) {
        const float* gr = g + r * n;
        const float* pr = p + r * n;
        double sum = 0, sumAbs = 0;
        for (int64_t j = 0; j < n; ++j) {
            const double t = double(gr[j]) * double(pr[j]);
            sum += t;
            sumAbs += std::fabs(t);
        }
        auto error = [&](const Side& s, int64_t j) {
            const double pj = std::fabs(double(pr[j]));
            const double gi = double(pr[j]) * (double(gr[j]) - sum);
            const double dS =
                (s.gamma(double(n)) + s.us) * sumAbs + s.us * std::fabs(sum) + s.tiny * double(n);
            return pj * dS + s.us * pj * (std::fabs(double(gr[j])) + std::fabs(sum)) + s.us * std::fabs(gi) +
                   s.tiny;
        };
        for (int64_t j = 0; j < n; ++j) {
            const size_t e = size_t(r * n + j);
            bound[e] = finishTwoSided(error(prod, j), error(gold, j), golden[e], out);
        }
    }
    return bound;
}

namespace {

// One side's error of grad_input for row i, into dx (TrainingBounds.h).
void layerNormInputRowError(const Side& s, const LayerNormBackwardInput& in, int64_t i, double* dx)
{
    const int64_t n = in.n;
    const double a = std::fabs(double(in.rstd[i])), mu = double(in.mean[i]);
    const float* dy = in.dy + i * n;
    const float* x = in.x + i * n;
    double p = 0, q = 0, db = 0, dsh = 0;
    for (int64_t k = 0; k < n; ++k) {
        const double gd = double(in.gamma[k]) * double(dy[k]);
        p += std::fabs(gd);
        q += std::fabs(gd) * (std::fabs(double(x[k])) + std::fabs(mu));
        db += gd;
        dsh += gd * (double(x[k]) - mu) * a;
    }
    const double gamma = s.gamma(double(n));
    const double a3n = a * a * a / double(n);
    const double bMag = a3n * q;
    const double cMag = std::fabs(mu) * bMag + a * p / double(n);
    const double eb = a3n * (gamma + 9.0 * s.us) * q;
    const double ec = std::fabs(mu) * eb + s.us * std::fabs(mu) * bMag +
                      a / double(n) * (gamma + 4.0 * s.us) * p + s.us * cMag;
    for (int64_t j = 0; j < n; ++j) {
        const double gd = double(in.gamma[j]) * double(dy[j]);
        const double xh = (double(x[j]) - mu) * a;
        const double value = a * (gd - db / double(n) - xh * dsh / double(n));
        const double ax = std::fabs(double(x[j]));
        dx[j] = 4.0 * s.us * a * std::fabs(gd) + ax * eb + 2.0 * s.us * bMag * ax + ec +
                s.us * std::fabs(value) + 4.0 * s.tiny;
    }
}

}  // namespace

std::vector<double> layerNormBackwardErrorBound(LayerNormGrad which, const LayerNormBackwardInput& in,
                                                std::span<const double> golden, DType out,
                                                const BoundOptions& options)
{
    const int64_t n = in.n;
    const Side prod = productionSide(options), gold = goldenSide();
    std::vector<double> bound(golden.size(), kInf);
    if (which == LayerNormGrad::Input) {
        std::vector<double> dp(static_cast<size_t>(n)), dg(static_cast<size_t>(n));
        for (int64_t i = 0; i < in.rows; ++i) {
            layerNormInputRowError(prod, in, i, dp.data());
            layerNormInputRowError(gold, in, i, dg.data());
            for (int64_t j = 0; j < n; ++j) {
                const size_t e = size_t(i * n + j);
                bound[e] = finishTwoSided(dp[size_t(j)], dg[size_t(j)], golden[e], out);
            }
        }
        return bound;
    }
    if (in.cpuRowChunks > 0) {  // PyTorch's CPU order: the spread of its FMA choices
        std::vector<float> variant(static_cast<size_t>(n));
        for (size_t j = 0; j < bound.size(); ++j) bound[j] = std::isfinite(golden[j]) ? 0.0 : kInf;
        for (int fused = 1; fused < 4 && which == LayerNormGrad::Weight; ++fused) {
            layerNormColumnSumsCpuOrder(which, in, (fused & 1) != 0, (fused & 2) != 0, variant.data());
            for (int64_t j = 0; j < n; ++j) {
                const size_t e = size_t(j);
                const double v = double(roundToDType(out, variant[e]));
                if (std::isfinite(golden[e])) bound[e] = std::max(bound[e], std::fabs(v - golden[e]));
            }
        }
        return bound;
    }
    const double rows = double(in.rows);
    for (int64_t j = 0; j < n; ++j) {
        double terms = 0, magnitudes = 0;  // sum |term| and, for weight, sum |dy| a (|x| + |mu|)
        for (int64_t i = 0; i < in.rows; ++i) {
            const double dy = std::fabs(double(in.dy[i * n + j]));
            if (which == LayerNormGrad::Bias) {
                terms += dy;
                continue;
            }
            const double a = std::fabs(double(in.rstd[i])), x = double(in.x[i * n + j]),
                         mu = double(in.mean[i]);
            terms += dy * std::fabs(x - mu) * a;
            magnitudes += dy * a * (std::fabs(x) + std::fabs(mu));
        }
        if (which == LayerNormGrad::Bias) {  // a sum of the recorded dy: rigorous in any order
            bound[size_t(j)] =
                finishRigorous(prod.gamma(rows) * terms, gold.gamma(rows) * terms, golden[size_t(j)], out);
            continue;
        }
        auto error = [&](const Side& s) {
            return s.gamma(rows) * terms + 4.0 * s.us * magnitudes + s.tiny * rows;
        };
        bound[size_t(j)] = finishTwoSided(error(prod), error(gold), golden[size_t(j)], out);
    }
    return bound;
}

namespace {

constexpr double kTwoOverSqrtPi = 1.1283791670955126;
constexpr double kInvSqrt2PiExact = 0.3989422804014327;
constexpr double kSqrt2OverPiExact = 0.7978845608028654;
constexpr double kKappaExact = 0.044715;

// One side's error of d(activation)/dx times g (first-order, absolute).
double activationBackwardError(const Side& s, Activation kind, double g, double x)
{
    const double us = s.us, f = s.f(), tiny = s.tiny;
    const double ag = std::fabs(g);
    switch (kind) {
        case Activation::GeluErf: {
            const double z = x * 0.7071067811865476;
            const double erfz = std::erf(z);
            const double cdf = 0.5 * (1.0 + erfz);
            const double pdf = kInvSqrt2PiExact * std::exp(-0.5 * x * x);
            const double d = cdf + x * pdf;
            const double dErf =
                kTwoOverSqrtPi * std::exp(-z * z) * std::fabs(z) * (us + kU) + f * std::fabs(erfz);
            const double dCdf = 0.5 * (dErf + us * std::fabs(1.0 + erfz)) + tiny;
            const double ePdf = 0.5 * x * x * 2.0 * us + f + 2.0 * us + kU;
            const double dd = dCdf + std::fabs(x) * pdf * (ePdf + us) + us * std::fabs(d) + 2.0 * tiny;
            return ag * dd + us * std::fabs(g * d) + tiny;
        }
        case Activation::GeluTanh: {
            const double xs = x * x, kc = kKappaExact * xs * x, s1 = x + kc, inner = kSqrt2OverPiExact * s1;
            const double th = std::tanh(inner);
            const double ds1 = std::fabs(kc) * (3.0 * us + kU) + us * std::fabs(s1);
            const double dInner = kSqrt2OverPiExact * ds1 + (us + kU) * std::fabs(inner);
            const double dTh = (1.0 - th * th) * dInner + f * std::fabs(th) + tiny;
            const double right = 1.0 + th;
            const double dLeftDerivative = 0.5 * (dTh + us * std::fabs(right));
            const double td = 1.0 - th * th;
            const double dTd = 2.0 * std::fabs(th) * dTh + us * th * th + us * std::fabs(td) + tiny;
            const double id = kSqrt2OverPiExact * (1.0 + 3.0 * kKappaExact * xs);
            const double dId = kSqrt2OverPiExact * (3.0 * kKappaExact * xs * (2.0 * us + kU) +
                                                    us * (1.0 + 3.0 * kKappaExact * xs)) +
                               (us + kU) * id;
            const double left = 0.5 * std::fabs(x);
            const double rd = left * td * id;
            const double dRd =
                left * (dTd * id + std::fabs(td) * dId) + 2.0 * us * std::fabs(rd) + 2.0 * tiny;
            const double d = 0.5 * right + 0.5 * x * td * id;
            const double dd = dLeftDerivative + dRd + us * std::fabs(d);
            return ag * dd + us * std::fabs(g * d) + tiny;
        }
        case Activation::Silu: {
            const double e = std::exp(-x);
            if (!std::isfinite(e)) return tiny;  // x < -709: s and the result underflow to 0
            const double sg = 1.0 / (1.0 + e);
            const double d1 = e * f + us * (1.0 + e);
            const double dSg = sg * (d1 / (1.0 + e) + us) + tiny;
            const double t = 1.0 - sg;
            const double dT = dSg + us * std::fabs(t);
            const double dXt = std::fabs(x) * dT + us * std::fabs(x * t) + tiny;
            const double q = 1.0 + x * t;
            const double dQ = dXt + us * std::fabs(q);
            const double value = g * sg * q;
            return ag * (dSg * std::fabs(q) + sg * dQ) + 2.0 * us * std::fabs(value) + 2.0 * tiny;
        }
    }
    return kInf;
}

}  // namespace

std::vector<double> activationBackwardErrorBound(Activation kind, const float* g, const float* x,
                                                 int64_t count, std::span<const double> golden, DType out,
                                                 const BoundOptions& options)
{
    std::vector<double> bound(size_t(count), kInf);
    const Side prod = productionSide(options), gold = goldenSide();
    for (int64_t i = 0; i < count; ++i)
        bound[size_t(i)] = finishTwoSided(activationBackwardError(prod, kind, double(g[i]), double(x[i])),
                                          activationBackwardError(gold, kind, double(g[i]), double(x[i])),
                                          golden[size_t(i)], out);
    return bound;
}

}  // namespace faultline::golden
