#include "GoldenKernels.h"

#include <cuda_runtime.h>

#include "SmId.h"
#include "core/golden/GoldenMath.h"
#include "core/golden/GoldenOrder.h"

namespace faultline::cuda {
namespace {

using golden::divRn;
using golden::fmaRn;
using golden::goldenExp;
using golden::goldenMax;
using golden::mulRn;
using golden::sqrtRn;

// ---- GEMM ---------------------------------------------------------------------------------
// Block: kGemmBlock x kGemmBlock outputs of one batch; thread (ty, tx) owns rows ty + 16 i and
// columns tx + 16 j (i, j < 8). k advances in ascending slices of kGemmBlockK staged in shared
// memory; each accumulator is one FMA chain over k ascending from +0.0f, carried across slices.
constexpr int kLanes = kGemmBlock / kGemmThreadTile;  // 16

// One kGemmBlock x kGemmBlock block of the output: columns from col0, rows from row0 of `batch`.
// Every thread of the block calls it with the same arguments (it synchronises the block).
__device__ void gemmBlock(const DeviceGemm& g, uint32_t smTile, int64_t batch, int64_t row0, int64_t col0)
{
    __shared__ float as[kGemmBlockK][kGemmBlock];
    __shared__ float bs[kGemmBlockK][kGemmBlock];
    __shared__ int32_t sm;
    const int tid = int(threadIdx.x);
    const int tx = tid % kLanes, ty = tid / kLanes;
    const float* a = g.a + (g.aOffsets ? g.aOffsets[batch] : 0);
    const float* b = g.b + (g.bOffsets ? g.bOffsets[batch] : 0);
    const bool aKFast = g.aColStride == 1;  // A's k index is contiguous: load along k
    const bool bColFast = g.bColStride == 1;

    float acc[kGemmThreadTile][kGemmThreadTile];
#pragma unroll
    for (int i = 0; i < kGemmThreadTile; ++i)
#pragma unroll
        for (int j = 0; j < kGemmThreadTile; ++j) acc[i][j] = 0.0f;

    constexpr int kLoads = kGemmBlock * kGemmBlockK / kGemmThreads;  // 4
    for (int64_t p0 = 0; p0 < g.k; p0 += kGemmBlockK) {
#pragma unroll
        for (int e = 0; e < kLoads; ++e) {
            const int idx = tid + e * kGemmThreads;
            const int r = aKFast ? idx / kGemmBlockK : idx % kGemmBlock;
            const int kk = aKFast ? idx % kGemmBlockK : idx / kGemmBlock;
            const int64_t gi = row0 + r, gp = p0 + kk;
            as[kk][r] = (gi < g.m && gp < g.k) ? a[gi * g.aRowStride + gp * g.aColStride] : 0.0f;
        }
#pragma unroll
        for (int e = 0; e < kLoads; ++e) {
            const int idx = tid + e * kGemmThreads;
            const int c = bColFast ? idx % kGemmBlock : idx / kGemmBlockK;
            const int kk = bColFast ? idx / kGemmBlock : idx % kGemmBlockK;
            const int64_t gj = col0 + c, gp = p0 + kk;
            bs[kk][c] = (gj < g.n && gp < g.k) ? b[gp * g.bRowStride + gj * g.bColStride] : 0.0f;
        }
        __syncthreads();
        // Zero-padded k beyond g.k must not enter the chain: fma(0, 0, acc) = acc exactly, except
        // that it would turn acc = -0 into +0; the chain starts at +0 and only a product can
        // make it -0, so the slice is cut at g.k instead.
        const int kEnd = int(g.k - p0 < kGemmBlockK ? g.k - p0 : kGemmBlockK);
        for (int kk = 0; kk < kEnd; ++kk) {
            float av[kGemmThreadTile], bv[kGemmThreadTile];
#pragma unroll
            for (int i = 0; i < kGemmThreadTile; ++i) av[i] = as[kk][ty + kLanes * i];
#pragma unroll
            for (int j = 0; j < kGemmThreadTile; ++j) bv[j] = bs[kk][tx + kLanes * j];
#pragma unroll
            for (int i = 0; i < kGemmThreadTile; ++i)
#pragma unroll
                for (int j = 0; j < kGemmThreadTile; ++j) acc[i][j] = fmaRn(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }

    float* out = g.out + batch * g.m * g.n;
    const float* c = g.readC ? g.c + batch * g.m * g.n : nullptr;
#pragma unroll
    for (int i = 0; i < kGemmThreadTile; ++i) {
        const int64_t gi = row0 + ty + kLanes * i;
        if (gi >= g.m) continue;
#pragma unroll
        for (int j = 0; j < kGemmThreadTile; ++j) {
            const int64_t gj = col0 + tx + kLanes * j;
            if (gj >= g.n) continue;
            const int64_t o = gi * g.n + gj;
            out[o] = golden::gemmEpilogue(acc[i][j], g.alpha, g.beta, c ? c[o] : 0.0f, g.readC);
        }
    }

    if (!g.tileSm) return;
    if (tid == 0) sm = currentSm();
    __syncthreads();
    // The map tiles inside this block (smTile divides kGemmBlock, and m when batch > 1).
    const int64_t rowFirst = batch * g.m + row0;
    const int64_t rowLast = batch * g.m + (row0 + kGemmBlock < g.m ? row0 + kGemmBlock : g.m) - 1;
    const int64_t colLast = (col0 + kGemmBlock < g.n ? col0 + kGemmBlock : g.n) - 1;
    const int64_t tileCols = (g.n + smTile - 1) / smTile;
    const int64_t tr0 = rowFirst / smTile, tr1 = rowLast / smTile;
    const int64_t tc0 = col0 / smTile, tc1 = colLast / smTile;
    const int64_t width = tc1 - tc0 + 1;
    const int64_t count = (tr1 - tr0 + 1) * width;
    for (int64_t t = tid; t < count; t += kGemmThreads)
        g.tileSm[(tr0 + t / width) * tileCols + tc0 + t % width] = sm;
    __syncthreads();  // `sm` is read before a strided block's next gemmBlock writes it
}

// Block (x, y, z) computes columns from x * kGemmBlock, rows from (rowBlockBase + y) * kGemmBlock
// of batch batchBase + z (the bases let a launch cover more than 65535 row blocks or batches).
__global__ void __launch_bounds__(kGemmThreads)
    goldenGemmKernel(DeviceGemm g, uint32_t smTile, int64_t batchBase, int64_t rowBlockBase)
{
    gemmBlock(g, smTile, batchBase + blockIdx.z, (rowBlockBase + int64_t(blockIdx.y)) * kGemmBlock,
              int64_t(blockIdx.x) * kGemmBlock);
}

// A capped grid (gridCap): gridDim.x blocks stride over all of `all`'s blocks in row-major order
// (column blocks fastest, then row blocks, then batches), so block b computes blocks b, b + N, ...
__global__ void __launch_bounds__(kGemmThreads)
    goldenGemmStridedKernel(DeviceGemm g, uint32_t smTile, GemmGrid all)
{
    const uint64_t total = uint64_t(all.x) * all.y * all.z;
    for (uint64_t t = blockIdx.x; t < total; t += gridDim.x) {
        const uint64_t x = t % all.x, y = (t / all.x) % all.y, z = t / (uint64_t(all.x) * all.y);
        gemmBlock(g, smTile, int64_t(z), int64_t(y) * kGemmBlock, int64_t(x) * kGemmBlock);
    }
}

__global__ void smIdBoundKernel(int32_t* out)
{
    *out = smIdBound();
}

// ---- element-wise -------------------------------------------------------------------------

__device__ __forceinline__ float applyElementwise(ElementwiseKind kind, float x, float y)
{
    switch (kind) {
        case ElementwiseKind::Add:
            return __fadd_rn(x, y);
        case ElementwiseKind::Mul:
            return __fmul_rn(x, y);
        case ElementwiseKind::GeluErf:
            return golden::geluErfGolden(x);
        case ElementwiseKind::GeluTanh:
            return golden::geluTanhGolden(x);
        case ElementwiseKind::Silu:
            return golden::siluGolden(x);
    }
    return x;
}

// One block (kSmallTile^2 threads) per tile of the 2-D view, grid-stride over tiles.
__global__ void goldenElementwiseKernel(ElementwiseKind kind, const float* x, const float* y, float* out,
                                        View2d v, TileGrid tg, int32_t* tileSm)
{
    const uint64_t ty = threadIdx.x / kSmallTile, tx = threadIdx.x % kSmallTile;
    for (uint64_t t = blockIdx.x; t < tg.tileRows * tg.tileCols; t += gridDim.x) {
        const uint64_t r = (t / tg.tileCols) * kSmallTile + ty;
        const uint64_t c = (t % tg.tileCols) * kSmallTile + tx;
        if (r < v.rows && c < v.cols) {
            const uint64_t e = r * v.cols + c;
            out[e] = applyElementwise(kind, x[e], y ? y[e] : 0.0f);
        }
        if (tileSm && threadIdx.x == 0) tileSm[t] = currentSm();
    }
}

// ---- row ops: one warp per row, the golden reduction tree ---------------------------------

constexpr unsigned kFullMask = 0xFFFFFFFFu;

// Lane partials are the golden tree's lanes (lane l adds elements l, l+32, ... in order);
// combining by shfl_down with offsets 16..1 is treeCombineSum. Every lane gets the result.
__device__ __forceinline__ float warpCombineSum(float v)
{
    for (int off = golden::kTreeLanes / 2; off > 0; off /= 2) v = v + __shfl_down_sync(kFullMask, v, off);
    return __shfl_sync(kFullMask, v, 0);
}

__device__ __forceinline__ float warpCombineMax(float v)
{
    for (int off = golden::kTreeLanes / 2; off > 0; off /= 2)
        v = goldenMax(v, __shfl_down_sync(kFullMask, v, off));
    return __shfl_sync(kFullMask, v, 0);
}

enum class RowKind { LayerNorm, RmsNorm, Softmax };

struct RowArgs {
    RowKind kind;
    const float* x;
    const float* gamma;
    const float* beta;
    float* y;
    View2d v;
    TileGrid tg;
    float eps;
    bool hasScale;
    float scale;
    int32_t* tileSm;
};

__device__ void runRow(const RowArgs& a, uint64_t row, int lane)
{
    const int64_t n = int64_t(a.v.cols);
    const float* x = a.x + row * a.v.cols;
    float* y = a.y + row * a.v.cols;
    if (a.kind == RowKind::LayerNorm) {
        float s = 0.0f;
        for (int64_t i = lane; i < n; i += golden::kTreeLanes) s = s + x[i];
        const float count = float(n);
        const float mean = divRn(warpCombineSum(s), count);
        float sq = 0.0f;
        for (int64_t i = lane; i < n; i += golden::kTreeLanes) {
            const float d = x[i] - mean;
            sq = sq + mulRn(d, d);
        }
        const float var = divRn(warpCombineSum(sq), count);
        const float rstd = divRn(1.0f, sqrtRn(var + a.eps));
        for (int64_t i = lane; i < n; i += golden::kTreeLanes)
            y[i] = fmaRn(mulRn(x[i] - mean, rstd), a.gamma[i], a.beta[i]);
    } else if (a.kind == RowKind::RmsNorm) {
        float sq = 0.0f;
        for (int64_t i = lane; i < n; i += golden::kTreeLanes) sq = sq + mulRn(x[i], x[i]);
        const float rstd = divRn(1.0f, sqrtRn(divRn(warpCombineSum(sq), float(n)) + a.eps));
        for (int64_t i = lane; i < n; i += golden::kTreeLanes) y[i] = mulRn(mulRn(x[i], rstd), a.gamma[i]);
    } else {
        float m = floatFromBits(0xFF800000u);
        for (int64_t i = lane; i < n; i += golden::kTreeLanes)
            m = goldenMax(m, a.hasScale ? mulRn(a.scale, x[i]) : x[i]);
        m = warpCombineMax(m);
        float s = 0.0f;
        for (int64_t i = lane; i < n; i += golden::kTreeLanes) {
            const float e = goldenExp((a.hasScale ? mulRn(a.scale, x[i]) : x[i]) - m);
            y[i] = e;
            s = s + e;
        }
        s = warpCombineSum(s);
        for (int64_t i = lane; i < n; i += golden::kTreeLanes) y[i] = divRn(y[i], s);
    }
}

// One block (kSmallTile warps) per band of kSmallTile rows = one row of map tiles.
__global__ void goldenRowKernel(RowArgs a)
{
    const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
    for (uint64_t band = blockIdx.x; band < a.tg.tileRows; band += gridDim.x) {
        const uint64_t row = band * kSmallTile + uint64_t(warp);
        if (row < a.v.rows) runRow(a, row, lane);
        if (a.tileSm) {
            const int32_t sm = currentSm();
            for (uint64_t c = threadIdx.x; c < a.tg.tileCols; c += blockDim.x)
                a.tileSm[band * a.tg.tileCols + c] = sm;
        }
    }
}

int launchRow(const RowArgs& args, cudaStream_t stream)
{
    if (args.v.rows == 0 || args.v.cols == 0) return int(cudaSuccess);
    goldenRowKernel<<<gridFor(args.tg.tileRows), kSmallTile * 32, 0, stream>>>(args);
    return int(cudaGetLastError());
}

}  // namespace

int launchGoldenGemm(const DeviceGemm& g, cudaStream_t stream)
{
    if (g.batch <= 0 || g.m <= 0 || g.n <= 0) return int(cudaSuccess);
    const uint32_t smTile = gemmSmTile(g.batch, g.m);
    if (gridCap() > 0) {
        const GemmGrid all = gemmGrid(g.batch, g.m, g.n);
        const uint64_t total = uint64_t(all.x) * all.y * all.z;
        goldenGemmStridedKernel<<<gridFor(total), kGemmThreads, 0, stream>>>(g, smTile, all);
        return int(cudaGetLastError());
    }
    for (const GemmLaunch& l : gemmLaunches(g.batch, g.m, g.n)) {
        goldenGemmKernel<<<dim3(l.blocks.x, l.blocks.y, l.blocks.z), kGemmThreads, 0, stream>>>(
            g, smTile, l.batchBase, l.rowBlockBase);
        if (const int rc = int(cudaGetLastError()); rc != 0) return rc;
    }
    return int(cudaSuccess);
}

int queryTileSmBound()
{
    int32_t* d = nullptr;
    if (cudaMalloc(reinterpret_cast<void**>(&d), sizeof(int32_t)) != cudaSuccess) return -1;
    smIdBoundKernel<<<1, 1>>>(d);
    int32_t bound = -1;
    const bool ok = cudaGetLastError() == cudaSuccess &&
                    cudaMemcpy(&bound, d, sizeof bound, cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaFree(d);
    return ok ? bound : -1;
}

int launchGoldenElementwise(ElementwiseKind kind, const float* x, const float* y, float* out, View2d v,
                            int32_t* tileSm, cudaStream_t stream)
{
    if (v.rows == 0 || v.cols == 0) return int(cudaSuccess);
    const TileGrid tg = tileGrid(v, kSmallTile);
    goldenElementwiseKernel<<<gridFor(tg.count()), kSmallTile * kSmallTile, 0, stream>>>(kind, x, y, out, v,
                                                                                         tg, tileSm);
    return int(cudaGetLastError());
}

int launchGoldenLayerNorm(const float* x, const float* gamma, const float* beta, float* y, View2d v,
                          float eps, int32_t* tileSm, cudaStream_t stream)
{
    return launchRow(
        {RowKind::LayerNorm, x, gamma, beta, y, v, tileGrid(v, kSmallTile), eps, false, 1.0f, tileSm},
        stream);
}

int launchGoldenRmsNorm(const float* x, const float* gamma, float* y, View2d v, float eps, int32_t* tileSm,
                        cudaStream_t stream)
{
    return launchRow(
        {RowKind::RmsNorm, x, gamma, nullptr, y, v, tileGrid(v, kSmallTile), eps, false, 1.0f, tileSm},
        stream);
}

int launchGoldenSoftmax(const float* x, float* y, View2d v, bool hasScale, float scale, int32_t* tileSm,
                        cudaStream_t stream)
{
    return launchRow(
        {RowKind::Softmax, x, nullptr, nullptr, y, v, tileGrid(v, kSmallTile), 0.0f, hasScale, scale, tileSm},
        stream);
}

}  // namespace faultline::cuda
