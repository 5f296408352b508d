#include "ErrorBounds.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "GoldenMath.h"
#include "GoldenSupport.h"
#include "SoftmaxGolden.h"

namespace faultline::golden {

namespace {

constexpr double kU = 0x1p-24;  // float32 unit roundoff
constexpr double kF = kGoldenFunctionUlp * kU;
constexpr double kInf = std::numeric_limits<double>::infinity();

double operandRoundoff(const BoundOptions& o)
{
    return std::max(o.tf32 ? 0x1p-11 : 0.0, o.operandUnitRoundoff);
}

double accumulationRoundoff(const BoundOptions& o)
{
    return std::max(kU, o.accumulationUnitRoundoff);
}

// Unit roundoff of intermediate steps: u, or the narrower type's the caller declares.
double stepRoundoff(const BoundOptions& o)
{
    return std::max(kU, o.intermediateUnitRoundoff);
}

bool narrowSteps(const BoundOptions& o)
{
    return o.intermediateUnitRoundoff > kU;
}

// Both sides' first-order error `oneSide`, safety, and the output rounding of both results.
double finishBound(double oneSide, double golden, DType out)
{
    if (!std::isfinite(golden) || std::isnan(oneSide)) return kInf;
    const double pre = 2.0 * kBoundSafety * oneSide;
    return pre + ulpAt(out, std::fabs(golden) + pre);
}

std::vector<float> absCopy(const float* p, size_t n)
{
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = std::fabs(p[i]);
    return v;
}

// Per element of a GEMM: 2^-126 (|alpha| (sum_l |a_il| + sum_l |b_lj| + 2k + 2) + |beta| + 1), what
// flushing subnormal inputs, products and sums to zero can cost (ErrorBounds.h).
std::vector<double> flushTerms(const GemmBoundInput& in, double absAlpha)
{
    const GemmOperands& g = *in.ops;
    std::vector<double> out(size_t(g.batch * g.m * g.n));
    std::vector<double> rows(size_t(g.m)), cols(size_t(g.n));
    const double absBeta = in.c ? std::fabs(double(in.beta)) : 0.0;
    for (int64_t b = 0; b < g.batch; ++b) {
        const int64_t aOff = g.aOffsets.empty() ? 0 : g.aOffsets[size_t(b)];
        const int64_t bOff = g.bOffsets.empty() ? 0 : g.bOffsets[size_t(b)];
        for (int64_t i = 0; i < g.m; ++i) {
            double sum = 0;
            for (int64_t l = 0; l < g.k; ++l)
                sum += std::fabs(double(g.a[aOff + i * g.aRowStride + l * g.aColStride]));
            rows[size_t(i)] = sum;
        }
        for (int64_t j = 0; j < g.n; ++j) {
            double sum = 0;
            for (int64_t l = 0; l < g.k; ++l)
                sum += std::fabs(double(g.b[bOff + l * g.bRowStride + j * g.bColStride]));
            cols[size_t(j)] = sum;
        }
        for (int64_t i = 0; i < g.m; ++i)
            for (int64_t j = 0; j < g.n; ++j)
                out[size_t((b * g.m + i) * g.n + j)] =
                    0x1p-126 * (absAlpha * (rows[size_t(i)] + cols[size_t(j)] + 2.0 * double(g.k) + 2.0) +
                                absBeta + 1.0);
    }
    return out;
}

}  // namespace

BoundCheck checkWithinBound(std::span<const double> candidate, std::span<const double> golden,
                            std::span<const double> bound)
{
    BoundCheck r;
    const size_t n = std::min({candidate.size(), golden.size(), bound.size()});
    for (size_t i = 0; i < n; ++i) {
        const double c = candidate[i], g = golden[i], b = bound[i];
        ++r.checked;
        double ratio = 0.0;
        if (std::isnan(g)) {
            ratio = std::isnan(c) ? 0.0 : kInf;
        } else if (std::isinf(g)) {
            ratio = c == g ? 0.0 : kInf;
        } else if (!std::isfinite(c)) {
            ratio = kInf;
        } else {
            const double diff = std::fabs(c - g);
            if (diff > 0) ratio = b > 0 ? diff / b : kInf;
            if (!(diff <= b)) ratio = std::max(ratio, 1.0 + 1e-12);
        }
        if (ratio > 1.0) {
            ++r.violations;
            if (r.firstViolation < 0) r.firstViolation = int64_t(i);
        }
        if (ratio > r.worstRatio) {
            r.worstRatio = ratio;
            r.worstIndex = int64_t(i);
        }
    }
    return r;
}

std::vector<double> gemmErrorBound(const GemmBoundInput& in, std::span<const double> golden, DType out,
                                   const BoundOptions& options)
{
    const GemmOperands& g = *in.ops;
    const size_t total = size_t(g.batch * g.m * g.n);
    std::vector<double> bound(total, 0.0);
    if (total == 0) return bound;
    // S = |A| |B| by the golden GEMM itself.
    const std::vector<float> absA = absCopy(g.a, in.aElements);
    const std::vector<float> absB = absCopy(g.b, in.bElements);
    std::vector<float> s(total);
    GemmOperands ga = g;
    ga.a = absA.data();
    ga.b = absB.data();
    ga.out = s.data();
    gemmAccumulateGolden(ga, GemmRunOptions{options.threads, GemmKernel::Auto});

    const double k = double(g.k);
    const double uOp = operandRoundoff(options);
    const double gk = gammaN(k, kU);
    double gkAcc = gammaN(k, accumulationRoundoff(options));
    // Split-K reduced in a narrow type: s narrow roundings of the parts and of their sum.
    const bool split = options.splitCount > 1 && options.splitUnitRoundoff > 0.0;
    const double gSplit = split ? gammaN(double(options.splitCount + 1), options.splitUnitRoundoff) : 0.0;
    if (split) gkAcc = (1.0 + gkAcc) * (1.0 + gSplit) - 1.0;
    const double inflate = 1.0 + 2.0 * gk;  // S computed in float: S_true <= S (1 + 2 gamma_k)
    const double prodErr = 2.0 * uOp + uOp * uOp;
    const double accRel = gk + gkAcc * (1.0 + uOp) * (1.0 + uOp) + prodErr;
    const double absAlpha = std::fabs(double(in.alpha));
    const std::vector<double> flushed =
        options.flushSubnormals ? flushTerms(in, absAlpha) : std::vector<double>();
    for (size_t e = 0; e < total; ++e) {
        const double sTrue = double(s[e]) * inflate;
        const double aS = absAlpha * sTrue;
        const double bc = in.c ? std::fabs(double(in.beta) * double(in.c[e])) : 0.0;
        double pre = aS * accRel + 4.0 * kU * (aS * (1.0 + accRel) + bc) + gSplit * bc;
        if (!flushed.empty()) pre += flushed[e];
        if (!std::isfinite(golden[e]) || !std::isfinite(pre)) {
            bound[e] = kInf;
            continue;
        }
        const double b = pre * (1.0 + 1e-6);
        bound[e] = b + ulpAt(out, std::fabs(golden[e]) + b);
    }
    return bound;
}

std::vector<double> layerNormErrorBound(const float* x, const float* gamma, const float* beta, int64_t rows,
                                        int64_t n, float eps, std::span<const double> golden, DType out,
                                        const BoundOptions& options)
{
    std::vector<double> bound(size_t(rows * n), kInf);
    const double gn = gammaN(double(n), kU);
    const bool narrow = narrowSteps(options);
    const double ui = stepRoundoff(options);
    const double stats = narrow ? kNarrowStatisticsRoundings * ui : 0.0;
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        double sum = 0, sumAbs = 0;
        for (int64_t i = 0; i < n; ++i) {
            sum += xr[i];
            sumAbs += std::fabs(double(xr[i]));
        }
        const double mu = sum / double(n);
        double var = 0, sumAbsD = 0;
        for (int64_t i = 0; i < n; ++i) {
            const double d = double(xr[i]) - mu;
            var += d * d;
            sumAbsD += std::fabs(d);
        }
        var /= double(n);
        const double meanAbsD = sumAbsD / double(n);
        const double rstd = 1.0 / std::sqrt(var + double(eps));
        const double dmu = (gn + stats) * sumAbs / double(n) + 2.0 * kU * std::fabs(mu);
        const double varErr =
            (gn + stats) * var + 2.0 * (dmu * meanAbsD + kU * var) + 3.0 * kU * var + dmu * dmu;
        const double eVar = varErr / (var + double(eps)) + kU;
        const double eRstd = 0.5 * eVar + kF + (narrow ? ui : 0.0);
        for (int64_t i = 0; i < n; ++i) {
            const double d = double(xr[i]) - mu;
            const double g = double(gamma[i]);
            const double y = d * rstd * g + double(beta[i]);
            // Narrow steps: x scale + bias with bias = -mu rstd, each rounded.
            const double shift =
                narrow ? ui * (std::fabs(double(xr[i])) + 2.0 * std::fabs(mu)) : kU * std::fabs(d);
            const double dy = std::fabs(g) * rstd * (dmu + shift) +
                              std::fabs(d * rstd * g) * (eRstd + 2.0 * ui) + ui * std::fabs(y) +
                              kNarrowSteps * options.intermediateAbsoluteRoundoff;
            bound[size_t(r * n + i)] = finishBound(dy, golden[size_t(r * n + i)], out);
        }
    }
    return bound;
}

std::vector<double> rmsNormErrorBound(const float* x, const float* gamma, int64_t rows, int64_t n, float eps,
                                      std::span<const double> golden, DType out, const BoundOptions& options)
{
    std::vector<double> bound(size_t(rows * n), kInf);
    const double gn = gammaN(double(n), kU);
    const bool narrow = narrowSteps(options);
    const double ui = stepRoundoff(options);
    const double stats = narrow ? kNarrowStatisticsRoundings * ui : 0.0;
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        double ms = 0;
        for (int64_t i = 0; i < n; ++i) ms += double(xr[i]) * double(xr[i]);
        ms /= double(n);
        const double rstd = 1.0 / std::sqrt(ms + double(eps));
        const double eMs = (gn + 2.0 * kU + stats) * ms / (ms + double(eps)) + kU;
        const double eRstd = 0.5 * eMs + kF + (narrow ? ui : 0.0);
        for (int64_t i = 0; i < n; ++i) {
            const double y = double(xr[i]) * rstd * double(gamma[i]);
            const double dy =
                std::fabs(y) * (eRstd + 2.0 * ui) + kNarrowSteps * options.intermediateAbsoluteRoundoff;
            bound[size_t(r * n + i)] = finishBound(dy, golden[size_t(r * n + i)], out);
        }
    }
    return bound;
}

namespace {

// One softmax row: y (scaled scores, -inf = masked), per-element absolute errors of y (dy) and
// the sum's term count; writes one side's first-order error of each probability to dp.
void softmaxRowError(const double* y, const double* dy, int64_t n, double gammaSum, double ui, double* dp)
{
    double m = -kInf, dm = 0;
    bool finite = true;
    for (int64_t j = 0; j < n; ++j) {
        if (std::isnan(y[j]) || y[j] == kInf) finite = false;
        if (y[j] > m) m = y[j];
        if (std::isfinite(y[j])) dm = std::max(dm, dy[j]);
    }
    if (!finite || !std::isfinite(m)) {
        for (int64_t j = 0; j < n; ++j) dp[j] = kInf;
        return;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += std::isfinite(y[j]) ? std::exp(y[j] - m) : 0.0;
    double weighted = 0;
    for (int64_t j = 0; j < n; ++j) {
        if (!std::isfinite(y[j])) {
            dp[j] = 0;
            continue;
        }
        const double z = y[j] - m;
        const double p = std::exp(z) / sum;
        const double ej =
            dy[j] + dm + ui * (std::fabs(y[j]) + std::fabs(m)) + ui * std::fabs(z) + kF + (ui - kU);
        dp[j] = ej;  // relative, for now
        weighted += p * ej;
    }
    const double eSum = gammaSum + weighted;
    for (int64_t j = 0; j < n; ++j) {
        if (!std::isfinite(y[j])) continue;
        const double p = std::exp(y[j] - m) / sum;
        dp[j] = p * (dp[j] + eSum + ui);
    }
}

}  // namespace

std::vector<double> softmaxErrorBound(const float* x, int64_t rows, int64_t n, bool hasScale, float scale,
                                      std::span<const double> golden, DType out, const BoundOptions& options)
{
    std::vector<double> bound(size_t(rows * n), kInf);
    std::vector<double> y(static_cast<size_t>(n)), dy(y.size()), dp(y.size());
    const double s = hasScale ? double(scale) : 1.0;
    const double ui = stepRoundoff(options);
    const double gn = gammaN(double(n), kU) + (narrowSteps(options) ? gammaN(double(n), ui) : 0.0);
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < n; ++j) {
            y[size_t(j)] = s * double(x[r * n + j]);
            dy[size_t(j)] = hasScale ? ui * std::fabs(y[size_t(j)]) : 0.0;
        }
        softmaxRowError(y.data(), dy.data(), n, gn, ui, dp.data());
        for (int64_t j = 0; j < n; ++j)
            bound[size_t(r * n + j)] =
                finishBound(dp[size_t(j)] + kNarrowSteps * options.intermediateAbsoluteRoundoff,
                            golden[size_t(r * n + j)], out);
    }
    return bound;
}

std::vector<double> activationErrorBound(Activation kind, const float* x, int64_t count,
                                         std::span<const double> golden, DType out,
                                         const BoundOptions& options)
{
    std::vector<double> bound(size_t(count), kInf);
    const double u = stepRoundoff(options);  // every rounding of the formula (u, or u_i)
    const double f = kGoldenFunctionUlp * u;
    const double twoOverSqrtPi = 1.1283791670955126;
    for (int64_t i = 0; i < count; ++i) {
        const double xi = double(x[i]);
        double dy = kInf;
        switch (kind) {
            case Activation::GeluErf: {
                const double z = xi * 0.7071067811865476;
                const double erfz = std::erf(z);
                const double y = 0.5 * xi * (1.0 + erfz);
                const double dErf =
                    f * std::fabs(erfz) + 2.0 * u * std::fabs(z) * twoOverSqrtPi * std::exp(-z * z);
                dy = 0.5 * std::fabs(xi) * (dErf + u * std::fabs(1.0 + erfz)) + 2.0 * u * std::fabs(y);
                break;
            }
            case Activation::GeluTanh: {
                const double c = 0.7978845608028654, kappa = 0.044715;
                const double cube = kappa * xi * xi * xi;
                const double inner = xi + cube;
                const double t = c * inner;
                const double th = std::tanh(t);
                const double y = 0.5 * xi * (1.0 + th);
                const double dInner = 3.0 * u * std::fabs(cube) + u * std::fabs(inner);
                const double dt = c * dInner + 2.0 * u * std::fabs(t);
                const double dTh = f * std::fabs(th) + dt * (1.0 - th * th);
                dy = 0.5 * std::fabs(xi) * (dTh + u * std::fabs(1.0 + th)) + 2.0 * u * std::fabs(y);
                break;
            }
            case Activation::Silu: {
                const double e = std::exp(-xi);
                if (!std::isfinite(e)) {
                    dy = 0.0;  // x very negative: the result is -0 (or a tiny subnormal) everywhere
                    break;
                }
                const double y = xi / (1.0 + e);
                dy = std::fabs(y) * ((f * e + u * (1.0 + e)) / (1.0 + e) + 2.0 * u);
                break;
            }
        }
        bound[size_t(i)] =
            finishBound(dy + kNarrowSteps * options.intermediateAbsoluteRoundoff, golden[size_t(i)], out);
    }
    return bound;
}

std::vector<double> attentionErrorBound(const float* q, const float* k, const float* v,
                                        const AttentionShape& sh, float scale, bool causal,
                                        std::span<const double> golden, DType out,
                                        const BoundOptions& options)
{
    const int64_t heads = sh.batch * sh.heads;
    std::vector<double> bound(size_t(heads * sh.sq * sh.dv), kInf);
    if (heads <= 0 || sh.sq <= 0 || sh.dv <= 0) return bound;
    const GemmRunOptions run{options.threads, GemmKernel::Auto};
    const double uOp = operandRoundoff(options);
    const double uAcc = accumulationRoundoff(options);
    const double prodErr = 2.0 * uOp + uOp * uOp;
    const double ui = stepRoundoff(options);
    const double scoreRel = gammaN(double(sh.d), kU) + gammaN(double(sh.d), uAcc) + prodErr;
    const double gammaKeys = gammaN(double(sh.sk), kU) + gammaN(double(sh.sk), uAcc);
    const double inflateD = 1.0 + 2.0 * gammaN(double(sh.d), kU);
    const double inflateK = 1.0 + 2.0 * gammaN(double(sh.sk), kU);
    const size_t qkn = size_t(sh.sq * sh.sk);
    std::vector<float> scores(qkn), absScores(qkn), p(qkn), pe(qkn);
    std::vector<double> y(size_t(sh.sk)), dy(size_t(sh.sk)), dp(size_t(sh.sk));
    std::vector<float> wErr(size_t(sh.sq * sh.dv)), wMag(size_t(sh.sq * sh.dv));
    for (int64_t h = 0; h < heads; ++h) {
        const float* qh = q + h * sh.sq * sh.d;
        const float* kh = k + h * sh.sk * sh.d;
        const float* vh = v + h * sh.sk * sh.dv;
        attentionScores(qh, kh, scores.data(), 1, sh.sq, sh.sk, sh.d, scale, causal, run);
        const std::vector<float> absQ = absCopy(qh, size_t(sh.sq * sh.d));
        const std::vector<float> absK = absCopy(kh, size_t(sh.sk * sh.d));
        attentionScores(absQ.data(), absK.data(), absScores.data(), 1, sh.sq, sh.sk, sh.d, 1.0f, false, run);
        for (int64_t i = 0; i < sh.sq; ++i) {
            for (int64_t j = 0; j < sh.sk; ++j) {
                const size_t e = size_t(i * sh.sk + j);
                y[size_t(j)] = scores[e];
                dy[size_t(j)] = std::fabs(double(scale)) * scoreRel * double(absScores[e]) * inflateD +
                                2.0 * ui * std::fabs(double(scores[e]));
            }
            softmaxRowError(y.data(), dy.data(), sh.sk, gammaKeys, ui, dp.data());
            for (int64_t j = 0; j < sh.sk; ++j) pe[size_t(i * sh.sk + j)] = float(dp[size_t(j)]);
        }
        std::copy(scores.begin(), scores.end(), p.begin());
        for (int64_t i = 0; i < sh.sq; ++i) softmaxRowInPlace(p.data() + i * sh.sk, sh.sk);
        // sum_j dp_ij |v_jc| and sum_j p_ij |v_jc|, by the golden GEMM.
        const std::vector<float> absV = absCopy(vh, size_t(sh.sk * sh.dv));
        GemmOperands g;
        g.m = sh.sq;
        g.n = sh.dv;
        g.k = sh.sk;
        g.aRowStride = sh.sk;
        g.aColStride = 1;
        g.b = absV.data();
        g.bRowStride = sh.dv;
        g.bColStride = 1;
        g.a = pe.data();
        g.out = wErr.data();
        gemmAccumulateGolden(g, run);
        g.a = p.data();
        g.out = wMag.data();
        gemmAccumulateGolden(g, run);
        for (int64_t e = 0; e < sh.sq * sh.dv; ++e) {
            const double one = (double(wErr[size_t(e)]) + (gammaKeys + prodErr) * double(wMag[size_t(e)])) *
                               inflateK * (1.0 + 1e-6);
            const size_t at = size_t(h * sh.sq * sh.dv + e);
            bound[at] =
                finishBound(one + kNarrowSteps * options.intermediateAbsoluteRoundoff, golden[at], out);
        }
    }
    return bound;
}

std::vector<double> allReduceErrorBound(ReduceOp op, std::span<const float* const> ranks, int64_t count,
                                        std::span<const double> golden, DType out,
                                        const BoundOptions& options)
{
    std::vector<double> bound(size_t(count), 0.0);
    if (op != ReduceOp::Sum) {
        for (int64_t i = 0; i < count; ++i)
            if (!std::isfinite(golden[size_t(i)])) bound[size_t(i)] = kInf;
        return bound;
    }
    const double adds = ranks.empty() ? 0.0 : double(ranks.size() - 1);
    const double rel = gammaN(adds, kU) + gammaN(adds, accumulationRoundoff(options));
    for (int64_t i = 0; i < count; ++i) {
        double sumAbs = 0;
        for (const float* r : ranks) sumAbs += std::fabs(double(r[i]));
        const double g = golden[size_t(i)];
        if (!std::isfinite(g)) {
            bound[size_t(i)] = kInf;
            continue;
        }
        const double pre = rel * sumAbs * (1.0 + 1e-6);
        bound[size_t(i)] = pre + ulpAt(out, std::fabs(g) + pre);
    }
    return bound;
}

}  // namespace faultline::golden
