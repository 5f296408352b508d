// The golden all_reduce kernel on one device: every rank's input is on this device and each
// output element is reduced in rank order (AllReduceGolden.h), never with atomics.
#include <cuda_runtime.h>

#include "GoldenKernels.h"
#include "SmId.h"
#include "core/golden/GoldenOrder.h"

namespace faultline::cuda {
namespace {

__device__ __forceinline__ float reduceStep(ReduceKind kind, float acc, float x)
{
    switch (kind) {
        case ReduceKind::Sum:
            return acc + x;
        case ReduceKind::Max:
            return golden::goldenMax(acc, x);
        case ReduceKind::Min:
            return golden::goldenMin(acc, x);
    }
    return acc;
}

// One block (kSmallTile^2 threads) per tile of the 2-D view, grid-stride over tiles.
__global__ void goldenAllReduceKernel(ReduceKind kind, const float* const* ranks, int32_t rankCount,
                                      float* out, View2d v, TileGrid tg, int32_t* tileSm)
{
    const uint64_t ty = threadIdx.x / kSmallTile, tx = threadIdx.x % kSmallTile;
    for (uint64_t t = blockIdx.x; t < tg.tileRows * tg.tileCols; t += gridDim.x) {
        const uint64_t r = (t / tg.tileCols) * kSmallTile + ty;
        const uint64_t c = (t % tg.tileCols) * kSmallTile + tx;
        if (r < v.rows && c < v.cols) {
            const uint64_t e = r * v.cols + c;
            float acc = ranks[0][e];
            for (int32_t k = 1; k < rankCount; ++k) acc = reduceStep(kind, acc, ranks[k][e]);
            out[e] = acc;
        }
        if (tileSm && threadIdx.x == 0) tileSm[t] = currentSm();
    }
}

}  // namespace

int launchGoldenAllReduce(ReduceKind kind, const float* const* ranks, int32_t rankCount, float* out, View2d v,
                          int32_t* tileSm, cudaStream_t stream)
{
    if (v.rows == 0 || v.cols == 0) return int(cudaSuccess);
    if (rankCount < 1 || !ranks) return int(cudaErrorInvalidValue);
    const TileGrid tg = tileGrid(v, kSmallTile);
    goldenAllReduceKernel<<<gridFor(tg.count()), kSmallTile * kSmallTile, 0, stream>>>(kind, ranks, rankCount,
                                                                                       out, v, tg, tileSm);
    return int(cudaGetLastError());
}

}  // namespace faultline::cuda
