#pragma once
// Device-side comparison of two float tensors of the same 2-D view: how many elements differ in
// their bits, how many bits differ in total (XOR + popcount), the largest |a - b| computed in
// double as the host's compareRepetitions does (+inf where a NaN is involved), and the maximum
// per tile (as float).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "LaunchGeometry.h"
#include "core/Result.h"

namespace faultline::cuda {

inline constexpr uint32_t kCompareTile = 64;

struct CompareSummary {
    uint64_t mismatched = 0;   // elements whose bits differ
    uint64_t flippedBits = 0;  // sum over elements of popcount(bits(a) ^ bits(b))
    double maxAbsError = 0.0;
};

// Device accumulators the kernel adds into (zero them before the first launch).
struct CompareAccumulators {
    unsigned long long mismatched;
    unsigned long long flippedBits;
    unsigned long long maxAbsErrorBits;  // bits of a non-negative double, compared as integers
};

// a, b: device arrays of v.rows x v.cols floats. tileMax: device array of
// tileGrid(v, tile).count() floats (nullable), every entry written. accum: device pointer.
int launchCompare(const float* a, const float* b, View2d v, uint32_t tile, float* tileMax,
                  CompareAccumulators* accum, cudaStream_t stream);

// Host wrapper for device pointers on the current device: allocates the accumulators, launches,
// synchronises, copies back. `tileMax` (nullable) receives the per-tile maxima. `device` names
// the device in errors; `cudaCode` (nullable) receives the CUDA error code of a failure, so the
// caller can tell a sticky error (an earlier kernel's fault often surfaces here).
Result<CompareSummary> compareOnDevice(int device, const float* a, const float* b, View2d v, uint32_t tile,
                                       std::vector<float>* tileMax, cudaStream_t stream,
                                       int* cudaCode = nullptr);

}  // namespace faultline::cuda
