#pragma once
// The SM the calling thread runs on (PTX %smid), for the tile -> SM maps the golden kernels
// record. Device code only.
#include <cstdint>

#if defined(__CUDACC__)
namespace faultline::cuda {

__device__ __forceinline__ int32_t currentSm()
{
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return int32_t(id);
}

}  // namespace faultline::cuda
#endif
