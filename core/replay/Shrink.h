#pragma once
// `faultline shrink TRACE --op N --target T --out MIN.h5`: the minimal reproducer of one op's
// failure on one target. The original rate is measured first (the op on the trace, through
// replay's campaign: until `failuresWanted` failures or `maxRuns` runs); its Wilson interval at
// the confidence is what every candidate must reproduce. Then delta debugging on the op's inputs
// (InputCuts.h): each axis (rows, columns, k, batch) is cut to one of n contiguous chunks or to
// the rest without one chunk, n from 2 up to kMaxGranularity, as long as a cut still fails at a
// rate inside the original interval (each candidate, a one-op trace, is replayed until that is
// decided: RateProbe.h's insideIntervalRule); then parts of each floating-point input are set to
// zero the same way. The result holds only the op, and is measured once more as written.
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"
#include "RateProbe.h"
#include "TargetSpec.h"

namespace faultline {

struct ShrinkOptions {
    std::string tracePath, outPath;
    size_t opIndex = 0;
    TargetSpec target;
    double confidence = 0.95;
    std::chrono::milliseconds budget{0};  // the whole shrink's wall clock; 0: none
    uint64_t maxRuns = 2000;              // runs of the original at most
    uint64_t failuresWanted = 20;         // the original's runs stop at this many failures
    RateProbeSetup setup;                 // scratchDir: "" makes (and removes) one
};

// The chunks an axis or an input is cut into, at most.
inline constexpr uint64_t kMaxGranularity = 16;

struct ShrinkSide {
    std::vector<std::pair<std::string, std::vector<uint64_t>>> inputs;  // id and shape, in op order
    uint64_t elements = 0;                                              // each tensor once
    uint64_t zeroElements = 0;                                          // of those, +0 or -0
    RateMeasure rate;
};

// One accepted cut: "k 512 -> 128 (chunk 2 of 4)", with what the inputs hold after it.
struct ShrinkStep {
    std::string what;
    uint64_t elements = 0, runs = 0, failures = 0;
};

enum class ShrinkEnd { Done, Budget, Cancelled };

struct ShrinkReport {
    std::string trace, out, target, op, name;
    size_t opIndex = 0;
    double confidence = 0.95;
    bool reproduced = false;  // the original failed at all (else nothing was shrunk or written)
    ShrinkSide original, minimal;
    uint64_t candidates = 0;  // candidates replayed
    std::vector<ShrinkStep> steps;
    ShrinkEnd end = ShrinkEnd::Done;
    bool minimalReproduces = false;  // MIN.h5, replayed as written, failed inside the interval
    std::vector<std::string> warnings;
};

// Errors: no op N in the trace, a target that cannot start, an unreadable trace, an output that
// cannot be written (codes as replay's). An op that never failed is no error: reproduced false.
Result<ShrinkReport> shrinkOp(const ShrinkOptions& options);

nlohmann::json shrinkJson(const ShrinkReport& report);
std::string shrinkText(const ShrinkReport& report);

}  // namespace faultline
