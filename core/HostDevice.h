#pragma once
// FL_HD marks functions shared by the CPU golden model and the CUDA kernels, so there is exactly
// one definition of each conversion and summation order.
#if defined(__CUDACC__)
#define FL_HD __host__ __device__ __forceinline__
#else
#define FL_HD inline
#endif
