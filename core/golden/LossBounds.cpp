// Bounds of log_softmax, its backward, nll_loss and embedding_backward (TrainingBounds.h).
#include <cmath>

#include "BoundSides.h"
#include "TrainingBounds.h"

namespace faultline::golden {

using namespace bounds;

namespace {

// One side's error of log_softmax's row outputs, into dy (first-order, absolute).
void logSoftmaxRowError(const Side& s, const float* x, int64_t n, double* dy)
{
    double m = -kInf;
    bool finite = true;
    for (int64_t j = 0; j < n; ++j) {
        if (std::isnan(x[j]) || x[j] == INFINITY) finite = false;
        m = std::max(m, double(x[j]));
    }
    if (!finite || !std::isfinite(m)) {
        for (int64_t j = 0; j < n; ++j) dy[j] = kInf;
        return;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(double(x[j]) - m);
    double weighted = 0;
    for (int64_t j = 0; j < n; ++j) {
        const double z = double(x[j]) - m;
        if (std::isfinite(z)) weighted += std::exp(z) / sum * (s.us * std::fabs(z) + s.f());
    }
    const double l = std::log(sum);
    const double eSum = s.gamma(double(n)) + weighted + s.us + s.tiny * double(n) / sum;
    const double dl = eSum + s.f() * std::fabs(l);
    for (int64_t j = 0; j < n; ++j) {
        const double z = double(x[j]) - m;
        if (!std::isfinite(z)) {
            dy[j] = 0;  // -inf in, -inf out
            continue;
        }
        const double y = z - l;
        dy[j] = s.us * std::fabs(z) + dl +
                s.us * (std::fabs(double(x[j])) + std::fabs(m) + std::fabs(l) + std::fabs(y));
    }
}

}  // namespace

std::vector<double> logSoftmaxErrorBound(const float* x, int64_t rows, int64_t n,
                                         std::span<const double> golden, DType out,
                                         const BoundOptions& options)
{
    std::vector<double> bound(size_t(rows * n), kInf);
    const Side prod = productionSide(options), gold = goldenSide();
    std::vector<double> dp(static_cast<size_t>(n)), dg(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; ++r) {
        logSoftmaxRowError(prod, x + r * n, n, dp.data());
        logSoftmaxRowError(gold, x + r * n, n, dg.data());
        for (int64_t j = 0; j < n; ++j) {
            const size_t e = size_t(r * n + j);
            bound[e] = finishTwoSided(dp[size_t(j)], dg[size_t(j)], golden[e], out);
        }
    }
    return bound;
}

std::vector<double> logSoftmaxBackwardErrorBound(const float* g, const float* y, int64_t rows, int64_t n,
                                                 std::span<const double> golden, DType out,
                                                 const BoundOptions& options)
{
    std::vector<double> bound(size_t(rows * n), kInf);
    const Side prod = productionSide(options), gold = goldenSide();
    for (int64_t r = 0; r < rows; ++r) {
        const float* gr = g + r * n;
        const float* yr = y + r * n;
        double sum = 0, sumAbs = 0;
        for (int64_t j = 0; j < n; ++j) {
            sum += gr[j];
            sumAbs += std::fabs(double(gr[j]));
        }
        auto error = [&](const Side& s, int64_t j) {
            const double p = std::exp(double(yr[j]));
            const double gi = double(gr[j]) - p * sum;
            const double dS = s.gamma(double(n)) * sumAbs + s.us * std::fabs(sum);
            return p * dS + p * std::fabs(sum) * (s.f() + 2.0 * s.us) + s.us * std::fabs(gi) +
                   s.tiny * (2.0 + std::fabs(sum));
        };
        for (int64_t j = 0; j < n; ++j) {
            const size_t e = size_t(r * n + j);
            bound[e] = finishTwoSided(error(prod, j), error(gold, j), golden[e], out);
        }
    }
    return bound;
}

namespace {

struct NllSums {
    double sum = 0, sumAbs = 0;        // of the terms -(w x)
    double weight = 0, weightAbs = 0;  // of the class weights (1 each without weights)
    int64_t terms = 0;
};

NllSums nllSums(const NllLossInput& in)
{
    NllSums s;
    for (int64_t i = 0; i < in.batch; ++i) {
        if (in.target[i] == in.ignoreIndex) continue;
        const double w = in.weight ? double(in.weight[in.target[i]]) : 1.0;
        const double t = -w * double(in.x[i * in.classes + in.target[i]]);
        s.sum += t;
        s.sumAbs += std::fabs(t);
        s.weight += w;
        s.weightAbs += std::fabs(w);
        ++s.terms;
    }
    return s;
}

}  // namespace

std::vector<double> nllLossErrorBound(const NllLossInput& in, std::span<const double> golden, DType out,
                                      const BoundOptions& options)
{
    std::vector<double> bound(golden.size(), 0.0);
    if (in.reduction == LossReduction::None) {  // one rounding of an exact product: bit for bit
        for (size_t e = 0; e < bound.size(); ++e)
            if (!std::isfinite(golden[e])) bound[e] = kInf;
        return bound;
    }
    const NllSums t = nllSums(in);
    const bool weighted = in.weight != nullptr;
    auto error = [&](const Side& s) {
        const double n = double(in.batch);             // the sums run over every row (ignored ones add 0)
        const double product = weighted ? s.us : 0.0;  // w x rounded once
        const double dS = (s.gamma(n) * (1.0 + product) + product) * t.sumAbs;  // rigorous
        if (in.reduction == LossReduction::Sum) return dS;
        const double value = t.sum / t.weight;
        const double dW = (weighted ? s.gamma(n) * t.weightAbs : 0.0) + s.us * std::fabs(t.weight);
        return dS / std::fabs(t.weight) + std::fabs(value) * dW / std::fabs(t.weight) +
               s.us * std::fabs(value);
    };
    const double dp = error(productionSide(options)), dg = error(goldenSide());
    bound[0] = in.reduction == LossReduction::Sum ? finishRigorous(dp, dg, golden[0], out)
                                                  : finishTwoSided(dp, dg, golden[0], out);
    return bound;
}

std::vector<double> nllLossTotalWeightErrorBound(const NllLossInput& in, std::span<const double> golden,
                                                 DType out, const BoundOptions& options)
{
    std::vector<double> bound(golden.size(), 0.0);
    if (!std::isfinite(golden[0])) bound[0] = kInf;
    // The count of rows (exact in float up to 2^24, then rounded once), or 0 for none.
    if (in.reduction == LossReduction::None || !in.weight) return bound;
    const NllSums t = nllSums(in);
    const double n = double(in.batch);
    bound[0] = finishRigorous(productionSide(options).gamma(n) * t.weightAbs,
                              goldenSide().gamma(n) * t.weightAbs, golden[0], out);
    return bound;
}

std::vector<double> nllLossBackwardErrorBound(const NllLossInput& in, std::span<const double> golden,
                                              DType out)
{
    std::vector<double> bound(golden.size(), 0.0);
    for (size_t e = 0; e < bound.size(); ++e) {
        if (!std::isfinite(golden[e])) {
            bound[e] = kInf;
            continue;
        }
        // none, sum: one rounding of an exact product (bit for bit); mean: the quotient's rounding.
        if (in.reduction == LossReduction::Mean && golden[e] != 0.0)
            bound[e] = (in.weight ? 2.0 : 1.0) * ulpAt(out, golden[e]);
    }
    return bound;
}

std::vector<double> embeddingBackwardErrorBound(const float* grad, const int64_t* idx, int64_t count,
                                                int64_t dim, int64_t numWeights, int64_t padding,
                                                bool scaleByFrequency, bool cpuOrder,
                                                std::span<const double> golden, DType out,
                                                const BoundOptions& options)
{
    std::vector<double> bound(size_t(numWeights * dim), 0.0);
    std::vector<int64_t> uses(size_t(numWeights), 0);
    for (int64_t i = 0; i < count; ++i) ++uses[size_t(idx[i])];
    std::vector<double> sumAbs(size_t(numWeights * dim), 0.0);
    for (int64_t i = 0; i < count; ++i) {
        if (idx[i] == padding) continue;
        for (int64_t c = 0; c < dim; ++c)
            sumAbs[size_t(idx[i] * dim + c)] += std::fabs(double(grad[i * dim + c]));
    }
    const Side prod = productionSide(options);
    for (int64_t k = 0; k < numWeights; ++k) {
        const double terms = k == padding ? 0.0 : double(uses[size_t(k)]);
        for (int64_t c = 0; c < dim; ++c) {
            const size_t e = size_t(k * dim + c);
            if (!std::isfinite(golden[e])) {
                bound[e] = kInf;
                continue;
            }
            if (terms <= 1 || cpuOrder) continue;  // +0 + g (times 1), or the production's order: exact
            // Any order of the c - 1 adds; the golden adds in index order (a chain, not its tree).
            // Rigorous: with scale_grad_by_freq each term carries the scale's rounding and the
            // product's (gamma_2), then the sum's.
            const double a = sumAbs[e] / (scaleByFrequency ? terms : 1.0);
            const double tp = scaleByFrequency ? gammaN(2, prod.us) : 0.0, tg = scaleByFrequency ? kU : 0.0;
            const double dp = gammaN(terms - 1, prod.ua) * (1.0 + tp) * a + tp * a;
            const double dg = gammaN(terms - 1, kU) * (1.0 + tg) * a + tg * a;
            bound[e] = finishRigorous(dp, dg, golden[e], out);
        }
    }
    return bound;
}

}  // namespace faultline::golden
