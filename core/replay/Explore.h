#pragma once
// `faultline explore TRACE --op N --targets T,... [--vary scale,block,dtype,placement]`: one op
// replayed around its recorded inputs, with the failure rate and its interval per condition and
// target, and the conditions under which each target's defect fired and those under which it
// never did. Conditions (built from the recorded inputs, InputCuts.h):
//   scale      every floating-point input times 2^e, e in kExploreScales: magnitude bands, named by
//              the largest finite |x| of the inputs (what a defect's trigger sees)
//   block      sub-blocks of each dimension (rows, cols, k, batch: InputCuts.h): its first half,
//              quarter, ... down to one index, and each of its four quarters
//   dtype      the floating-point inputs converted to fp32, bf16 and fp16 (gemm's out_dtype too),
//              and for a gemm with a cuda or sim target, fp32 with TF32 operands ("tf32": through
//              cuBLAS with tf32=1, judged with TF32's bound): FP32 cores against tensor cores
//   placement  the recorded inputs once more, and again with smaller grids (grid=N of
//              kExploreGrids: N thread blocks stride over the tiles, golden/ReplaySettings.h), so
//              the same tiles are computed on other SMs; on targets that record which SM computed
//              each output tile, the SMs whose tiles held the differing elements of every failed
//              run of every condition (vs_golden.sms): whether a defect stays on one SM while the
//              tiles move (bound to the SM) or moves with the tiles (bound to the data)
// Each condition is a one-op trace (OneOpTrace.h) measured through a campaign (RateProbe.h) for a
// fixed number of runs.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"
#include "RateProbe.h"
#include "TargetSpec.h"

namespace faultline {

inline constexpr int kExploreScales[] = {-8, -6, -4, -3, -2, -1, 0, 1, 2, 3, 4, 6, 8};
inline constexpr uint32_t kExploreGrids[] = {1, 2, 4, 8, 32};

struct ExploreOptions {
    std::string tracePath;
    size_t opIndex = 0;
    std::vector<TargetSpec> targets;
    std::vector<std::string> vary{"scale", "block", "dtype", "placement"};
    uint64_t runs = 40;  // per condition and target
    double confidence = 0.95;
    RateProbeSetup setup;  // scratchDir: "" makes (and removes) one
};

struct ExploreCondition {
    std::string vary;    // scale | block | dtype | placement
    std::string axis;    // scale: "scale"; block: the dimension (rows, cols, k, ...); dtype: "dtype"
    std::string label;   // "x2^-4", "k first 128", "rows quarter 2 of 4", "bf16"
    double maxAbs = 0;   // the largest finite |x| of the inputs
    uint64_t inner = 0;  // the inner dimension (gemm's k, else the last dimension of input 0)
    std::string dtype;   // of input 0
    uint64_t first = 0, size = 0;  // block: the indices kept [first, first + size)
    uint32_t grid = 0;             // placement: the grid=N the condition replays with (0: as recorded)
    bool recorded = false;         // the recorded inputs unchanged (scale 2^0)
};

struct ExploreCell {
    size_t condition = 0;
    std::string target;
    RateMeasure rate;
};

// What one target did under one kind of condition: where it fired and where it never did.
struct ExploreFinding {
    std::string target, vary, axis;
    std::vector<size_t> fired, never;  // condition indices
    std::vector<int32_t> sms;          // placement: the SMs failed runs differed in, ascending
    // scale: the band of largest |x| it fired in [low, high] (and the nearest quiet ones);
    // block: the sizes of the dimension it fired at [low, high]
    double low = 0, high = 0;
    std::string text;
};

struct ExploreReport {
    std::string trace, op, name;
    size_t opIndex = 0;
    uint64_t runs = 0;
    double confidence = 0.95;
    std::vector<std::string> targets, vary;
    std::vector<ExploreCondition> conditions;
    std::vector<ExploreCell> cells;  // condition order, then target order
    std::vector<ExploreFinding> findings;
    std::vector<std::string> warnings;
    bool cancelled = false;
    bool anyFailure() const;
};

// Errors: no op N, an unknown --vary kind, a target that cannot start, an unreadable trace.
Result<ExploreReport> exploreOp(const ExploreOptions& options);

nlohmann::json exploreJson(const ExploreReport& report);
std::string exploreText(const ExploreReport& report);

}  // namespace faultline
