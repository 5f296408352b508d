#include "AttentionGolden.h"

#include <algorithm>
#include <vector>

#include "SoftmaxGolden.h"

namespace faultline::golden {

namespace {

// Heads per chunk, so the score buffer stays near 64 MB whatever the sequence length.
int64_t headsPerChunk(int64_t heads, int64_t sq, int64_t sk)
{
    const int64_t perHead = std::max<int64_t>(1, sq * sk);
    return std::clamp<int64_t>((int64_t(1) << 24) / perHead, 1, std::max<int64_t>(1, heads));
}

}  // namespace

void attentionScores(const float* q, const float* k, float* p, int64_t heads, int64_t sq, int64_t sk,
                     int64_t d, float scale, bool causal, const GemmRunOptions& run)
{
    if (heads <= 0 || sq <= 0 || sk <= 0) return;
    GemmOperands g;
    g.batch = heads;
    g.m = sq;
    g.n = sk;
    g.k = d;
    g.a = q;
    g.aRowStride = d;
    g.aColStride = 1;
    g.b = k;  // B(p, j) = K[j][p]
    g.bRowStride = 1;
    g.bColStride = d;
    g.out = p;
    for (int64_t h = 0; h < heads; ++h) {
        g.aOffsets.push_back(h * sq * d);
        g.bOffsets.push_back(h * sk * d);
    }
    gemmAccumulateGolden(g, run);
    const float negInf = floatFromBits(0xFF800000u);
    for (int64_t h = 0; h < heads; ++h) {
        for (int64_t i = 0; i < sq; ++i) {
            float* row = p + (h * sq + i) * sk;
            for (int64_t j = 0; j < sk; ++j)
                row[j] = (causal && j > i) ? negInf : gemmEpilogue(row[j], scale, 0.0f, 0.0f, false);
        }
    }
}

void attentionProbabilities(const float* q, const float* k, float* p, int64_t heads, int64_t sq, int64_t sk,
                            int64_t d, float scale, bool causal, const GemmRunOptions& run)
{
    if (heads <= 0 || sq <= 0 || sk <= 0) return;
    attentionScores(q, k, p, heads, sq, sk, d, scale, causal, run);
    for (int64_t r = 0; r < heads * sq; ++r) softmaxRowInPlace(p + r * sk, sk);
}

void attentionGolden(const float* q, const float* k, const float* v, float* out, const AttentionShape& s,
                     float scale, bool causal, const GemmRunOptions& run)
{
    const int64_t heads = s.batch * s.heads;
    if (heads <= 0 || s.sq <= 0 || s.dv <= 0) return;
    const int64_t chunk = headsPerChunk(heads, s.sq, s.sk);
    std::vector<float> p(size_t(chunk * s.sq * s.sk));
    for (int64_t h0 = 0; h0 < heads; h0 += chunk) {
        const int64_t hn = std::min(chunk, heads - h0);
        attentionProbabilities(q + h0 * s.sq * s.d, k + h0 * s.sk * s.d, p.data(), hn, s.sq, s.sk, s.d, scale,
                               causal, run);
        GemmOperands g;
        g.batch = hn;
        g.m = s.sq;
        g.n = s.dv;
        g.k = s.sk;
        g.a = p.data();
        g.aRowStride = s.sk;
        g.aColStride = 1;
        g.b = v + h0 * s.sk * s.dv;
        g.bRowStride = s.dv;
        g.bColStride = 1;
        g.out = out + h0 * s.sq * s.dv;
        for (int64_t h = 0; h < hn; ++h) {
            g.aOffsets.push_back(h * s.sq * s.sk);
            g.bOffsets.push_back(h * s.sk * s.dv);
        }
        gemmAccumulateGolden(g, run);
    }
}

}  // namespace faultline::golden
