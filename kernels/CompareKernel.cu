#include "CompareKernel.h"

#include <cuda_runtime.h>

#include <cstring>

#include "CudaRuntime.h"
#include "core/FloatFormats.h"

namespace faultline::cuda {
namespace {

constexpr int kCompareThreads = 256;

// |x - y| of two float bit patterns, in double (exact for most pairs, rounded once otherwise:
// the host's fabs(double(x) - double(y))); +inf where a NaN is involved and the bits differ.
__device__ __forceinline__ double absError(uint32_t x, uint32_t y)
{
    if (x == y) return 0.0;
    const bool nx = (x & 0x7FFFFFFFu) > 0x7F800000u, ny = (y & 0x7FFFFFFFu) > 0x7F800000u;
    if (nx || ny) return __longlong_as_double(0x7FF0000000000000ll);
    const double d = fabs(__dsub_rn(double(__uint_as_float(x)), double(__uint_as_float(y))));
    return d != d ? __longlong_as_double(0x7FF0000000000000ll) : d;
}

template <int FixedTile>
__global__ void compareKernel(const uint32_t* a, const uint32_t* b, View2d v, TileGrid tg, float* tileMax,
                              CompareAccumulators* accum)
{
    __shared__ unsigned long long sMis[kCompareThreads / 32], sBits[kCompareThreads / 32];
    __shared__ double sMax[kCompareThreads / 32];
    const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
    const uint64_t perTile = uint64_t(tg.tile) * tg.tile;
    unsigned long long mis = 0, bits = 0;
    double blockMax = 0.0;
    for (uint64_t t = blockIdx.x; t < tg.tileRows * tg.tileCols; t += gridDim.x) {
        const uint64_t r0 = (t / tg.tileCols) * tg.tile, c0 = (t % tg.tileCols) * tg.tile;
        double m = 0.0;
        // FixedTile > 0: the tile edge is a compile-time constant (no division per element).
        const uint32_t tile = FixedTile > 0 ? uint32_t(FixedTile) : tg.tile;
        for (uint32_t i = threadIdx.x; i < uint32_t(perTile); i += kCompareThreads) {
            const uint32_t ir = i / tile;
            const uint64_t r = r0 + ir, c = c0 + (i - ir * tile);
            if (r >= v.rows || c >= v.cols) continue;
            const uint64_t e = r * v.cols + c;
            const uint32_t x = a[e], y = b[e];
            const uint32_t diff = x ^ y;
            mis += diff != 0;
            bits += __popc(diff);
            m = fmax(m, absError(x, y));
        }
        for (int off = 16; off > 0; off /= 2) m = fmax(m, __shfl_down_sync(0xFFFFFFFFu, m, off));
        if (lane == 0) sMax[warp] = m;
        __syncthreads();
        if (threadIdx.x == 0) {
            double tm = 0.0;
            for (int w = 0; w < kCompareThreads / 32; ++w) tm = fmax(tm, sMax[w]);
            if (tileMax) tileMax[t] = float(tm);
            blockMax = fmax(blockMax, tm);
        }
        __syncthreads();
    }
    for (int off = 16; off > 0; off /= 2) {
        mis += __shfl_down_sync(0xFFFFFFFFu, mis, off);
        bits += __shfl_down_sync(0xFFFFFFFFu, bits, off);
    }
    if (lane == 0) {
        sMis[warp] = mis;
        sBits[warp] = bits;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long tm = 0, tb = 0;
        for (int w = 0; w < kCompareThreads / 32; ++w) {
            tm += sMis[w];
            tb += sBits[w];
        }
        if (tm) atomicAdd(&accum->mismatched, tm);
        if (tb) atomicAdd(&accum->flippedBits, tb);
        if (blockMax > 0.0)
            atomicMax(&accum->maxAbsErrorBits,
                      static_cast<unsigned long long>(__double_as_longlong(blockMax)));
    }
}

}  // namespace

int launchCompare(const float* a, const float* b, View2d v, uint32_t tile, float* tileMax,
                  CompareAccumulators* accum, cudaStream_t stream)
{
    if (v.rows == 0 || v.cols == 0 || tile == 0) return int(cudaSuccess);
    if (uint64_t(tile) * tile > 0xFFFFFFFFull) return int(cudaErrorInvalidValue);
    const TileGrid tg = tileGrid(v, tile);
    const auto* x = reinterpret_cast<const uint32_t*>(a);
    const auto* y = reinterpret_cast<const uint32_t*>(b);
    if (tile == kCompareTile)
        compareKernel<int(kCompareTile)>
            <<<gridFor(tg.count()), kCompareThreads, 0, stream>>>(x, y, v, tg, tileMax, accum);
    else
        compareKernel<0><<<gridFor(tg.count()), kCompareThreads, 0, stream>>>(x, y, v, tg, tileMax, accum);
    return int(cudaGetLastError());
}

Result<CompareSummary> compareOnDevice(int device, const float* a, const float* b, View2d v, uint32_t tile,
                                       std::vector<float>* tileMax, cudaStream_t stream, int* cudaCode)
{
    if (cudaCode) *cudaCode = 0;
    if (tile == 0) return Error{"cuda:" + std::to_string(device) + ": compare: tile edge 0"};
    const TileGrid tg = tileGrid(v, tile);
    CompareAccumulators* accum = nullptr;
    float* dTiles = nullptr;
    auto cleanup = [&] {
        cudaFree(accum);
        cudaFree(dTiles);
    };
    int rc = int(cudaMalloc(reinterpret_cast<void**>(&accum), sizeof(CompareAccumulators)));
    if (rc == 0 && tileMax && tg.count() > 0)
        rc = int(cudaMalloc(reinterpret_cast<void**>(&dTiles), tg.count() * sizeof(float)));
    if (rc == 0) rc = int(cudaMemsetAsync(accum, 0, sizeof(CompareAccumulators), stream));
    if (rc == 0) rc = launchCompare(a, b, v, tile, dTiles, accum, stream);
    CompareAccumulators host{};
    if (rc == 0) rc = int(cudaMemcpyAsync(&host, accum, sizeof host, cudaMemcpyDeviceToHost, stream));
    if (rc == 0 && dTiles) {
        tileMax->resize(tg.count());
        rc = int(cudaMemcpyAsync(tileMax->data(), dTiles, tg.count() * sizeof(float), cudaMemcpyDeviceToHost,
                                 stream));
    }
    if (rc == 0) rc = int(cudaStreamSynchronize(stream));
    cleanup();
    if (rc != 0) {
        if (cudaCode) *cudaCode = rc;
        return cudaErrorFor(device, "compare", rc);
    }
    if (tileMax && !dTiles) tileMax->clear();
    CompareSummary s;
    s.mismatched = host.mismatched;
    s.flippedBits = host.flippedBits;
    std::memcpy(&s.maxAbsError, &host.maxAbsErrorBits, sizeof s.maxAbsError);
    return s;
}

}  // namespace faultline::cuda
