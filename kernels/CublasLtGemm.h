#pragma once
// Production replay of a gemm through cuBLASLt (cublasLtMatmul), with the settings the trace
// recorded (CudaOpSettings.h): the tensors' own data types, the compute type, TF32 on/off, the
// heuristic's N-th algorithm and a per-stream workspace.
//
// Layout: faultline's operands are row-major; cuBLASLt's are column-major. D (m x n, row-major)
// is, read column-major, D^T (n x m) = op(B)^T op(A)^T, so cuBLASLt's "A" is our B and its "B"
// is our A, with the same transposition flags (LtLayoutPlan). Batches run as one matmul each
// (broadcast batch offsets need not be a constant stride).
//
// The plan functions are plain C++ (testable without a GPU); CublasLtRunner needs a device.
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "CudaOpSettings.h"
#include "core/DType.h"
#include "core/Result.h"

namespace faultline::cuda {

// One column-major matrix operand as cuBLASLt sees it.
struct LtMatrix {
    bool transpose = false;               // op(X) = X^T
    uint64_t rows = 0, cols = 0, ld = 0;  // the stored matrix (before op), column-major
};

struct LtLayoutPlan {
    LtMatrix a, b, d;              // cuBLASLt's A (= our B), B (= our A), C/D
    uint64_t m = 0, n = 0, k = 0;  // cuBLASLt's problem: D (m x n) = op(A) (m x k) op(B) (k x n)
};

// The plan for row-major D [m, n] = op(A) op(B), A [m, k] ([k, m] with transA), B [k, n]
// ([n, k] with transB). Leading dimensions are at least 1.
LtLayoutPlan ltLayoutPlan(int64_t m, int64_t n, int64_t k, bool transA, bool transB);

struct LtTypes {
    cudaDataType_t ab = CUDA_R_32F, cd = CUDA_R_32F;
};

// The cuBLASLt data types for inputs of `in` and output `out`: float32 -> float32;
// bfloat16 -> bfloat16 or float32; float16 -> float16 or float32. Anything else is an error
// naming the pair.
Result<LtTypes> ltTypes(DType in, DType out);

// The largest power of two <= 256 dividing every address (cuBLASLt's alignment preferences).
uint32_t ltAlignment(std::span<const uintptr_t> addresses);

struct LtGemm {
    int64_t batch = 1, m = 0, n = 0, k = 0;
    bool transA = false, transB = false;
    DType in = DType::Float32, out = DType::Float32;
    const void* a = nullptr;  // device, `in` elements
    const void* b = nullptr;
    std::vector<int64_t> aOffsets, bOffsets;  // per batch, in elements
    const void* c = nullptr;          // device, `out` elements, batch x m x n (already broadcast); nullable
    float alpha = 1.0f, beta = 0.0f;  // beta is used only with c
    void* d = nullptr;                // device, `out` elements, batch x m x n
};

// The cuBLASLt handle and the workspace of one stream; lives on the device's thread.
class CublasLtRunner {
public:
    explicit CublasLtRunner(int device);
    ~CublasLtRunner();
    CublasLtRunner(const CublasLtRunner&) = delete;
    CublasLtRunner& operator=(const CublasLtRunner&) = delete;

    // Enqueues the matmuls on `stream` (the workspace is this runner's; use one runner per
    // stream). Errors name the device and the cuBLASLt status; a CUDA error is returned as its
    // code in `cudaCode` (for the sticky-error check) besides the message.
    Status run(const LtGemm& g, const CudaOpSettings& settings, cudaStream_t stream, int* cudaCode);

private:
    struct State;
    std::unique_ptr<State> m_state;
};

}  // namespace faultline::cuda
