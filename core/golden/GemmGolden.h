#pragma once
// The golden GEMM core: float32 operands, one FMA chain per output element over k ascending from
// +0.0f (GoldenOrder.h's dotChain), computed fast. The op layer (OpRegistry) widens bf16/fp16/fp8
// inputs to float exactly, applies the epilogue (gemmEpilogue) and rounds to out_dtype.
//
// How it stays in the defined order while running near BLAS speed: a register-tiled micro-kernel
// where every SIMD lane holds a different output element (vectorised over j, a_ik broadcast), so
// each element's chain stays sequential in k; k is blocked in ascending blocks that carry the
// float accumulators through memory (a float store/reload is exact), never summing partial blocks;
// A and B panels are packed; output tiles are spread over std::threads. The AVX2+FMA micro-kernel
// is chosen at run time (__builtin_cpu_supports); the portable one uses std::fma and gives the
// same bits, slower.
#include <cstdint>
#include <string_view>
#include <vector>

namespace faultline::golden {

// acc[b][i][j] = chain_{p < k} A_b(i, p) * B_b(p, j) for b < batch, i < m, j < n, where
//   A_b(i, p) = a[aOffsets[b] + i * aRowStride + p * aColStride]   (aOffsets empty: offset 0)
//   B_b(p, j) = b[bOffsets[b] + p * bRowStride + j * bColStride]
// and acc is `out`, batch x m x n, row-major and contiguous. Strides are in elements and may be
// anything (a transposed operand is just swapped strides; a broadcast batch repeats an offset).
struct GemmOperands {
    int64_t batch = 1, m = 0, n = 0, k = 0;
    const float* a = nullptr;
    int64_t aRowStride = 0, aColStride = 0;
    std::vector<int64_t> aOffsets;
    const float* b = nullptr;
    int64_t bRowStride = 0, bColStride = 0;
    std::vector<int64_t> bOffsets;
    float* out = nullptr;
};

enum class GemmKernel {
    Auto,      // AVX2+FMA where the CPU has it, else Portable
    Portable,  // std::fma, any CPU
    Avx2Fma,   // falls back to Portable where the CPU lacks AVX2/FMA
};

struct GemmRunOptions {
    int threads = 0;  // 0: std::thread::hardware_concurrency()
    GemmKernel kernel = GemmKernel::Auto;
};

// Computes the accumulators. Bits depend only on the operands, never on threads or kernel.
void gemmAccumulateGolden(const GemmOperands& g, const GemmRunOptions& options = {});

// The kernel `Auto` resolves to on this CPU: "avx2-fma" or "portable".
std::string_view activeGemmKernelName();

// The number of threads `threads = 0` means (at least 1).
int defaultGoldenThreads();

}  // namespace faultline::golden
