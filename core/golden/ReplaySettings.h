#pragma once
// What the golden model and the simulated devices read of how a target replays an op: the
// replay-setting attributes of trace/TraceOps.h (impl, library, tf32, math_mode, compute_type,
// grid, ...), which kernels/CudaOpSettings.h reads in full for cuda targets. Not parameters of the
// computation: they decide how operands are rounded (the bound) and which SM computes which tile.
#include <cstdint>
#include <string_view>

#include "../Result.h"
#include "GoldenSupport.h"

namespace faultline::golden {

// A boolean op parameter or setting (1, 1.0, "1", "true"), false when absent or unreadable.
bool flag(const OpParams& params, const char* name);

// How a float32 GEMM's operands are rounded: not at all, to TF32 (tf32=1, math_mode=tf32,
// compute_type=32F_FAST_TF32), or to float16/bfloat16 (32F_FAST_16F, 32F_FAST_16BF). Case and
// cuBLAS's prefixes (CUBLAS_COMPUTE_, CUBLAS_..._MATH) are optional, as CudaOpSettings takes them.
enum class CublasOperands { Exact, Tf32, Fp16, Bf16 };
CublasOperands replayOperands(const OpParams& params);

// Whether the op runs through cuBLAS (impl or library = cublas | cublaslt).
bool replaysOnCublas(const OpParams& params);

// grid=N: the golden kernels launch at most N thread blocks, each computing tiles N apart
// (grid-stride), so tile t is computed by block t mod N: the same work placed on fewer SMs.
// 0 when absent; an error unless an integer in [1, kMaxReplayGrid].
inline constexpr int64_t kMaxReplayGrid = 65535;
Result<uint32_t> replayGrid(std::string_view op, const OpParams& params);

}  // namespace faultline::golden
