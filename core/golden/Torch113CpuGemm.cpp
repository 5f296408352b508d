// PyTorch 1.13's CPU bf16 matrix products, bit for bit: a port of
// bench/numerics/emulate_torch113_bf16.py (docs/numerics/torch113-cpu-bf16-matmul.md, whose
// section numbers the comments cite). Compiled with -ffp-contract=off (core/CMakeLists.txt): every
// float operation below rounds where the production kernel rounds, and std::fma is the only FMA.
#include "Torch113CpuGemm.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <thread>

#include "GemmGolden.h"

namespace faultline::golden {

namespace {

// ---- roundings (doc §1) ------------------------------------------------------------------------

uint32_t bitsOf(float x)
{
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

float fromBits(uint32_t u)
{
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

uint32_t roundBitsToBf16(uint32_t u)
{
    return (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
}

// c10::BFloat16(float): round to nearest even, NaN -> 0x7FC0; subnormals kept.
float bf16(float x)
{
    if (std::isnan(x)) return fromBits(0x7FC00000u);
    return fromBits(roundBitsToBf16(bitsOf(x)));
}

// A float32 subnormal becomes a signed zero (oneDNN's DAZ on inputs, FTZ on results).
float ftz(float x)
{
    return x != 0.0f && std::fabs(x) < FLT_MIN ? std::copysign(0.0f, x) : x;
}

// vcvtneps2bf16 as oneDNN uses it: a subnormal becomes a signed zero, then round to nearest even;
// NaN stays NaN with its upper bits kept and quietened.
float cvtDnnl(float x)
{
    x = ftz(x);
    if (std::isnan(x)) return fromBits(((bitsOf(x) >> 16) | 0x40u) << 16);
    return fromBits(roundBitsToBf16(bitsOf(x)));
}

// ---- the dispatch (doc §2) ---------------------------------------------------------------------

int64_t divUp(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

struct Strides2 {
    int64_t s0 = 0, s1 = 0;
};

Strides2 contiguous2(int64_t rows, int64_t cols)
{
    (void)rows;
    return {std::max<int64_t>(cols, 1), 1};
}

// addmm_impl_cpu_'s column-major mapping for a fresh row-major M x N result (§2.1).
struct AddmmFlags {
    bool tc = false, ta = false, tb = false, ca = false, cb = false;
    int64_t m = 0, n = 0, k = 0;
};

AddmmFlags addmmFlags(int64_t M, int64_t K, int64_t N, Strides2 sa, Strides2 sb)
{
    AddmmFlags f;
    const Strides2 rs = contiguous2(M, N);  // rs = {max(N,1), 1}
    if (rs.s0 == 1 && (N == 1 || rs.s1 >= std::max<int64_t>(1, M)))
        f.tc = false;
    else if (rs.s1 == 1 && (M == 1 || rs.s0 >= std::max<int64_t>(1, N)))
        f.tc = true;
    else
        f.tc = false;
    const Strides2 m1s = f.tc ? sb : sa, m2s = f.tc ? sa : sb;
    const int64_t m1rows = f.tc ? K : M, m1cols = f.tc ? N : K;
    (void)m1cols;
    f.m = f.tc ? N : M;
    f.n = f.tc ? M : N;
    f.k = f.tc ? m1rows : K;
    auto at = [&](Strides2 s, int i) { return i == 0 ? s.s0 : s.s1; };
    const int i0 = f.tc ? 1 : 0, i1 = f.tc ? 0 : 1;
    if (at(m1s, i0) == 1 && at(m1s, i1) >= std::max<int64_t>(1, f.m)) {
        f.ta = false;
    } else if (at(m1s, i1) == 1 && at(m1s, i0) >= std::max<int64_t>(1, f.k)) {
        f.ta = true;
    } else {
        f.ta = !f.tc;
        f.ca = true;
    }
    if (at(m2s, i0) == 1 && at(m2s, i1) >= std::max<int64_t>(1, f.k)) {
        f.tb = false;
    } else if (at(m2s, i1) == 1 && at(m2s, i0) >= std::max<int64_t>(1, f.n)) {
        f.tb = true;
    } else {
        f.tb = !f.tc;
        f.cb = true;
    }
    return f;
}

// Is a 2-D oneDNN operand {r, c} with strides {s0, s1} densely packed (ab or ba; ties: ba)?
bool dnnlDense(int64_t r, int64_t c, int64_t s0, int64_t s1)
{
    if (s0 > s1) return s1 == 1 && (s0 == c || r == 1);
    return s0 == 1 && (s1 == r || c == 1);
}

bool isContiguous3(int64_t b, int64_t r, int64_t c, const std::vector<int64_t>& st)
{
    const int64_t shape[3] = {b, r, c};
    int64_t expected = 1;
    for (int d = 2; d >= 0; --d) {
        if (shape[d] != 1 && st[size_t(d)] != expected) return false;
        expected *= shape[d];
    }
    return true;
}

// mkldnn_matmul keeps a 3-D operand that is contiguous or "last two dims transposed" (§2.2).
bool dnnlOptimized3(int64_t b, int64_t r, int64_t c, const std::vector<int64_t>& st)
{
    return isContiguous3(b, r, c, st) || (st[0] == r * c && st[1] == 1 && st[2] == r);
}

// oneDNN 2.6's compute_blocking_heuristic_avx512 for bf16 (§3.2): the K block and the number of
// threads K is split over.
double spatialDisbalance(int64_t work, int64_t team)
{
    const int64_t mod = work % team;
    const int64_t sc = work < team ? team - mod : std::min(team - mod, mod);
    return double(sc) / double(team);
}

std::pair<int64_t, int64_t> dnnlBlocking(int64_t M, int64_t N, int64_t K, int64_t batch, int64_t nthr,
                                         bool srcTrans)
{
    const bool useExt = K > 1024 && !srcTrans;
    const int64_t kBlk = std::min<int64_t>(K, useExt ? 1024 : 512);
    int64_t nBlk = std::min<int64_t>(64, N);
    const int64_t nChunks = divUp(N, nBlk);
    const int64_t maxMBlk = std::min<int64_t>(256, M);
    int64_t minMBlk = std::min<int64_t>(32, M);
    const int64_t nChunksStart = std::min<int64_t>(srcTrans ? 16 : 1, nChunks);
    int64_t startNthrK = 1;
    if (nthr > batch * nChunks) {
        minMBlk = std::min<int64_t>(M, 16);
        if (M <= 40 || (srcTrans && M <= 512)) nBlk = std::min<int64_t>(N, 32);
        if (srcTrans && (K & (K - 1)) == 0 && K >= 2048) startNthrK = std::min<int64_t>(nthr, 4);
    }
    double best = 1.0;
    int64_t bestNthrK = 1;
    for (int64_t nthrK = startNthrK; nthrK >= 1; --nthrK) {
        for (int64_t chunk = nChunksStart; chunk >= 1; --chunk) {
            for (int64_t mBlk = maxMBlk; mBlk >= minMBlk; --mBlk) {
                const int64_t curNthr = nthr / nthrK;
                const int64_t work = divUp(M, mBlk) * divUp(N, nBlk * chunk) * batch;
                const double d1 = spatialDisbalance(work, curNthr);
                const double d2 = double((mBlk * divUp(M, mBlk)) % M) / double(M);
                const int64_t nnb = divUp(N, nBlk);
                const double d3 = double(divUp(nnb, chunk) * chunk - nnb) / double(nnb);
                const double d4 = spatialDisbalance(K, nthrK * kBlk);
                const double d5 =
                    curNthr * nthrK != nthr ? double(nthr - curNthr * nthrK) / double(nthr) : 0.0;
                const double score = (d1 + d2 + d3 + d5 + d4) / 5.0;
                if (score < best) {
                    best = score;
                    bestNthrK = nthrK;
                }
            }
        }
    }
    return {kBlk, bestNthrK};
}

std::pair<int64_t, int64_t> balance211(int64_t n, int64_t team, int64_t tid)
{
    if (team <= 1 || n == 0) return {0, n};
    const int64_t n1 = divUp(n, team), n2 = n1 - 1;
    const int64_t t1 = n - n2 * team;
    const int64_t start = tid < t1 ? n1 * tid : t1 * n1 + (tid - t1) * n2;
    return {start, start + (tid < t1 ? n1 : n2)};
}

std::string verifiedOneDnn(const Torch113Environment& env)
{
    return env.onednnVerified ? std::string()
                              : "oneDNN other than the verified 2.6.3 brg:avx512_core_bf16 "
                                "(needs avx512_bf16, no AMX, no ISA limit)";
}

// oneDNN brgemm for the (batch of) matrices whose src has srcRows rows (§3.2).
void planBrgemm(Torch113Plan& p, const Torch113Environment& env, int64_t srcRows, int64_t dstCols, int64_t k,
                int64_t batch, bool srcTrans)
{
    p.kernel = Torch113Kernel::OneDnnBrgemm;
    p.floatAccumulation = true;
    p.srcTransposed = srcTrans;
    const auto [kBlk, nthrK] = dnnlBlocking(srcRows, dstCols, k, batch, std::max(1, env.threads), srcTrans);
    p.kBlock = kBlk;
    p.kGroups = nthrK;
    p.description = "oneDNN brgemm, float accumulation in " +
                    (kBlk >= k ? std::string("one K block") : "K blocks of " + std::to_string(kBlk)) +
                    (nthrK > 1 ? ", K split over " + std::to_string(nthrK) + " threads" : "");
    p.notExact = verifiedOneDnn(env);
    if (p.notExact.empty() && nthrK > 2)
        p.notExact = "K split over more than 2 threads: the reduction order is not verified";
    if (p.notExact.empty() && srcRows == 1 && k > 1024)
        p.notExact =
            "single-row src with k > 1024: oneDNN's primitive cache can make the K blocking "
            "depend on earlier calls";
}

void planFallback(Torch113Plan& p, const Torch113Environment& env, const AddmmFlags& f, float beta)
{
    p.transC = f.tc;
    p.transA = f.ta;
    p.transB = f.tb;
    if (f.ta && !f.tb) {
        p.kernel = Torch113Kernel::FallbackDot;
        p.floatAccumulation = true;
        p.description = "ATen gemm_transa_: float sum in k order, one rounding";
        if (beta != 0.0f && env.capability != "AVX2")
            p.notExact = "beta*c + alpha*sum with ATen CPU capability " +
                         (env.capability.empty() ? std::string("unknown") : env.capability) +
                         " (FMA contraction verified for AVX2 only)";
    } else {
        p.kernel = Torch113Kernel::FallbackSeq;
        p.floatAccumulation = false;
        p.description = "ATen gemm_notrans_/transb_/transab_: every product and partial sum rounded to bf16";
    }
}

Torch113Plan planMatrix(const Torch113Call& c, const Torch113Environment& env)
{
    Torch113Plan p;
    if (c.m == 0 || c.n == 0 || c.k == 0) {
        p.description = "empty product";
        p.exact = true;
        return p;
    }
    const Strides2 sa{c.aStrides[0], c.aStrides[1]}, sb{c.bStrides[0], c.bStrides[1]};
    const AddmmFlags f = addmmFlags(c.m, c.k, c.n, sa, sb);
    const bool useDnnl = env.onednn && f.m * f.n * f.k > 4096 && c.alpha != 0.0f;
    if (!useDnnl) {
        planFallback(p, env, f, c.hasC ? c.beta : 0.0f);
        p.exact = p.notExact.empty();
        return p;
    }
    p.transC = f.tc;
    p.transA = f.ta;
    p.transB = f.tb;
    // Leading dimensions as addmm_impl_cpu_ computes them (a cloned operand is contiguous).
    const Strides2 aSrc = f.tc ? sb : sa, bSrc = f.tc ? sa : sb;
    const int64_t aRows = f.tc ? c.k : c.m, aCols = f.tc ? c.n : c.k;
    const int64_t bRows = f.tc ? c.m : c.k, bCols = f.tc ? c.k : c.n;
    const Strides2 aSt = f.ca ? contiguous2(aRows, aCols) : aSrc;
    const Strides2 bSt = f.cb ? contiguous2(bRows, bCols) : bSrc;
    const int64_t lda = f.ta == f.tc ? aSt.s1 : aSt.s0;
    const int64_t ldb = f.tb == f.tc ? bSt.s1 : bSt.s0;
    const Strides2 weiStrides = f.ta ? Strides2{1, lda} : Strides2{lda, 1};  // wei dims {k, m}
    const Strides2 srcStrides = f.tb ? Strides2{1, ldb} : Strides2{ldb, 1};  // src dims {n, k}
    if (dnnlDense(f.k, f.m, weiStrides.s0, weiStrides.s1) &&
        dnnlDense(f.n, f.k, srcStrides.s0, srcStrides.s1)) {
        planBrgemm(p, env, f.n, f.m, f.k, 1, srcStrides.s0 <= srcStrides.s1);
    } else {
        p.kernel = Torch113Kernel::OneDnnGemmJit;
        p.floatAccumulation = true;
        const int64_t K = f.k;
        p.kBlock = K <= 384 ? std::max<int64_t>(128, K) : K < 1536 ? (K + 1) / 2 : 768;
        p.description =
            "oneDNN gemm:jit (an operand not densely packed), float accumulation in " +
            (p.kBlock >= K ? std::string("one K block") : "K blocks of " + std::to_string(p.kBlock));
        p.notExact = verifiedOneDnn(env);
        if (p.notExact.empty() && env.threads != 1)
            p.notExact = "gemm:jit with more than 1 thread splits K across threads (not modelled)";
        if (p.notExact.empty() && (f.n == 1 || f.m == 1))
            p.notExact = "gemm:jit with a single output row or column runs its gemv kernel (not modelled)";
    }
    p.exact = p.notExact.empty();
    return p;
}

Torch113Plan planBatched(const Torch113Call& c, const Torch113Environment& env)
{
    Torch113Plan p;
    const bool isBmm = c.aten == Torch113Aten::Bmm;
    const float alpha = isBmm ? 1.0f : c.alpha, beta = isBmm ? 0.0f : c.beta;
    if (c.batch == 0 || c.m == 0 || c.n == 0) {
        p.description = "empty product";
        p.exact = true;
        return p;
    }
    if (env.onednn && c.batch * c.m * c.k * c.n > 4096) {
        p.kernel = Torch113Kernel::OneDnnBrgemm;
        p.floatAccumulation = true;
        if (alpha == 0.0f) {
            p.description = "oneDNN 3-D with alpha = 0: returns self unchanged";
            p.exact = true;
            return p;
        }
        const bool srcTrans =
            !isContiguous3(c.batch, c.m, c.k, c.aStrides) && dnnlOptimized3(c.batch, c.m, c.k, c.aStrides);
        planBrgemm(p, env, c.m, c.n, c.k, c.batch, srcTrans);
        p.exact = p.notExact.empty();
        return p;
    }
    if (c.k * c.m * c.n < 400) {
        p.kernel = Torch113Kernel::SmallBmm;
        p.floatAccumulation = false;
        p.description = "baddbmm_cpu_kernel: every product and partial sum rounded to bf16";
        if (!isBmm && bf16(beta) == 0.0f)
            p.notExact = "baddbmm with beta = 0 on the small kernel reads uninitialised memory (torch bug)";
        p.exact = p.notExact.empty();
        return p;
    }
    const AddmmFlags f =
        addmmFlags(c.m, c.k, c.n, {c.aStrides[1], c.aStrides[2]}, {c.bStrides[1], c.bStrides[2]});
    planFallback(p, env, f, beta);
    p.description = "per-batch " + p.description;
    p.exact = p.notExact.empty();
    return p;
}

// ---- the kernels (§3), per output element --------------------------------------------------

// Column-major view of one matrix problem (§2.1): opA m x k, opB k x n, cc m x n. Stored as rows
// of opA and rows of opB^T (each element's k terms contiguous).
struct ColumnMajor {
    int64_t m = 0, n = 0, k = 0;
    std::vector<float> opA, opBt, cc;  // m x k, n x k, m x n
};

ColumnMajor columnMajor(bool tc, int64_t M, int64_t N, int64_t K, const float* a, const float* b,
                        const float* c)
{
    ColumnMajor v;
    v.k = K;
    v.m = tc ? N : M;
    v.n = tc ? M : N;
    if (tc) {  // C^T (N x M) = B^T A^T: opA = B^T, opB^T = A
        v.opA.resize(size_t(N * K));
        for (int64_t i = 0; i < N; ++i)
            for (int64_t l = 0; l < K; ++l) v.opA[size_t(i * K + l)] = b[l * N + i];
        v.opBt.assign(a, a + M * K);
        if (c) {
            v.cc.resize(size_t(N * M));
            for (int64_t i = 0; i < N; ++i)
                for (int64_t j = 0; j < M; ++j) v.cc[size_t(i * M + j)] = c[j * N + i];
        }
    } else {
        v.opA.assign(a, a + M * K);
        v.opBt.resize(size_t(N * K));
        for (int64_t l = 0; l < K; ++l)
            for (int64_t j = 0; j < N; ++j) v.opBt[size_t(j * K + l)] = b[l * N + j];
        if (c) v.cc.assign(c, c + M * N);
    }
    return v;
}

// oneDNN reads subnormal bf16 inputs as zero (DAZ).
void flushAll(std::vector<float>& v)
{
    for (float& x : v) x = ftz(x);
}

// One brgemm K block of sum x_l w_l (§3.2) over inputs already flushed (DAZ): float accumulator
// from +0, pairs (2q, 2q+1) with the odd element first, a missing partner counting as +0, every
// product and sum flushed (FTZ).
float dpbf16Block(const float* x, const float* w, int64_t len)
{
    float acc = 0.0f;
    for (int64_t q = 0; q < (len + 1) / 2; ++q) {
        const int64_t odd = 2 * q + 1, even = 2 * q;
        const float pOdd = odd < len ? ftz(x[odd] * w[odd]) : 0.0f;
        acc = ftz(acc + pOdd);
        acc = ftz(acc + ftz(x[even] * w[even]));
    }
    return acc;
}

float brgemmElement(const float* x, const float* w, int64_t k, int64_t kBlk, int64_t kGroups, float alpha,
                    float beta, float dstOld)
{
    const int64_t blocks = divUp(k, kBlk);
    float acc = 0.0f;
    bool first = true;
    for (int64_t t = 0; t < kGroups; ++t) {
        const auto [lo, hi] = balance211(blocks, kGroups, t);
        if (hi <= lo) continue;
        float g = 0.0f;
        for (int64_t blk = lo; blk < hi; ++blk) {
            const int64_t s = blk * kBlk;
            const float part = dpbf16Block(x + s, w + s, std::min(kBlk, k - s));
            g = blk == lo ? part : g + part;
        }
        acc = first ? g : acc + g;
        first = false;
    }
    if (alpha != 1.0f) acc = acc * alpha;
    if (beta != 0.0f) acc = std::fma(beta, dstOld, acc);
    return cvtDnnl(acc);
}

float gemmJitElement(const float* x, const float* w, int64_t k, int64_t kp, float alpha, float beta,
                     float dstOld)
{
    float c = 0.0f;
    for (int64_t s = 0; s < k; s += kp) {
        const float p = dpbf16Block(x + s, w + s, std::min(kp, k - s));
        c = s == 0 ? p * alpha : std::fma(alpha, p, c);
    }
    if (beta != 0.0f) c = std::fma(beta, dstOld, c);
    return cvtDnnl(c);
}

// Runs f(begin, end) over [0, count) on up to `threads` threads.
template <class F>
void parallelRows(int64_t count, int threads, F f)
{
    const int64_t t =
        std::max<int64_t>(1, std::min<int64_t>(threads > 0 ? threads : defaultGoldenThreads(), count));
    if (t <= 1) {
        f(int64_t(0), count);
        return;
    }
    std::vector<std::thread> pool;
    const int64_t per = divUp(count, t);
    for (int64_t i = 0; i < t; ++i) {
        const int64_t lo = i * per, hi = std::min(count, lo + per);
        if (lo < hi) pool.emplace_back([=] { f(lo, hi); });
    }
    for (std::thread& th : pool) th.join();
}

// One matrix through the 2-D kernels (fallback, brgemm, gemm:jit); out is M x N row-major.
void runMatrix(const Torch113Plan& p, int64_t M, int64_t N, int64_t K, float alpha, float beta,
               const float* a, const float* b, const float* c, float* out, int threads)
{
    ColumnMajor v = columnMajor(p.transC, M, N, K, a, b, beta != 0.0f ? c : nullptr);
    if (p.kernel == Torch113Kernel::OneDnnBrgemm || p.kernel == Torch113Kernel::OneDnnGemmJit) {
        flushAll(v.opA);
        flushAll(v.opBt);
    }
    const bool readC = !v.cc.empty();
    parallelRows(v.m, threads, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
            const float* rowA = v.opA.data() + i * v.k;
            for (int64_t j = 0; j < v.n; ++j) {
                const float* rowB = v.opBt.data() + j * v.k;  // column j of opB
                const float cOld = readC ? v.cc[size_t(i * v.n + j)] : 0.0f;
                float r = 0.0f;
                switch (p.kernel) {
                    case Torch113Kernel::FallbackDot: {  // §3.1 gemm_transa_
                        float s = 0.0f;
                        for (int64_t l = 0; l < v.k; ++l) s = s + rowA[l] * rowB[l];
                        const float t = alpha * s;
                        r = bf16(beta == 0.0f ? t : std::fma(beta, cOld, t));
                        break;
                    }
                    case Torch113Kernel::FallbackSeq: {  // §3.1 scale_, then bf16 scalar steps
                        float acc = beta == 0.0f ? 0.0f : beta == 1.0f ? cOld : bf16(cOld * bf16(beta));
                        for (int64_t l = 0; l < v.k; ++l) {
                            const float val = rowB[l] * alpha;
                            const float prod = bf16(rowA[l] * val);
                            acc = bf16(acc + prod);
                        }
                        r = acc;
                        break;
                    }
                    case Torch113Kernel::OneDnnBrgemm:  // x = src row j = opB column j, w = opA row i
                        r = brgemmElement(rowB, rowA, v.k, p.kBlock, p.kGroups, alpha, beta, cOld);
                        break;
                    case Torch113Kernel::OneDnnGemmJit:
                        r = gemmJitElement(rowB, rowA, v.k, p.kBlock, alpha, beta, cOld);
                        break;
                    case Torch113Kernel::Empty:
                    case Torch113Kernel::SmallBmm:
                        break;
                }
                if (p.transC)
                    out[j * N + i] = r;  // the column-major m x n result is the torch result transposed
                else
                    out[i * N + j] = r;
            }
        }
    });
}

}  // namespace

Torch113Plan planTorch113Gemm(const Torch113Call& call, const Torch113Environment& env)
{
    const bool batched = call.aten == Torch113Aten::Bmm || call.aten == Torch113Aten::Baddbmm;
    const size_t rank = batched ? 3 : 2;
    if (call.aStrides.size() != rank || call.bStrides.size() != rank || (!batched && call.batch != 1)) {
        Torch113Plan p;
        p.kernel = Torch113Kernel::FallbackSeq;
        p.floatAccumulation = false;
        p.description = "unknown kernel";
        p.notExact = "operand strides of the wrong rank";
        return p;
    }
    return batched ? planBatched(call, env) : planMatrix(call, env);
}

void runTorch113Gemm(const Torch113Call& call, const Torch113Plan& plan, const float* a, const float* b,
                     const float* c, float* out, int threads)
{
    const int64_t M = call.m, N = call.n, K = call.k;
    const int64_t outCount = call.batch * M * N;
    if (outCount == 0) return;
    const bool isBmm = call.aten == Torch113Aten::Bmm;
    const bool batched = isBmm || call.aten == Torch113Aten::Baddbmm;
    const float alpha = isBmm ? 1.0f : call.alpha, beta = isBmm ? 0.0f : call.beta;
    const float* cIn = call.hasC && !isBmm ? c : nullptr;
    if (plan.kernel == Torch113Kernel::Empty) {  // k = 0 (§2.1 / small kernel with no terms)
        for (int64_t e = 0; e < outCount; ++e) {
            float r = 0.0f;
            if (cIn && beta != 0.0f) r = batched ? bf16(cIn[e] * bf16(beta)) : bf16(cIn[e] * beta);
            out[e] = r;
        }
        return;
    }
    if (batched && plan.kernel == Torch113Kernel::OneDnnBrgemm && alpha == 0.0f) {
        for (int64_t e = 0; e < outCount; ++e) out[e] = cIn ? cIn[e] : 0.0f;  // §2.2: self, unscaled
        return;
    }
    for (int64_t bt = 0; bt < call.batch; ++bt) {
        const float* ab = a + bt * M * K;
        const float* bb = b + bt * K * N;
        const float* cb = cIn ? cIn + bt * M * N : nullptr;
        float* ob = out + bt * M * N;
        if (batched && plan.kernel == Torch113Kernel::OneDnnBrgemm) {  // §2.2: src = A[b], wei = B[b]
            std::vector<float> src(ab, ab + M * K), weiT(size_t(N * K));
            for (int64_t l = 0; l < K; ++l)
                for (int64_t j = 0; j < N; ++j) weiT[size_t(j * K + l)] = bb[l * N + j];
            flushAll(src);
            flushAll(weiT);
            parallelRows(M, threads, [&](int64_t lo, int64_t hi) {
                for (int64_t i = lo; i < hi; ++i)
                    for (int64_t j = 0; j < N; ++j)
                        ob[i * N + j] = brgemmElement(src.data() + i * K, weiT.data() + j * K, K, plan.kBlock,
                                                      plan.kGroups, alpha, beta, cb ? cb[i * N + j] : 0.0f);
            });
        } else if (plan.kernel == Torch113Kernel::SmallBmm) {  // §3.4
            const float al = bf16(alpha), be = bf16(beta);
            for (int64_t i = 0; i < M; ++i)
                for (int64_t j = 0; j < N; ++j) {
                    float r = isBmm || be == 0.0f ? 0.0f : bf16(cb[i * N + j] * be);
                    for (int64_t l = 0; l < K; ++l) {
                        const float x = isBmm ? ab[i * K + l] : bf16(al * ab[i * K + l]);
                        r = bf16(r + bf16(x * bb[l * N + j]));
                    }
                    ob[i * N + j] = r;
                }
        } else {
            runMatrix(plan, M, N, K, alpha, beta, ab, bb, cb, ob, threads);
        }
    }
}

}  // namespace faultline::golden
