// The golden attention kernel: AttentionGolden.h's three golden pieces (score chains, the softmax
// tree, the PV chains) evaluated by one warp per query row with the shared FL_HD formulas, so a
// healthy GPU gives the CPU golden's bits.
#include <cuda_runtime.h>

#include "GoldenKernels.h"
#include "SmId.h"
#include "core/golden/GoldenMath.h"
#include "core/golden/GoldenOrder.h"

namespace faultline::cuda {
namespace {

constexpr unsigned kFullMask = 0xFFFFFFFFu;

// The golden tree's lane combination (treeCombineMax / treeCombineSum) as shuffles; every lane
// gets lane 0's result.
__device__ __forceinline__ float warpTreeMax(float v)
{
    for (int off = golden::kTreeLanes / 2; off > 0; off /= 2)
        v = golden::goldenMax(v, __shfl_down_sync(kFullMask, v, off));
    return __shfl_sync(kFullMask, v, 0);
}

__device__ __forceinline__ float warpTreeSum(float v)
{
    for (int off = golden::kTreeLanes / 2; off > 0; off /= 2) v = v + __shfl_down_sync(kFullMask, v, off);
    return __shfl_sync(kFullMask, v, 0);
}

// One query row: lane l owns keys l, l+32, ... (the golden tree's lane of key j is j mod 32) and
// output columns l, l+32, ...
__device__ void attentionRow(const DeviceAttention& a, int64_t row, int lane, float* p)
{
    const int64_t h = row / a.sq, i = row % a.sq;
    const float* q = a.q + row * a.d;
    const float* k = a.k + h * a.sk * a.d;
    const float* v = a.v + h * a.sk * a.dv;
    const float negInf = floatFromBits(0xFF800000u);
    float m = negInf;
    for (int64_t j = lane; j < a.sk; j += golden::kTreeLanes) {
        const float s = (a.causal && j > i)
                            ? negInf
                            : golden::gemmEpilogue(golden::dotChain(q, 1, k + j * a.d, 1, a.d), a.scale, 0.0f,
                                                   0.0f, false);
        p[j] = s;
        m = golden::goldenMax(m, s);
    }
    m = warpTreeMax(m);
    float sum = 0.0f;
    for (int64_t j = lane; j < a.sk; j += golden::kTreeLanes) {
        const float e = golden::goldenExp(p[j] - m);
        p[j] = e;
        sum = sum + e;
    }
    sum = warpTreeSum(sum);
    for (int64_t j = lane; j < a.sk; j += golden::kTreeLanes) p[j] = golden::divRn(p[j], sum);
    __syncwarp();  // every lane reads the whole probability row below
    float* out = a.out + row * a.dv;
    for (int64_t c = lane; c < a.dv; c += golden::kTreeLanes)
        out[c] = golden::dotChain(p, 1, v + c, a.dv, a.sk);
    __syncwarp();  // the row is read by all lanes before the next band overwrites it
}

// One block (kSmallTile warps) per band of kSmallTile rows = one row of map tiles, grid-stride.
__global__ void goldenAttentionKernel(DeviceAttention a, TileGrid tg)
{
    const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
    float* p = a.scratch + (uint64_t(blockIdx.x) * kSmallTile + uint64_t(warp)) * uint64_t(a.sk);
    const uint64_t rows = uint64_t(a.heads) * uint64_t(a.sq);
    for (uint64_t band = blockIdx.x; band < tg.tileRows; band += gridDim.x) {
        const uint64_t row = band * kSmallTile + uint64_t(warp);
        if (row < rows) attentionRow(a, int64_t(row), lane, p);
        if (a.tileSm) {
            const int32_t sm = currentSm();
            for (uint64_t c = threadIdx.x; c < tg.tileCols; c += blockDim.x)
                a.tileSm[band * tg.tileCols + c] = sm;
        }
    }
}

}  // namespace

int launchGoldenAttention(const DeviceAttention& a, cudaStream_t stream)
{
    const uint64_t rows = uint64_t(a.heads > 0 ? a.heads : 0) * uint64_t(a.sq > 0 ? a.sq : 0);
    const View2d v{rows, uint64_t(a.dv > 0 ? a.dv : 0)};
    if (v.rows == 0 || v.cols == 0) return int(cudaSuccess);
    if (a.sk > 0 && !a.scratch) return int(cudaErrorInvalidValue);
    const TileGrid tg = tileGrid(v, kSmallTile);
    goldenAttentionKernel<<<attentionBlocks(rows, uint64_t(a.sk)), kSmallTile * 32, 0, stream>>>(a, tg);
    return int(cudaGetLastError());
}

}  // namespace faultline::cuda
