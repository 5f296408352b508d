#pragma once
// When a simulated defect fires: the conditions real defects show (a magnitude band of the
// inputs, one SM, some inner dimensions, one dtype, a per-run rate), as parameters every
// corrupting `sim:` model takes (FaultModel.h). A defect with no trigger parameter fires on every
// run the model's own filters (op, name, k of n) allow. Decisions are seeded: the same seed, op
// and repetition fire or not the same way on every run of a campaign.
//
//   run_rate=P          a run fires with probability P, in [1e-7, 1]
//   mag_lo=X, mag_hi=Y  only when the largest finite |x| among the op's floating-point inputs is
//                       in [X, Y) (0 <= X < Y; either may be given alone)
//   only_sm=S           only elements in output tiles computed by virtual SM S (below sms=)
//   inner_lo=A, inner_hi=B  only when the op's inner dimension is in [A, B]: gemm's k (columns
//                       of op(A)), the last dimension of the first input for other ops
//   only_dtype=D        only when the op's first input has dtype D (fp32, bf16, fp16, float64, ...);
//                       tf32: float32 inputs whose GEMM runs on TF32 tensor cores (the replay's
//                       cuBLAS settings: tf32=1, ...), and fp32 then means float32 computed in
//                       FP32 (the CUDA cores), not TF32
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../DType.h"
#include "../HostTensor.h"
#include "../Result.h"
#include "../trace/Trace.h"
#include "TargetSpec.h"

namespace faultline {

// What a trigger looks at in one run: facts of the op's inputs, measured once per run.
struct TriggerInputs {
    double maxAbs = 0;   // largest finite |x| among the floating-point inputs (0: none)
    uint64_t inner = 0;  // the inner (reduction) dimension, 0 when unknown
    DType dtype = DType::Float32;
    bool tf32 = false;  // float32 GEMM operands rounded to TF32 (golden::replayOperands)
    bool hasInputs = false;
};

// Measures what triggers read from an op and its inputs (empty spans: hasInputs false).
TriggerInputs measureTriggerInputs(const TraceOp* op, std::span<const HostTensor> inputs);

struct FaultTrigger {
    double runRate = 1.0;
    std::optional<double> magLo, magHi;
    std::optional<uint32_t> onlySm;
    std::optional<uint64_t> innerLo, innerHi;
    std::optional<DType> onlyDType;
    std::optional<bool> onlyTf32;  // with onlyDType float32: TF32 operands (true) or FP32 (false)

    // Whether any condition is set (a trigger of none fires on every run).
    bool any() const { return runRate < 1.0 || onlySm || readsInputs(); }
    // Whether any condition reads the inputs (one that reads none needs no measuring).
    bool readsInputs() const { return magLo || magHi || innerLo || innerHi || onlyDType; }
    // Whether the defect fires in this run (rate, band, inner dimension, dtype; not the SM).
    bool fires(const TriggerInputs& in, uint64_t seed, uint64_t opIndex, uint32_t repetition) const;
    // "" without conditions, else "; fires only ...".
    std::string describe() const;
};

// Simulated ranks of `faultline collective` and `faultline sweep` corrupt what passes through
// them without triggers: they refuse a target that has one (kTriggerRefusal says why).
inline constexpr const char* kTriggerRefusal =
    "trigger parameters (run_rate, mag_lo, mag_hi, only_sm, inner_lo, inner_hi, only_dtype) apply to "
    "replay targets; simulated ranks do not read them";

// Reads the trigger parameters of a sim target and appends their names to `known`. Values out of
// range are errors naming the target, the parameter and the accepted range (ErrorCode::Usage).
Result<FaultTrigger> parseFaultTrigger(const TargetSpec& spec, std::vector<std::string>& known);

}  // namespace faultline
