#include "AttentionBackwardGolden.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "GoldenSupport.h"

namespace faultline::golden {

namespace {

constexpr double kFloatU = 0x1p-24;

// One (batch, head)'s forward and backward intermediates in double, and with `bound` their
// first-order error terms.
struct HeadState {
    int64_t sq = 0, sk = 0, d = 0, dv = 0;
    std::vector<double> p, ds;    // [sq, sk]
    std::vector<double> ep, eds;  // relative error of p (epsilon_p), absolute error of ds
};

void headState(const AttentionBackwardInput& in, int64_t h, bool bound, HeadState& st)
{
    const AttentionShape& sh = in.shape;
    st.sq = sh.sq;
    st.sk = sh.sk;
    st.d = sh.d;
    st.dv = sh.dv;
    const float* q = in.q + h * sh.sq * sh.d;
    const float* k = in.k + h * sh.sk * sh.d;
    const float* v = in.v + h * sh.sk * sh.dv;
    const float* g = in.g + h * sh.sq * sh.dv;
    const size_t n = size_t(sh.sq * sh.sk);
    st.p.assign(n, 0.0);
    st.ds.assign(n, 0.0);
    const double un = std::max(unitRoundoff(in.inputType), kFloatU);
    const double gd = gammaN(double(sh.d), kFloatU), gdv = gammaN(double(sh.dv), kFloatU),
                 gsk = gammaN(double(sh.sk), kFloatU);
    std::vector<double> es(bound ? size_t(sh.sk) : 0), o(size_t(sh.dv)), eo(size_t(sh.dv)), dp(size_t(sh.sk));
    if (bound) {
        st.ep.assign(n, 0.0);
        st.eds.assign(n, 0.0);
    }
    for (int64_t i = 0; i < sh.sq; ++i) {
        const int64_t keys = in.causal ? std::min<int64_t>(i + 1, sh.sk) : sh.sk;
        double* p = st.p.data() + i * sh.sk;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < keys; ++j) {
            double s = 0, a = 0;
            for (int64_t e = 0; e < sh.d; ++e) {
                s += double(q[i * sh.d + e]) * k[j * sh.d + e];
                a += std::fabs(double(q[i * sh.d + e]) * k[j * sh.d + e]);
            }
            p[j] = in.scale * s;
            if (bound) es[size_t(j)] = std::fabs(in.scale) * gd * a + kFloatU * std::fabs(p[j]);
            mx = std::max(mx, p[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < keys; ++j) sum += (p[j] = std::exp(p[j] - mx));
        for (int64_t j = 0; j < keys; ++j) p[j] /= sum;
        double eL = 0;
        if (bound) {
            for (int64_t j = 0; j < keys; ++j) eL = std::max(eL, es[size_t(j)]);
            eL += gsk + 2 * kFloatU;
            for (int64_t j = 0; j < keys; ++j)
                st.ep[size_t(i * sh.sk + j)] = 2.0 * (es[size_t(j)] + eL + 2 * kFloatU) + un;
        }
        // o, D and their errors
        double D = 0, eD = 0;
        for (int64_t c = 0; c < sh.dv; ++c) {
            double oc = 0, eoc = 0, mag = 0;
            for (int64_t j = 0; j < keys; ++j) {
                oc += p[j] * v[j * sh.dv + c];
                if (bound) {
                    mag += p[j] * std::fabs(double(v[j * sh.dv + c]));
                    eoc += p[j] * st.ep[size_t(i * sh.sk + j)] * std::fabs(double(v[j * sh.dv + c]));
                }
            }
            o[size_t(c)] = oc;
            D += double(g[i * sh.dv + c]) * oc;
            if (bound) {
                eo[size_t(c)] = eoc + gsk * mag + un * std::fabs(oc);
                eD += std::fabs(double(g[i * sh.dv + c])) * (gdv * std::fabs(oc) + eo[size_t(c)]);
            }
        }
        for (int64_t j = 0; j < keys; ++j) {
            double s = 0, a = 0;
            for (int64_t c = 0; c < sh.dv; ++c) {
                s += double(g[i * sh.dv + c]) * v[j * sh.dv + c];
                a += std::fabs(double(g[i * sh.dv + c]) * v[j * sh.dv + c]);
            }
            dp[size_t(j)] = s;
            const size_t e = size_t(i * sh.sk + j);
            st.ds[e] = p[j] * (s - D);
            if (bound)
                st.eds[e] = p[j] * (gdv * a + un * std::fabs(s) + eD) +
                            (st.ep[e] + kFloatU + un) * std::fabs(st.ds[e]);
        }
    }
}

}  // namespace

std::vector<double> attentionBackwardGolden(AttentionGrad which, const AttentionBackwardInput& in)
{
    const AttentionShape& sh = in.shape;
    const int64_t heads = sh.batch * sh.heads;
    const int64_t rows = which == AttentionGrad::Query ? sh.sq : sh.sk;
    const int64_t cols = which == AttentionGrad::Value ? sh.dv : sh.d;
    std::vector<double> out(size_t(heads * rows * cols), 0.0);
    HeadState st;
    for (int64_t h = 0; h < heads; ++h) {
        headState(in, h, false, st);
        const float* q = in.q + h * sh.sq * sh.d;
        const float* k = in.k + h * sh.sk * sh.d;
        const float* g = in.g + h * sh.sq * sh.dv;
        double* o = out.data() + h * rows * cols;
        for (int64_t i = 0; i < sh.sq; ++i)
            for (int64_t j = 0; j < sh.sk; ++j) {
                const size_t e = size_t(i * sh.sk + j);
                switch (which) {
                    case AttentionGrad::Query:
                        for (int64_t c = 0; c < cols; ++c)
                            o[i * cols + c] += in.scale * st.ds[e] * k[j * sh.d + c];
                        break;
                    case AttentionGrad::Key:
                        for (int64_t c = 0; c < cols; ++c)
                            o[j * cols + c] += in.scale * st.ds[e] * q[i * sh.d + c];
                        break;
                    case AttentionGrad::Value:
                        for (int64_t c = 0; c < cols; ++c) o[j * cols + c] += st.p[e] * g[i * sh.dv + c];
                        break;
                }
            }
    }
    return out;
}

std::vector<double> attentionBackwardErrorBound(AttentionGrad which, const AttentionBackwardInput& in,
                                                const std::vector<double>& golden, DType out,
                                                const BoundOptions& options)
{
    const AttentionShape& sh = in.shape;
    const int64_t heads = sh.batch * sh.heads;
    const int64_t rows = which == AttentionGrad::Query ? sh.sq : sh.sk;
    const int64_t cols = which == AttentionGrad::Value ? sh.dv : sh.d;
    std::vector<double> err(size_t(heads * rows * cols), 0.0);
    // TF32 operands (CUDA, allow_tf32) or a recorded operand rounding widen the products.
    const double uOp = std::max(options.tf32 ? 0x1p-11 : 0.0, options.operandUnitRoundoff);
    const double gsq = gammaN(double(sh.sq), kFloatU) + 2 * uOp,
                 gsk = gammaN(double(sh.sk), kFloatU) + 2 * uOp;
    HeadState st;
    for (int64_t h = 0; h < heads; ++h) {
        headState(in, h, true, st);
        const float* q = in.q + h * sh.sq * sh.d;
        const float* k = in.k + h * sh.sk * sh.d;
        const float* g = in.g + h * sh.sq * sh.dv;
        double* o = err.data() + h * rows * cols;
        for (int64_t i = 0; i < sh.sq; ++i)
            for (int64_t j = 0; j < sh.sk; ++j) {
                const size_t e = size_t(i * sh.sk + j);
                const double ads = std::fabs(st.ds[e]);
                switch (which) {
                    case AttentionGrad::Query:
                        for (int64_t c = 0; c < cols; ++c)
                            o[i * cols + c] += std::fabs(in.scale) * (st.eds[e] + gsk * ads) *
                                               std::fabs(double(k[j * sh.d + c]));
                        break;
                    case AttentionGrad::Key:
                        for (int64_t c = 0; c < cols; ++c)
                            o[j * cols + c] += std::fabs(in.scale) * (st.eds[e] + gsq * ads) *
                                               std::fabs(double(q[i * sh.d + c]));
                        break;
                    case AttentionGrad::Value:
                        for (int64_t c = 0; c < cols; ++c)
                            o[j * cols + c] +=
                                (st.ep[e] + gsq) * st.p[e] * std::fabs(double(g[i * sh.dv + c]));
                        break;
                }
            }
    }
    const double uOut = unitRoundoff(out), tiny = ulpAt(out, 0.0);
    for (size_t e = 0; e < err.size(); ++e) {
        const double x = std::fabs(golden[e]);
        err[e] = 2.0 * err[e] + 2.0 * uOut * (x + 2.0 * err[e]) + tiny;
    }
    return err;
}

}  // namespace faultline::golden
