#include "GemmGolden.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FL_GOLDEN_X86 1
#else
#define FL_GOLDEN_X86 0
#endif

namespace faultline::golden {
namespace {

// Register tile and cache blocks (Goto/BLIS layout tuned for AVX2 cores: 12 ymm accumulators).
constexpr int64_t kMr = 6;
constexpr int64_t kNr = 16;
constexpr int64_t kMc = 144;   // rows of A packed at once (multiple of kMr), ~147 KB: L2
constexpr int64_t kKc = 256;   // k block; accumulators are carried across blocks in `out`
constexpr int64_t kNc = 3072;  // columns of B packed at once (multiple of kNr), ~3 MB: L3

// One micro-tile: c[r][j] (r < kMr, j < kNr, row stride ldc) continues its chains over kc
// packed k steps: c = accumulate ? c : +0.0f; for p: c[r][j] = fma(ap[p][r], bp[p][j], c[r][j]).
using MicroKernel = void (*)(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                             bool accumulate);

void microKernelPortable(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, bool accumulate)
{
    float acc[kMr][kNr];
    for (int64_t r = 0; r < kMr; ++r)
        for (int64_t j = 0; j < kNr; ++j) acc[r][j] = accumulate ? c[r * ldc + j] : 0.0f;
    for (int64_t p = 0; p < kc; ++p) {
        const float* a = ap + p * kMr;
        const float* b = bp + p * kNr;
        for (int64_t r = 0; r < kMr; ++r)
            for (int64_t j = 0; j < kNr; ++j) acc[r][j] = std::fma(a[r], b[j], acc[r][j]);
    }
    for (int64_t r = 0; r < kMr; ++r)
        for (int64_t j = 0; j < kNr; ++j) c[r * ldc + j] = acc[r][j];
}

#if FL_GOLDEN_X86
__attribute__((target("avx2,fma"))) void microKernelAvx2(int64_t kc, const float* ap, const float* bp,
                                                         float* c, int64_t ldc, bool accumulate)
{
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    if (accumulate) {
        c00 = _mm256_loadu_ps(c + 0 * ldc);
        c01 = _mm256_loadu_ps(c + 0 * ldc + 8);
        c10 = _mm256_loadu_ps(c + 1 * ldc);
        c11 = _mm256_loadu_ps(c + 1 * ldc + 8);
        c20 = _mm256_loadu_ps(c + 2 * ldc);
        c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
        c30 = _mm256_loadu_ps(c + 3 * ldc);
        c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
        c40 = _mm256_loadu_ps(c + 4 * ldc);
        c41 = _mm256_loadu_ps(c + 4 * ldc + 8);
        c50 = _mm256_loadu_ps(c + 5 * ldc);
        c51 = _mm256_loadu_ps(c + 5 * ldc + 8);
    } else {
        c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
    }
    for (int64_t p = 0; p < kc; ++p) {
        const __m256 b0 = _mm256_loadu_ps(bp);
        const __m256 b1 = _mm256_loadu_ps(bp + 8);
        __m256 a = _mm256_broadcast_ss(ap + 0);
        c00 = _mm256_fmadd_ps(a, b0, c00);
        c01 = _mm256_fmadd_ps(a, b1, c01);
        a = _mm256_broadcast_ss(ap + 1);
        c10 = _mm256_fmadd_ps(a, b0, c10);
        c11 = _mm256_fmadd_ps(a, b1, c11);
        a = _mm256_broadcast_ss(ap + 2);
        c20 = _mm256_fmadd_ps(a, b0, c20);
        c21 = _mm256_fmadd_ps(a, b1, c21);
        a = _mm256_broadcast_ss(ap + 3);
        c30 = _mm256_fmadd_ps(a, b0, c30);
        c31 = _mm256_fmadd_ps(a, b1, c31);
        a = _mm256_broadcast_ss(ap + 4);
        c40 = _mm256_fmadd_ps(a, b0, c40);
        c41 = _mm256_fmadd_ps(a, b1, c41);
        a = _mm256_broadcast_ss(ap + 5);
        c50 = _mm256_fmadd_ps(a, b0, c50);
        c51 = _mm256_fmadd_ps(a, b1, c51);
        ap += kMr;
        bp += kNr;
    }
    _mm256_storeu_ps(c + 0 * ldc, c00);
    _mm256_storeu_ps(c + 0 * ldc + 8, c01);
    _mm256_storeu_ps(c + 1 * ldc, c10);
    _mm256_storeu_ps(c + 1 * ldc + 8, c11);
    _mm256_storeu_ps(c + 2 * ldc, c20);
    _mm256_storeu_ps(c + 2 * ldc + 8, c21);
    _mm256_storeu_ps(c + 3 * ldc, c30);
    _mm256_storeu_ps(c + 3 * ldc + 8, c31);
    _mm256_storeu_ps(c + 4 * ldc, c40);
    _mm256_storeu_ps(c + 4 * ldc + 8, c41);
    _mm256_storeu_ps(c + 5 * ldc, c50);
    _mm256_storeu_ps(c + 5 * ldc + 8, c51);
}

bool cpuHasAvx2Fma()
{
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }();
    return has;
}
#else
bool cpuHasAvx2Fma()
{
    return false;
}
#endif

MicroKernel selectKernel(GemmKernel kind)
{
#if FL_GOLDEN_X86
    if (kind != GemmKernel::Portable && cpuHasAvx2Fma()) return microKernelAvx2;
#else
    (void)kind;
#endif
    return microKernelPortable;
}

// A 64-byte aligned float buffer, grown on demand, owned by one worker.
class PackBuffer {
public:
    float* get(size_t count)
    {
        if (count > m_capacity) {
            m_storage.reset(new float[count + 16]);
            m_capacity = count;
        }
        auto addr = reinterpret_cast<uintptr_t>(m_storage.get());
        return reinterpret_cast<float*>((addr + 63) & ~uintptr_t(63));
    }

private:
    std::unique_ptr<float[]> m_storage;
    size_t m_capacity = 0;
};

// Rows [i0, i0+mc) x k [p0, p0+kc) of A into micro-panels of kMr rows, k-major, zero-padded.
void packA(const float* a, int64_t rs, int64_t cs, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst)
{
    for (int64_t ir = 0; ir < mc; ir += kMr) {
        const int64_t rows = std::min(kMr, mc - ir);
        float* panel = dst + ir * kc;
        for (int64_t p = 0; p < kc; ++p) {
            const float* src = a + (i0 + ir) * rs + (p0 + p) * cs;
            float* out = panel + p * kMr;
            int64_t r = 0;
            for (; r < rows; ++r) out[r] = src[r * rs];
            for (; r < kMr; ++r) out[r] = 0.0f;
        }
    }
}

// k [p0, p0+kc) x columns [j0, j0+nc) of B into micro-panels of kNr columns, k-major, padded.
void packB(const float* b, int64_t rs, int64_t cs, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst)
{
    for (int64_t jr = 0; jr < nc; jr += kNr) {
        const int64_t cols = std::min(kNr, nc - jr);
        float* panel = dst + jr * kc;
        for (int64_t p = 0; p < kc; ++p) {
            const float* src = b + (p0 + p) * rs + (j0 + jr) * cs;
            float* out = panel + p * kNr;
            int64_t j = 0;
            if (cs == 1 && cols == kNr) {
                std::memcpy(out, src, sizeof(float) * kNr);
                continue;
            }
            for (; j < cols; ++j) out[j] = src[j * cs];
            for (; j < kNr; ++j) out[j] = 0.0f;
        }
    }
}

struct Task {
    int64_t batch, i0, i1, j0, j1;
};

struct Worker {
    PackBuffer aBuf, bBuf;
};

// One output block of one batch, all of k, in ascending k blocks.
void runTask(const GemmOperands& g, const Task& t, MicroKernel kernel, Worker& w)
{
    const float* a = g.a + (g.aOffsets.empty() ? 0 : g.aOffsets[size_t(t.batch)]);
    const float* b = g.b + (g.bOffsets.empty() ? 0 : g.bOffsets[size_t(t.batch)]);
    float* out = g.out + t.batch * g.m * g.n;
    const int64_t ldc = g.n;
    if (g.k == 0) {
        for (int64_t i = t.i0; i < t.i1; ++i)
            for (int64_t j = t.j0; j < t.j1; ++j) out[i * ldc + j] = 0.0f;
        return;
    }
    float edge[kMr * kNr];
    for (int64_t jc = t.j0; jc < t.j1; jc += kNc) {
        const int64_t nc = std::min(kNc, t.j1 - jc);
        const int64_t ncPadded = (nc + kNr - 1) / kNr * kNr;
        for (int64_t pc = 0; pc < g.k; pc += kKc) {
            const int64_t kc = std::min(kKc, g.k - pc);
            const bool accumulate = pc > 0;
            float* bp = w.bBuf.get(size_t(ncPadded * kc));
            packB(b, g.bRowStride, g.bColStride, pc, kc, jc, nc, bp);
            for (int64_t ic = t.i0; ic < t.i1; ic += kMc) {
                const int64_t mc = std::min(kMc, t.i1 - ic);
                const int64_t mcPadded = (mc + kMr - 1) / kMr * kMr;
                float* ap = w.aBuf.get(size_t(mcPadded * kc));
                packA(a, g.aRowStride, g.aColStride, ic, mc, pc, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += kNr) {
                    const int64_t cols = std::min(kNr, nc - jr);
                    for (int64_t ir = 0; ir < mc; ir += kMr) {
                        const int64_t rows = std::min(kMr, mc - ir);
                        float* c = out + (ic + ir) * ldc + (jc + jr);
                        if (rows == kMr && cols == kNr) {
                            kernel(kc, ap + ir * kc, bp + jr * kc, c, ldc, accumulate);
                            continue;
                        }
                        // Edge tile: run on a full scratch tile, copy the valid part.
                        for (int64_t r = 0; r < kMr; ++r)
                            for (int64_t j = 0; j < kNr; ++j)
                                edge[r * kNr + j] =
                                    (accumulate && r < rows && j < cols) ? c[r * ldc + j] : 0.0f;
                        kernel(kc, ap + ir * kc, bp + jr * kc, edge, kNr, accumulate);
                        for (int64_t r = 0; r < rows; ++r)
                            for (int64_t j = 0; j < cols; ++j) c[r * ldc + j] = edge[r * kNr + j];
                    }
                }
            }
        }
    }
}

// Splits the output into at least `threads` tasks when it can: whole batches when there are
// enough of them, else each batch cut along its longer dimension (in whole register tiles).
std::vector<Task> makeTasks(const GemmOperands& g, int threads)
{
    std::vector<Task> tasks;
    const int64_t perBatch = g.batch >= threads ? 1 : (threads + g.batch - 1) / g.batch;
    const int64_t mTiles = (g.m + kMr - 1) / kMr;
    const int64_t nTiles = (g.n + kNr - 1) / kNr;
    const bool splitM = mTiles >= nTiles;
    const int64_t tiles = splitM ? mTiles : nTiles;
    const int64_t parts = std::max<int64_t>(1, std::min(perBatch, tiles));
    for (int64_t bi = 0; bi < g.batch; ++bi) {
        for (int64_t part = 0; part < parts; ++part) {
            const int64_t t0 = tiles * part / parts;
            const int64_t t1 = tiles * (part + 1) / parts;
            Task t{bi, 0, g.m, 0, g.n};
            if (splitM) {
                t.i0 = t0 * kMr;
                t.i1 = std::min(g.m, t1 * kMr);
            } else {
                t.j0 = t0 * kNr;
                t.j1 = std::min(g.n, t1 * kNr);
            }
            if (t.i0 < t.i1 && t.j0 < t.j1) tasks.push_back(t);
        }
    }
    return tasks;
}

}  // namespace

int defaultGoldenThreads()
{
    const unsigned hc = std::thread::hardware_concurrency();
    return hc == 0 ? 1 : int(hc);
}

std::string_view activeGemmKernelName()
{
    return cpuHasAvx2Fma() ? "avx2-fma" : "portable";
}

void gemmAccumulateGolden(const GemmOperands& g, const GemmRunOptions& options)
{
    if (g.batch <= 0 || g.m <= 0 || g.n <= 0) return;
    const MicroKernel kernel = selectKernel(options.kernel);
    int threads = options.threads > 0 ? options.threads : defaultGoldenThreads();
    // Below ~4 MFLOP a thread costs more than it saves.
    const double flops = 2.0 * double(g.batch) * double(g.m) * double(g.n) * double(g.k);
    if (flops < 4.0e6) threads = 1;
    const std::vector<Task> tasks = makeTasks(g, threads);
    threads = int(std::min<size_t>(size_t(threads), tasks.size()));
    std::atomic<size_t> next{0};
    auto work = [&] {
        Worker w;
        for (size_t i = next.fetch_add(1); i < tasks.size(); i = next.fetch_add(1))
            runTask(g, tasks[i], kernel, w);
    };
    if (threads <= 1) {
        work();
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(size_t(threads - 1));
    for (int t = 1; t < threads; ++t) {
        try {
            pool.emplace_back(work);
        } catch (...) {
            break;  // no more threads to be had: the ones running (and this one) do the rest
        }
    }
    work();
    for (auto& th : pool) th.join();
}

}  // namespace faultline::golden
