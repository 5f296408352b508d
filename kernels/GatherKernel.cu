// The golden data-movement kernel of all_gather and broadcast on one device: output element e
// is element e % perRank of rank e / perRank's input (CollectiveGolden.h). No arithmetic: the
// bits of every element are the source rank's.
#include <cuda_runtime.h>

#include "GoldenKernels.h"
#include "SmId.h"

namespace faultline::cuda {
namespace {

// One block (kSmallTile^2 threads) per tile of the 2-D view, grid-stride over tiles.
__global__ void goldenGatherKernel(const float* const* ranks, int32_t rankCount, uint64_t perRank, float* out,
                                   View2d v, TileGrid tg, int32_t* tileSm)
{
    const uint64_t ty = threadIdx.x / kSmallTile, tx = threadIdx.x % kSmallTile;
    for (uint64_t t = blockIdx.x; t < tg.tileRows * tg.tileCols; t += gridDim.x) {
        const uint64_t r = (t / tg.tileCols) * kSmallTile + ty;
        const uint64_t c = (t % tg.tileCols) * kSmallTile + tx;
        if (r < v.rows && c < v.cols) {
            const uint64_t e = r * v.cols + c;
            const uint64_t source = e / perRank;
            if (source < uint64_t(rankCount)) out[e] = ranks[source][e % perRank];
        }
        if (tileSm && threadIdx.x == 0) tileSm[t] = currentSm();
    }
}

}  // namespace

int launchGoldenGather(const float* const* ranks, int32_t rankCount, uint64_t perRank, float* out, View2d v,
                       int32_t* tileSm, cudaStream_t stream)
{
    if (v.rows == 0 || v.cols == 0) return int(cudaSuccess);
    if (rankCount < 1 || !ranks || perRank == 0) return int(cudaErrorInvalidValue);
    const TileGrid tg = tileGrid(v, kSmallTile);
    goldenGatherKernel<<<gridFor(tg.count()), kSmallTile * kSmallTile, 0, stream>>>(ranks, rankCount, perRank,
                                                                                    out, v, tg, tileSm);
    return int(cudaGetLastError());
}

}  // namespace faultline::cuda
