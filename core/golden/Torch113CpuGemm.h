#pragma once
// PyTorch 1.13's CPU bfloat16 matrix products in their production order, bit for bit: which
// kernel an aten call reaches and that kernel's arithmetic, as written down (and checked against
// torch, 500/500 per seed) in docs/numerics/torch113-cpu-bf16-matmul.md, whose numpy reference
// is bench/numerics/emulate_torch113_bf16.py. This is a port of that reference, at the level
// faultline_capture records: one aten call (mm, addmm, bmm, baddbmm) with its operands' strides.
//
// The golden model computes one defined order (GoldenOrder.h) and bounds every legitimate other;
// this computes THE order one implementation ran, so its judgement is bitwise (bound 0). It
// claims that only where the doc verified the case on a CPU like the recorded one
// (Torch113Plan::exact); elsewhere the plan still names the kernel and whether it accumulates
// in float, which chooses the bound instead (RecordedNumerics).
#include <cstdint>
#include <string>
#include <vector>

namespace faultline::golden {

// What the kernel choice and its arithmetic depend on, as recorded for the call.
struct Torch113Environment {
    // mkldnn available and enabled, and mkldnn_bf16_device_check() (avx512bw, avx512vl, avx512dq):
    // large products go to oneDNN.
    bool onednn = false;
    // oneDNN's implementation is the verified one: oneDNN 2.6.3, brg:avx512_core_bf16 (the CPU has
    // avx512_bf16 and no AMX), no ISA limit.
    bool onednnVerified = false;
    // ATen's CPU capability ("AVX2", "AVX512", "DEFAULT"): whether the fallback dot kernel's
    // beta*c + alpha*sum is contracted to an FMA (verified: AVX2).
    std::string capability;
    int threads = 1;  // torch.get_num_threads() at the call (oneDNN's K split)
};

enum class Torch113Aten { Mm, Addmm, Bmm, Baddbmm };

// One aten call on logical operands A ([batch,] m x k) and B ([batch,] k x n).
struct Torch113Call {
    Torch113Aten aten = Torch113Aten::Mm;
    int64_t batch = 1, m = 0, n = 0, k = 0;  // batch = 1 for mm/addmm
    // torch strides of mat1 (A) and mat2 (B) as the call saw them, in elements: 2 for mm/addmm,
    // 3 for bmm/baddbmm.
    std::vector<int64_t> aStrides, bStrides;
    float alpha = 1.0f, beta = 0.0f;  // as torch passes them (float opmath)
    bool hasC = false;                // addmm/baddbmm: `self` is read (broadcast to the output)
};

enum class Torch113Kernel {
    Empty,          // nothing to multiply (m, n or k is 0): zeros, or beta * C
    FallbackDot,    // ATen gemm_transa_: float sum in k order, one rounding
    FallbackSeq,    // ATen gemm_notrans_/transb_/transab_: every product and partial sum in bf16
    OneDnnBrgemm,   // oneDNN brg:avx512_core_bf16: float accumulation in K blocks (vdpbf16ps)
    OneDnnGemmJit,  // oneDNN gemm:jit (an operand not densely packed)
    SmallBmm,       // baddbmm_cpu_kernel (k m n < 400): bf16 scalar arithmetic
};

struct Torch113Plan {
    Torch113Kernel kernel = Torch113Kernel::Empty;
    bool floatAccumulation = true;  // the kernel sums products in float (else bf16 throughout)
    bool exact = false;             // runTorch113Gemm reproduces it bit for bit
    std::string description;        // "oneDNN brgemm, K blocks of 512"
    std::string notExact;           // why not exact (empty when exact)
    // Kernel details for runTorch113Gemm.
    bool transC = false, transA = false, transB = false;  // addmm_impl_cpu_'s column-major flags
    bool srcTransposed = false;
    int64_t kBlock = 0, kGroups = 1;
};

// The kernel the call reaches under `env` and whether it is emulated exactly.
Torch113Plan planTorch113Gemm(const Torch113Call& call, const Torch113Environment& env);

// Runs the plan: a is batch x m x k, b batch x k x n (logical, row-major, bf16 values as float),
// c batch x m x n (C broadcast to the output; null when the call has none); writes batch x m x n
// bf16 values to out. Rows are spread over `threads` (0: all cores); the bits do not depend on it.
void runTorch113Gemm(const Torch113Call& call, const Torch113Plan& plan, const float* a, const float* b,
                     const float* c, float* out, int threads = 0);

}  // namespace faultline::golden
