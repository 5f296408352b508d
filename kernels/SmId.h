#pragma once
// The SM the calling thread runs on (PTX %smid), for the tile -> SM maps the golden kernels
// record, and the bound of those ids. Device code only.
#include <cstdint>

#if defined(__CUDACC__)
namespace faultline::cuda {

__device__ __forceinline__ int32_t currentSm()
{
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return int32_t(id);
}

// PTX %nsmid: an upper bound of %smid on this device. SM ids need not be contiguous, so this
// may exceed the multiprocessor count.
__device__ __forceinline__ int32_t smIdBound()
{
    uint32_t n;
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
    return int32_t(n);
}

}  // namespace faultline::cuda
#endif
