#pragma once
// The golden CUDA kernels: bit-identical by construction to core's CPU golden model because they
// evaluate the same FL_HD formulas (core/golden/GoldenOrder.h, GoldenMath.h) in the same order:
// one sequential FMA chain per GEMM output over k ascending from +0.0f (no tensor cores, no
// split-k, no atomics), the golden reduction tree as one warp per row, the golden transcendental
// functions, the rank-ordered all_reduce.
// Built with --fmad=false; inputs and outputs are float (the caller widens narrow dtypes and
// rounds outputs exactly as the CPU glue does).
//
// Each kernel records the SM that computed every output tile into `tileSm` (nullable), in the
// ReplayOutput::tileSm layout over the 2-D view of the output (LaunchGeometry.h gives the tile).
// Pointers are device pointers; the functions launch on `stream` and return the launch's
// cudaError_t as int (0 = cudaSuccess); execution errors surface at the next synchronisation.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "LaunchGeometry.h"

namespace faultline::cuda {

struct DeviceGemm {
    int64_t batch = 1, m = 0, n = 0, k = 0;
    const float* a = nullptr;
    int64_t aRowStride = 0, aColStride = 0;
    const int64_t* aOffsets = nullptr;  // batch entries, or nullptr for all zero
    const float* b = nullptr;
    int64_t bRowStride = 0, bColStride = 0;
    const int64_t* bOffsets = nullptr;
    const float* c = nullptr;  // batch x m x n, already broadcast; read only when readC
    bool readC = false;
    float alpha = 1.0f, beta = 0.0f;
    float* out = nullptr;       // batch x m x n
    int32_t* tileSm = nullptr;  // gemmTileMap({batch*m, n}, batch, m).count() entries, or nullptr
};

int launchGoldenGemm(const DeviceGemm& g, cudaStream_t stream);

// The bound of the SM ids the kernels record on the current device (PTX %nsmid, which may
// exceed the multiprocessor count); -1 when it cannot be read.
int queryTileSmBound();

enum class ElementwiseKind { Add, Mul, GeluErf, GeluTanh, Silu };

// out = f(x) (or x + y for Add, x * y for Mul) over rows x cols; tileSm has tileGrid(v, kSmallTile) entries.
int launchGoldenElementwise(ElementwiseKind kind, const float* x, const float* y, float* out, View2d v,
                            int32_t* tileSm, cudaStream_t stream);

// Row ops over the last axis (v.cols = n), one warp per row; tileSm as for element-wise.
int launchGoldenLayerNorm(const float* x, const float* gamma, const float* beta, float* y, View2d v,
                          float eps, int32_t* tileSm, cudaStream_t stream);
int launchGoldenRmsNorm(const float* x, const float* gamma, float* y, View2d v, float eps, int32_t* tileSm,
                        cudaStream_t stream);
int launchGoldenSoftmax(const float* x, float* y, View2d v, bool hasScale, float scale, int32_t* tileSm,
                        cudaStream_t stream);

// Scaled dot-product attention, core/golden/AttentionGolden.h's formula: q [heads, sq, d],
// k [heads, sk, d], v [heads, sk, dv], out [heads, sq, dv] (heads = batch x heads), contiguous.
// One warp per query row: its scores (one FMA chain over d per key, then mulRn(scale, .), -inf
// above the diagonal when causal), the golden softmax tree over the row, then one FMA chain per
// output column over all sk keys. `scratch` holds attentionScratchFloats(rows, sk) floats (the
// warps' probability rows); tileSm as for the row ops (tileGrid over rows x dv, kSmallTile).
struct DeviceAttention {
    int64_t heads = 0, sq = 0, sk = 0, d = 0, dv = 0;
    const float* q = nullptr;
    const float* k = nullptr;
    const float* v = nullptr;
    float* out = nullptr;
    float scale = 1.0f;
    bool causal = false;
    float* scratch = nullptr;
    int32_t* tileSm = nullptr;
};

int launchGoldenAttention(const DeviceAttention& a, cudaStream_t stream);

// all_reduce over `rankCount` device arrays of v.rows x v.cols floats, in rank order
// (core/golden/AllReduceGolden.h): acc = rank 0; acc = acc (op) rank r for r = 1, 2, ...
// `ranks` is a device array of rankCount device pointers; tileSm as for element-wise.
enum class ReduceKind { Sum, Max, Min };

int launchGoldenAllReduce(ReduceKind kind, const float* const* ranks, int32_t rankCount, float* out, View2d v,
                          int32_t* tileSm, cudaStream_t stream);

// all_gather and broadcast (core/golden/CollectiveGolden.h): out (v.rows x v.cols floats) is the
// `rankCount` device arrays of `perRank` floats each, concatenated in rank order; broadcast
// passes the root's array alone. `ranks` is a device array of device pointers; tileSm as for
// element-wise. reduce_scatter runs launchGoldenAllReduce (each rank records its block).
int launchGoldenGather(const float* const* ranks, int32_t rankCount, uint64_t perRank, float* out, View2d v,
                       int32_t* tileSm, cudaStream_t stream);

}  // namespace faultline::cuda
