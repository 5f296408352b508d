#pragma once
// How a bfloat16/float16 GEMM recorded from PyTorch's CPU kernels is judged, from what
// faultline_capture recorded on the op (docs/capture.md, "How captured ops are judged"):
//
//   torch_version    PyTorch's version ("1.13.0a0", "2.4.1+cpu")
//   torch_threads    torch.get_num_threads() at the call
//   mkldnn           1: torch.backends.mkldnn available and enabled
//   onednn_version   the oneDNN PyTorch was built with ("2.6.3")
//   cpu_capability   ATen's CPU capability ("AVX2", "AVX512", "DEFAULT")
//   cpu_flags        the CPU features that decide oneDNN's path, from /proc/cpuinfo (avx512bw
//                    avx512vl avx512dq avx512_bf16 amx_bf16 ...)
//   a_strides, b_strides
//                    the torch strides of the aten call's mat1 and mat2
//   aten             the aten call (aten::mm, aten::addmm, aten::bmm, aten::baddbmm)
//
// Three outcomes, strictest first:
//   Emulated            PyTorch 1.13 on a CPU and case the production order is verified for
//                       (Torch113CpuGemm.h): the reference is that order's result, bound 0;
//   FloatAccumulation   the kernel sums in float (oneDNN, ATen's dot kernel, PyTorch >= 2.1's
//                       fallback): the float-accumulation bound, plus oneDNN's flushed subnormals;
//   NarrowAccumulation  the kernel may round every partial sum to the narrow type (ATen's
//                       1.13/2.0 fallback, the small bmm kernel), or what decides it was not
//                       recorded (an older trace): k u_narrow of sum |a||b|, loose.
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "OpChecks.h"
#include "Torch113CpuGemm.h"

namespace faultline::golden {

struct CpuGemmJudgement {
    enum class Kind { Emulated, FloatAccumulation, NarrowAccumulation };
    Kind kind = Kind::NarrowAccumulation;
    std::string model;             // what the judgement allows, in words
    bool flushSubnormals = false;  // oneDNN may have run: DAZ/FTZ (absolute errors near 2^-126)
    // Emulated: the call and the plan runTorch113Gemm follows.
    Torch113Call call;
    Torch113Plan plan;
};

// `inputs` and `params` of a gemm op whose first input is bfloat16 or float16 and whose
// device_type is cpu.
CpuGemmJudgement judgeCpuGemm(GoldenInputs inputs, const OpParams& params);

// The production order's output of an Emulated judgement (bfloat16, the gemm's output shape).
Result<HostTensor> emulateCpuGemm(GoldenInputs inputs, const OpParams& params, const CpuGemmJudgement& j,
                                  int threads = 0);

}  // namespace faultline::golden
