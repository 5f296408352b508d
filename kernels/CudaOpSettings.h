#pragma once
// How a cuda target runs one op, read from the op's parameters (what a trace records about the
// production call). Plain C++: testable without a GPU.
//
//   impl (or library, its synonym as captures record it; both given must agree)
//       golden (default)  the golden kernels, bit-identical to the CPU golden model
//       cublas            gemm through cublasSgemm (inputs widened to float32)
//       cublaslt          gemm through cublasLtMatmul with the tensors' own data types (float32,
//                         bfloat16, float16 inputs; the output in out_dtype)
//       nccl              all_reduce through NCCL, one local GPU per rank (see NcclAllReduce.h)
//   tf32 = 0 (default) | 1       cublas/cublaslt: let FP32 GEMMs use TF32 tensor cores
//   math_mode                    cublas: default | pedantic | tf32 (default: tf32 with tf32=1,
//                                else pedantic)
//   compute_type                 cublaslt: 32F | 32F_PEDANTIC | 32F_FAST_TF32 | 32F_FAST_16F |
//                                32F_FAST_16BF (the CUBLAS_COMPUTE_ prefix and case are optional;
//                                default: 32F_FAST_TF32 with tf32=1, else 32F_PEDANTIC for float32
//                                inputs and 32F for narrow ones)
//   algo = N >= 0                cublaslt: the N-th entry of cublasLtMatmulAlgoGetHeuristic's list
//                                (default 0, the heuristic's first choice)
//   workspace = BYTES >= 0       cublaslt: the per-stream workspace (default 32 MiB)
//   grid = N in [1, 65535]       golden: at most N thread blocks, striding over the tiles (tile t
//                                on block t mod N: the same work on other SMs; ScopedGridCap)
// A setting that the chosen impl does not read is an error, so a replay never silently ignores
// what the trace says ran.
#include <cstdint>
#include <map>
#include <string>

#include "core/Result.h"
#include "core/trace/Trace.h"

namespace faultline::cuda {

enum class CudaImpl { Golden, Cublas, CublasLt, Nccl };

enum class CublasMathMode { Default, Pedantic, Tf32 };

// Mirrors cublasComputeType_t's FP32 variants (mapped to it in CublasLtGemm.cpp).
enum class LtComputeType { Auto, F32, F32Pedantic, F32FastTf32, F32Fast16F, F32Fast16BF };

inline constexpr uint64_t kDefaultLtWorkspace = uint64_t(32) << 20;

struct CudaOpSettings {
    CudaImpl impl = CudaImpl::Golden;
    bool tf32 = false;
    CublasMathMode mathMode = CublasMathMode::Pedantic;  // cublas
    LtComputeType computeType = LtComputeType::Auto;     // cublaslt; Auto: see resolveLtComputeType
    int64_t algo = 0;                                    // cublaslt
    uint64_t workspace = kDefaultLtWorkspace;            // cublaslt
    uint32_t grid = 0;                                   // golden: the most thread blocks (0: no cap)
};

// Errors read "op NAME: parameter impl=X is not golden, cublas, cublaslt or nccl" and the like.
Result<CudaOpSettings> parseCudaOpSettings(const std::string& op,
                                           const std::map<std::string, AttrValue>& params);

// The compute type a cublaslt gemm runs with: the setting, or (Auto) 32F_FAST_TF32 with tf32,
// 32F_PEDANTIC for float32 inputs, 32F for narrow inputs (whose kernels have no pedantic form).
LtComputeType resolveLtComputeType(const CudaOpSettings& s, bool float32Inputs);

// "32F_PEDANTIC" and so on (the names compute_type accepts).
const char* ltComputeTypeName(LtComputeType t);
const char* cudaImplName(CudaImpl impl);

}  // namespace faultline::cuda
